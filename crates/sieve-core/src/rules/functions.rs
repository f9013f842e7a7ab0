//! Every function a rule can call, in one place: its name, signature and
//! arguments and, for the windowed family, its warm-up and how its column is
//! computed.
//!
//! Adding a function over a series' history (an average, a running value)
//! touches this file only: its name in the one list
//! (`windowed_functions!`, which makes [`Windowed`] and [`Windowed::ALL`])
//! and its arm in [`Windowed::spec`], which says everything else about it
//! (whether the crossing scan may read it included). The compiler refuses
//! a name without an arm. A new bar-by-bar function is a variant of
//! [`Func`]; every `match` over [`Func`] is exhaustive, so the compiler then
//! names each place that must say what it does (the checker's result type,
//! the CPU evaluators and the WGSL generator).

use super::parse::BinOp;
use super::scalar::arith;
use crate::data::Bars;
use crate::indicators::calendar::{calendar, Calendar};
use crate::indicators::{average, channel, events, momentum, trend, volatility, volume};

/// The functions across a portfolio's instruments (`rules/cross.rs`),
/// which only `portfolio.weight` and `portfolio.rebalance` call.
pub const ACROSS: [&str; 3] = ["rank", "count", "total"];

/// A function a rule can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    /// Over a series' history: computed once per setting, as a whole column.
    Windowed(Windowed),
    Abs,
    Min,
    Max,
    Clamp,
    If,
    CrossAbove,
    CrossBelow,
}

/// Declares [`Windowed`] and [`Windowed::ALL`] from one list: a windowed
/// function is named once, here, and described once, by its arm in
/// [`Windowed::spec`] (which the compiler requires).
macro_rules! windowed_functions {
    ($($variant:ident),* $(,)?) => {
        /// The functions over a series' history (and a window of `n` bars).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Windowed {
            $($variant),*
        }

        impl Windowed {
            /// Every windowed function, in the order errors list them.
            pub const ALL: &'static [Windowed] = &[$(Windowed::$variant),*];
        }
    };
}

windowed_functions![
    Sma,
    Ema,
    Wma,
    Rma,
    Sum,
    Cumsum,
    Rsi,
    Atr,
    Cci,
    Willr,
    PlusDi,
    MinusDi,
    Adx,
    Obv,
    Hour,
    Minute,
    Weekday,
    Day,
    Month,
    NewDay,
    Highest,
    Lowest,
    Stdev,
    Roc,
    Shift,
    Barssince,
    Valuewhen,
    SumSince,
    HighestSince,
    LowestSince,
    Mfi,
    StochK,
    StochD,
    Sar,
    Supertrend,
    SupertrendDir,
];

/// What an argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Num,
    Bool,
    /// A number that does not change from bar to bar (a setting such as
    /// `sar`'s step): numbers, parameters and arithmetic of those.
    Scalar,
    /// A whole-number window, at least this much.
    Window(i64),
    /// Either type, the same as the other `Same` arguments.
    Same,
}

/// Everything about one windowed function.
pub struct WindowedSpec {
    pub name: &'static str,
    pub signature: &'static str,
    /// The series it reads, its first arguments: [`Arg::Num`],
    /// [`Arg::Bool`] (read as 1 / 0) or [`Arg::Same`] (either; a true/false
    /// series gives a true/false result: `shift(c, n)`).
    pub series: &'static [Arg],
    /// Then its settings: whole-number windows ([`Arg::Window`]) and
    /// numbers that do not change from bar to bar ([`Arg::Scalar`]).
    pub settings: &'static [Arg],
    /// Reads the volume column (the data must have one).
    pub reads_volume: bool,
    /// Of an input defined on every bar (a price), defined on every bar
    /// from its warm-up on: a crossing of two such (`cross_above(sma(close,
    /// fast), ema(close, slow))`) takes the built-in crosses' scan, whose
    /// memory of the last side outlives an undefined bar (the rules' is
    /// reset there; without undefined bars the two agree).
    pub gapless: bool,
    /// Bars from the inputs' first defined bar to the output's (from the
    /// first bar when it reads no series), for the settings (windows as
    /// whole numbers, other settings 0).
    pub lag: fn(&[usize]) -> usize,
    pub compute: Compute,
}

/// A column of several series (in order) and settings.
pub type ManyFn = fn(xs: &[&[f64]], settings: &[f64], bars: &Bars) -> Vec<f64>;

/// How a windowed function's column is computed. Undefined values are NaN.
#[derive(Clone, Copy)]
pub enum Compute {
    /// At most one series and one window: `x` is the series (empty when it
    /// reads none), `n` the window (0 without one).
    Window(fn(x: &[f64], n: usize, bars: &Bars) -> Vec<f64>),
    /// Any series and settings: the series in order, then the settings
    /// (windows checked to be whole numbers of at least their least).
    Many(ManyFn),
}

/// One window of at least 0, 1 or 2 bars.
const W0: &[Arg] = &[Arg::Window(0)];
const W1: &[Arg] = &[Arg::Window(1)];
const W2: &[Arg] = &[Arg::Window(2)];
/// One number series.
const X: &[Arg] = &[Arg::Num];

/// A function of a series `x` (its first argument) and a window.
fn of_series(
    name: &'static str,
    signature: &'static str,
    window: &'static [Arg],
    lag: fn(&[usize]) -> usize,
    compute: fn(&[f64], usize, &Bars) -> Vec<f64>,
) -> WindowedSpec {
    WindowedSpec {
        name,
        signature,
        series: X,
        settings: window,
        reads_volume: false,
        gapless: false,
        lag,
        compute: Compute::Window(compute),
    }
}

/// A function of the bars' prices and a window (its only argument).
fn of_bars(
    name: &'static str,
    signature: &'static str,
    window: &'static [Arg],
    lag: fn(&[usize]) -> usize,
    compute: fn(&[f64], usize, &Bars) -> Vec<f64>,
) -> WindowedSpec {
    WindowedSpec {
        series: &[],
        ..of_series(name, signature, window, lag, compute)
    }
}

/// A function of the bars' prices and several settings.
fn of_bars_with(
    name: &'static str,
    signature: &'static str,
    settings: &'static [Arg],
    lag: fn(&[usize]) -> usize,
    compute: ManyFn,
) -> WindowedSpec {
    WindowedSpec {
        name,
        signature,
        series: &[],
        settings,
        reads_volume: false,
        gapless: false,
        lag,
        compute: Compute::Many(compute),
    }
}

/// A function of a condition `c` and a series `x` since `c` was last true.
fn since(name: &'static str, signature: &'static str, compute: ManyFn) -> WindowedSpec {
    WindowedSpec {
        name,
        signature,
        series: &[Arg::Bool, Arg::Num],
        settings: &[],
        reads_volume: false,
        gapless: false,
        lag: |_| 0,
        compute: Compute::Many(compute),
    }
}

/// A calendar value of each bar's time: no input, no window, from bar 0.
fn calendar_spec(name: &'static str, signature: &'static str, what: Calendar) -> WindowedSpec {
    // One function per value (a `fn`, not a closure that captures).
    let compute: fn(&[f64], usize, &Bars) -> Vec<f64> = match what {
        Calendar::Hour => |_, _, b| calendar(&b.time, Calendar::Hour, b.timezone),
        Calendar::Minute => |_, _, b| calendar(&b.time, Calendar::Minute, b.timezone),
        Calendar::Weekday => |_, _, b| calendar(&b.time, Calendar::Weekday, b.timezone),
        Calendar::Day => |_, _, b| calendar(&b.time, Calendar::Day, b.timezone),
        Calendar::Month => |_, _, b| calendar(&b.time, Calendar::Month, b.timezone),
        Calendar::NewDay => |_, _, b| calendar(&b.time, Calendar::NewDay, b.timezone),
    };
    of_bars(name, signature, &[], |_| 0, compute)
}

/// An average or extreme of `n` values: defined from the n-th.
fn n_minus_one(n: &[usize]) -> usize {
    n[0].saturating_sub(1)
}

/// A difference over `n` bars (or RSI's `n` changes): defined `n` bars on.
fn n_bars(n: &[usize]) -> usize {
    n[0]
}

/// Applies `kernel` to each maximal run of defined values (the whole column
/// when there is no gap: the built-ins' exact arithmetic).
pub(super) fn by_runs(x: &[f64], kernel: impl Fn(&[f64]) -> Vec<f64>) -> Vec<f64> {
    if !x.iter().any(|v| v.is_nan()) {
        return kernel(x);
    }
    let mut out = vec![f64::NAN; x.len()];
    let mut t = 0;
    while t < x.len() {
        if x[t].is_nan() {
            t += 1;
            continue;
        }
        let end = x[t..]
            .iter()
            .position(|v| v.is_nan())
            .map_or(x.len(), |k| t + k);
        out[t..end].copy_from_slice(&kernel(&x[t..end]));
        t = end;
    }
    out
}

impl WindowedSpec {
    /// The same, [`WindowedSpec::gapless`].
    fn gapless(self) -> WindowedSpec {
        WindowedSpec {
            gapless: true,
            ..self
        }
    }
}

impl Windowed {
    pub fn spec(self) -> WindowedSpec {
        match self {
            Windowed::Sma => of_series("sma", "sma(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::sma(r, n))
            })
            .gapless(),
            Windowed::Ema => of_series("ema", "ema(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::ema(r, n))
            })
            .gapless(),
            Windowed::Wma => of_series("wma", "wma(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::wma(r, n))
            })
            .gapless(),
            Windowed::Rma => of_series("rma", "rma(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::rma(r, n))
            })
            .gapless(),
            Windowed::Sum => of_series("sum", "sum(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::sum(r, n))
            }),
            Windowed::Cumsum => of_series(
                "cumsum",
                "cumsum(x)",
                &[],
                |_| 0,
                |x, _, _| by_runs(x, average::cumsum),
            ),
            Windowed::Rsi => of_series("rsi", "rsi(x, n)", W1, n_bars, |x, n, _| {
                by_runs(x, |r| momentum::rsi(r, n))
            }),
            Windowed::Atr => of_bars("atr", "atr(n)", W1, n_bars, |_, n, bars| {
                volatility::atr(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::Cci => of_bars("cci", "cci(n)", W1, n_minus_one, |_, n, bars| {
                momentum::cci(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::Willr => of_bars("willr", "willr(n)", W1, n_minus_one, |_, n, bars| {
                momentum::willr(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::PlusDi => of_bars("plus_di", "plus_di(n)", W2, n_bars, |_, n, bars| {
                momentum::plus_di(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::MinusDi => of_bars("minus_di", "minus_di(n)", W2, n_bars, |_, n, bars| {
                momentum::minus_di(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::Adx => of_bars(
                "adx",
                "adx(n)",
                W2,
                |n| (2 * n[0]).saturating_sub(1),
                |_, n, bars| momentum::adx(&bars.high, &bars.low, &bars.close, n),
            ),
            Windowed::Obv => WindowedSpec {
                reads_volume: true,
                gapless: false,
                ..of_bars(
                    "obv",
                    "obv()",
                    &[],
                    |_| 0,
                    |_, _, bars| match &bars.volume {
                        Some(volume) => volume::obv(&bars.close, volume),
                        None => vec![f64::NAN; bars.len()],
                    },
                )
            },
            Windowed::Hour => calendar_spec("hour", "hour()", Calendar::Hour),
            Windowed::Minute => calendar_spec("minute", "minute()", Calendar::Minute),
            Windowed::Weekday => calendar_spec("weekday", "weekday()", Calendar::Weekday),
            Windowed::Day => calendar_spec("day", "day()", Calendar::Day),
            Windowed::Month => calendar_spec("month", "month()", Calendar::Month),
            Windowed::NewDay => calendar_spec("new_day", "new_day()", Calendar::NewDay),
            Windowed::Highest => {
                of_series("highest", "highest(x, n)", W1, n_minus_one, |x, n, _| {
                    by_runs(x, |r| channel::highest(r, n))
                })
                .gapless()
            }
            Windowed::Lowest => of_series("lowest", "lowest(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| channel::lowest(r, n))
            })
            .gapless(),
            Windowed::Stdev => of_series("stdev", "stdev(x, n)", W1, n_minus_one, |x, n, _| {
                by_runs(x, |r| volatility::stdev(r, n))
            }),
            Windowed::Roc => of_series("roc", "roc(x, n)", W0, n_bars, |x, n, _| {
                let mut out = vec![f64::NAN; x.len()];
                for t in n..x.len() {
                    out[t] = arith(BinOp::Div, x[t], x[t - n]) - 1.0;
                }
                out
            }),
            Windowed::Shift => WindowedSpec {
                series: &[Arg::Same],
                ..of_series("shift", "shift(x, n)", W0, n_bars, |x, n, _| {
                    let len = x.len();
                    let mut out = vec![f64::NAN; len];
                    if n < len {
                        out[n..].copy_from_slice(&x[..len - n]);
                    }
                    out
                })
            },
            Windowed::Barssince => WindowedSpec {
                series: &[Arg::Bool],
                ..since("barssince", "barssince(c)", |xs, _, _| {
                    events::barssince(xs[0])
                })
            },
            Windowed::Valuewhen => since("valuewhen", "valuewhen(c, x)", |xs, _, _| {
                events::valuewhen(xs[0], xs[1])
            }),
            Windowed::SumSince => since("sum_since", "sum_since(c, x)", |xs, _, _| {
                events::sum_since(xs[0], xs[1])
            }),
            Windowed::HighestSince => since("highest_since", "highest_since(c, x)", |xs, _, _| {
                events::highest_since(xs[0], xs[1])
            }),
            Windowed::LowestSince => since("lowest_since", "lowest_since(c, x)", |xs, _, _| {
                events::lowest_since(xs[0], xs[1])
            }),
            Windowed::Mfi => WindowedSpec {
                reads_volume: true,
                gapless: false,
                ..of_bars("mfi", "mfi(n)", W1, n_bars, |_, n, bars| {
                    match &bars.volume {
                        Some(v) => momentum::mfi(&bars.high, &bars.low, &bars.close, v, n),
                        None => vec![f64::NAN; bars.len()],
                    }
                })
            },
            Windowed::StochK => of_bars_with(
                "stoch_k",
                "stoch_k(n, smooth)",
                &[Arg::Window(1), Arg::Window(1)],
                |w| w[0] + w[1] - 2,
                |_, s, b| {
                    momentum::stoch(&b.high, &b.low, &b.close, s[0] as usize, s[1] as usize, 1).0
                },
            ),
            Windowed::StochD => of_bars_with(
                "stoch_d",
                "stoch_d(n, smooth, d)",
                &[Arg::Window(1), Arg::Window(1), Arg::Window(1)],
                |w| w[0] + w[1] + w[2] - 3,
                |_, s, b| {
                    let (n, smooth, d) = (s[0] as usize, s[1] as usize, s[2] as usize);
                    momentum::stoch(&b.high, &b.low, &b.close, n, smooth, d).1
                },
            ),
            Windowed::Sar => of_bars_with(
                "sar",
                "sar(step, max)",
                &[Arg::Scalar, Arg::Scalar],
                |_| 1,
                |_, s, b| trend::sar(&b.high, &b.low, s[0], s[1]),
            ),
            Windowed::Supertrend => of_bars_with(
                "supertrend",
                "supertrend(n, mult)",
                &[Arg::Window(1), Arg::Scalar],
                n_bars,
                |_, s, b| trend::supertrend(&b.high, &b.low, &b.close, s[0] as usize, s[1]).0,
            ),
            Windowed::SupertrendDir => of_bars_with(
                "supertrend_dir",
                "supertrend_dir(n, mult)",
                &[Arg::Window(1), Arg::Scalar],
                n_bars,
                |_, s, b| trend::supertrend(&b.high, &b.low, &b.close, s[0] as usize, s[1]).1,
            ),
        }
    }

    /// The calendar value this function gives, if it is one (`hour` …):
    /// those are also values a rule names without parentheses.
    pub fn calendar(self) -> Option<Calendar> {
        match self {
            Windowed::Hour => Some(Calendar::Hour),
            Windowed::Minute => Some(Calendar::Minute),
            Windowed::Weekday => Some(Calendar::Weekday),
            Windowed::Day => Some(Calendar::Day),
            Windowed::Month => Some(Calendar::Month),
            Windowed::NewDay => Some(Calendar::NewDay),
            _ => None,
        }
    }

    /// The index of the window among the call's arguments, when its only
    /// setting is one window (what tables are shared across).
    pub fn window_arg(self) -> Option<usize> {
        let spec = self.spec();
        matches!(spec.settings, [Arg::Window(_)]).then_some(spec.series.len())
    }

    /// The column of this function of the series `xs` at the `settings`
    /// (values: a window that is not a whole number at least the function's
    /// least, which a parameter expression like `slow - fast` can give, or
    /// a setting that is not finite leaves the column undefined).
    pub fn column(self, xs: &[&[f64]], settings: &[f64], bars: &Bars) -> Vec<f64> {
        let spec = self.spec();
        let valid = spec
            .settings
            .iter()
            .zip(settings)
            .all(|(arg, &v)| match arg {
                Arg::Window(min) => v >= *min as f64 && v <= 1e9 && v.fract() == 0.0,
                _ => v.is_finite(),
            });
        if !valid {
            return vec![f64::NAN; bars.len()];
        }
        match spec.compute {
            Compute::Window(f) => {
                let n = settings.first().map_or(0, |&v| v as usize);
                f(xs.first().copied().unwrap_or(&[]), n, bars)
            }
            Compute::Many(f) => f(xs, settings, bars),
        }
    }
}

impl Func {
    /// Every function, by name (windowed first).
    pub fn all() -> impl Iterator<Item = Func> {
        Windowed::ALL.iter().copied().map(Func::Windowed).chain([
            Func::Abs,
            Func::Min,
            Func::Max,
            Func::Clamp,
            Func::If,
            Func::CrossAbove,
            Func::CrossBelow,
        ])
    }

    /// Every function by group, for errors: "averages: sma, ema, …;
    /// oscillators: …".
    pub fn listing() -> String {
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for f in Func::all() {
            let group = f.group();
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, names)) => names.push(f.name()),
                None => groups.push((group, vec![f.name()])),
            }
        }
        groups
            .iter()
            .map(|(g, names)| format!("{g}: {}", names.join(", ")))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The family a function is listed in.
    pub fn group(self) -> &'static str {
        match self {
            Func::Windowed(w) => match w {
                Windowed::Sma
                | Windowed::Ema
                | Windowed::Wma
                | Windowed::Rma
                | Windowed::Sum
                | Windowed::Cumsum => "averages and sums",
                Windowed::Rsi
                | Windowed::Cci
                | Windowed::Willr
                | Windowed::PlusDi
                | Windowed::MinusDi
                | Windowed::Adx
                | Windowed::Mfi
                | Windowed::StochK
                | Windowed::StochD => "oscillators",
                Windowed::Atr | Windowed::Stdev => "volatility",
                Windowed::Highest | Windowed::Lowest => "channels",
                Windowed::Obv => "volume",
                Windowed::Hour
                | Windowed::Minute
                | Windowed::Weekday
                | Windowed::Day
                | Windowed::Month
                | Windowed::NewDay => "time (also as values: hour, new_day, …)",
                Windowed::Roc | Windowed::Shift => "history",
                Windowed::Barssince
                | Windowed::Valuewhen
                | Windowed::SumSince
                | Windowed::HighestSince
                | Windowed::LowestSince => "since an event",
                Windowed::Sar | Windowed::Supertrend | Windowed::SupertrendDir => "trend stops",
            },
            Func::CrossAbove | Func::CrossBelow => "crossings",
            Func::Abs | Func::Min | Func::Max | Func::Clamp | Func::If => "arithmetic",
        }
    }

    /// The function called `name`.
    pub fn named(name: &str) -> Option<Func> {
        Func::all().find(|f| f.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Func::Windowed(w) => w.spec().name,
            Func::Abs => "abs",
            Func::Min => "min",
            Func::Max => "max",
            Func::Clamp => "clamp",
            Func::If => "if",
            Func::CrossAbove => "cross_above",
            Func::CrossBelow => "cross_below",
        }
    }

    pub fn signature(self) -> &'static str {
        match self {
            Func::Windowed(w) => w.spec().signature,
            Func::Abs => "abs(x)",
            Func::Min => "min(a, b)",
            Func::Max => "max(a, b)",
            Func::Clamp => "clamp(x, lo, hi)",
            Func::If => "if(condition, a, b)",
            Func::CrossAbove => "cross_above(a, b)",
            Func::CrossBelow => "cross_below(a, b)",
        }
    }

    pub fn args(self) -> Vec<Arg> {
        use Arg::*;
        match self {
            Func::Windowed(w) => {
                let spec = w.spec();
                spec.series.iter().chain(spec.settings).copied().collect()
            }
            Func::Abs => vec![Num],
            Func::Min | Func::Max | Func::CrossAbove | Func::CrossBelow => vec![Num, Num],
            Func::Clamp => vec![Num, Num, Num],
            Func::If => vec![Bool, Same, Same],
        }
    }

    /// Functions over a series' history: computed on whole columns.
    pub fn is_windowed(self) -> bool {
        matches!(self, Func::Windowed(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the crossing scan relies on: a `gapless` function of a price,
    /// once defined, stays defined on every later bar.
    #[test]
    fn gapless_functions_of_prices_have_no_gaps() {
        let bars = crate::data::synth(600, 3);
        let gapless: Vec<Windowed> = Windowed::ALL
            .iter()
            .copied()
            .filter(|w| w.spec().gapless)
            .collect();
        assert!(gapless.len() >= 2);
        for w in gapless {
            let spec = w.spec();
            assert_eq!((spec.series.len(), spec.settings.len()), (1, 1), "{w:?}");
            for n in [1.0, 2.0, 7.0, 50.0] {
                let column = w.column(&[&bars.close], &[n], &bars);
                let first = column.iter().position(|v| !v.is_nan()).unwrap();
                assert!(
                    column[first..].iter().all(|v| !v.is_nan()),
                    "{w:?}({n}) has an undefined value after its first defined one"
                );
            }
        }
    }

    /// Names are unique, and each windowed function's signature starts
    /// with its name and has one argument per [`Func::args`].
    #[test]
    fn names_and_signatures_agree() {
        let names: Vec<&str> = Func::all().map(Func::name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for f in Func::all() {
            let sig = f.signature();
            assert!(sig.starts_with(&format!("{}(", f.name())), "{sig}");
            let commas = sig.matches(',').count();
            let empty = sig.ends_with("()");
            assert_eq!(if empty { 0 } else { commas + 1 }, f.args().len(), "{sig}");
            assert_eq!(Func::named(f.name()), Some(f));
            if let Func::Windowed(w) = f {
                // The warm-up reads at most three settings without allocating.
                assert!(w.spec().settings.len() <= 3, "{sig}");
            }
        }
    }
}
