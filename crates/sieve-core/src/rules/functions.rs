//! Every function a rule can call, in one place: its name, signature and
//! arguments and, for the windowed family, its warm-up and how its column is
//! computed.
//!
//! Adding a function over a series' history (an average, a running value)
//! touches this file only: a variant of [`Windowed`], its line in
//! [`Windowed::ALL`] and its arm in [`Windowed::spec`]. The compiler refuses
//! a variant without an arm. A new bar-by-bar function is a variant of
//! [`Func`]; every `match` over [`Func`] is exhaustive, so the compiler then
//! names each place that must say what it does (the checker's result type,
//! the CPU evaluators and the WGSL generator).

use super::eval::{arith, by_runs};
use super::parse::BinOp;
use crate::data::Bars;
use crate::indicators::calendar::{calendar, Calendar};
use crate::indicators::{average, channel, momentum, volatility, volume};

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

/// The functions over a series' history (and a window of `n` bars).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Windowed {
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
}

/// What an argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Num,
    Bool,
    /// A whole-number window, at least this much.
    Window(i64),
    /// Either type, the same as the other `Same` arguments.
    Same,
}

/// Everything about one windowed function.
pub struct WindowedSpec {
    pub name: &'static str,
    pub signature: &'static str,
    /// Reads a series `x` (its first argument) before its window `n`;
    /// `false`: the window only, from the bars (`atr(n)`).
    pub reads_series: bool,
    /// The least window (0: `shift(x, 0)` is `x`); `None`: no window
    /// (`obv()`).
    pub min_window: Option<i64>,
    /// Reads the volume column (the data must have one).
    pub reads_volume: bool,
    /// Bars from the input's first defined bar to the output's, for a
    /// window of `n` (from the first bar when it reads no series).
    pub lag: fn(usize) -> usize,
    /// The column for a valid window `n`: `x` is the input series (empty
    /// when it reads none). Undefined values are NaN.
    pub compute: fn(x: &[f64], n: usize, bars: &Bars) -> Vec<f64>,
}

/// A function of a series `x` (its first argument) and a window.
fn of_series(
    name: &'static str,
    signature: &'static str,
    min_window: i64,
    lag: fn(usize) -> usize,
    compute: fn(&[f64], usize, &Bars) -> Vec<f64>,
) -> WindowedSpec {
    WindowedSpec {
        name,
        signature,
        reads_series: true,
        min_window: Some(min_window),
        reads_volume: false,
        lag,
        compute,
    }
}

/// A function of the bars' prices and a window (its only argument).
fn of_bars(
    name: &'static str,
    signature: &'static str,
    min_window: i64,
    lag: fn(usize) -> usize,
    compute: fn(&[f64], usize, &Bars) -> Vec<f64>,
) -> WindowedSpec {
    WindowedSpec {
        reads_series: false,
        ..of_series(name, signature, min_window, lag, compute)
    }
}

/// A calendar value of each bar's time: no input, no window, from bar 0.
fn calendar_spec(name: &'static str, signature: &'static str, what: Calendar) -> WindowedSpec {
    // One function per value (a `fn`, not a closure that captures).
    let compute: fn(&[f64], usize, &Bars) -> Vec<f64> = match what {
        Calendar::Hour => |_, _, bars| calendar(&bars.time, Calendar::Hour),
        Calendar::Minute => |_, _, bars| calendar(&bars.time, Calendar::Minute),
        Calendar::Weekday => |_, _, bars| calendar(&bars.time, Calendar::Weekday),
        Calendar::Day => |_, _, bars| calendar(&bars.time, Calendar::Day),
        Calendar::Month => |_, _, bars| calendar(&bars.time, Calendar::Month),
        Calendar::NewDay => |_, _, bars| calendar(&bars.time, Calendar::NewDay),
    };
    WindowedSpec {
        name,
        signature,
        reads_series: false,
        min_window: None,
        reads_volume: false,
        lag: |_| 0,
        compute,
    }
}

/// An average or extreme of `n` values: defined from the n-th.
fn n_minus_one(n: usize) -> usize {
    n.saturating_sub(1)
}

/// A difference over `n` bars (or RSI's `n` changes): defined `n` bars on.
fn n_bars(n: usize) -> usize {
    n
}

impl Windowed {
    /// Every windowed function, in the order errors list them.
    pub const ALL: [Windowed; 25] = [
        Windowed::Sma,
        Windowed::Ema,
        Windowed::Wma,
        Windowed::Rma,
        Windowed::Sum,
        Windowed::Cumsum,
        Windowed::Rsi,
        Windowed::Atr,
        Windowed::Cci,
        Windowed::Willr,
        Windowed::PlusDi,
        Windowed::MinusDi,
        Windowed::Adx,
        Windowed::Obv,
        Windowed::Hour,
        Windowed::Minute,
        Windowed::Weekday,
        Windowed::Day,
        Windowed::Month,
        Windowed::NewDay,
        Windowed::Highest,
        Windowed::Lowest,
        Windowed::Stdev,
        Windowed::Roc,
        Windowed::Shift,
    ];

    pub fn spec(self) -> WindowedSpec {
        match self {
            Windowed::Sma => of_series("sma", "sma(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::sma(r, n))
            }),
            Windowed::Ema => of_series("ema", "ema(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::ema(r, n))
            }),
            Windowed::Wma => of_series("wma", "wma(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::wma(r, n))
            }),
            Windowed::Rma => of_series("rma", "rma(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::rma(r, n))
            }),
            Windowed::Sum => of_series("sum", "sum(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| average::sum(r, n))
            }),
            Windowed::Cumsum => WindowedSpec {
                min_window: None,
                ..of_series(
                    "cumsum",
                    "cumsum(x)",
                    0,
                    |_| 0,
                    |x, _, _| by_runs(x, average::cumsum),
                )
            },
            Windowed::Rsi => of_series("rsi", "rsi(x, n)", 1, n_bars, |x, n, _| {
                by_runs(x, |r| momentum::rsi(r, n))
            }),
            Windowed::Atr => of_bars("atr", "atr(n)", 1, n_bars, |_, n, bars| {
                volatility::atr(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::Cci => of_bars("cci", "cci(n)", 1, n_minus_one, |_, n, bars| {
                momentum::cci(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::Willr => of_bars("willr", "willr(n)", 1, n_minus_one, |_, n, bars| {
                momentum::willr(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::PlusDi => of_bars("plus_di", "plus_di(n)", 2, n_bars, |_, n, bars| {
                momentum::plus_di(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::MinusDi => of_bars("minus_di", "minus_di(n)", 2, n_bars, |_, n, bars| {
                momentum::minus_di(&bars.high, &bars.low, &bars.close, n)
            }),
            Windowed::Adx => of_bars(
                "adx",
                "adx(n)",
                2,
                |n| (2 * n).saturating_sub(1),
                |_, n, bars| momentum::adx(&bars.high, &bars.low, &bars.close, n),
            ),
            Windowed::Obv => WindowedSpec {
                name: "obv",
                signature: "obv()",
                reads_series: false,
                min_window: None,
                reads_volume: true,
                lag: |_| 0,
                compute: |_, _, bars| match &bars.volume {
                    Some(volume) => volume::obv(&bars.close, volume),
                    None => vec![f64::NAN; bars.len()],
                },
            },
            Windowed::Hour => calendar_spec("hour", "hour()", Calendar::Hour),
            Windowed::Minute => calendar_spec("minute", "minute()", Calendar::Minute),
            Windowed::Weekday => calendar_spec("weekday", "weekday()", Calendar::Weekday),
            Windowed::Day => calendar_spec("day", "day()", Calendar::Day),
            Windowed::Month => calendar_spec("month", "month()", Calendar::Month),
            Windowed::NewDay => calendar_spec("new_day", "new_day()", Calendar::NewDay),
            Windowed::Highest => {
                of_series("highest", "highest(x, n)", 1, n_minus_one, |x, n, _| {
                    by_runs(x, |r| channel::highest(r, n))
                })
            }
            Windowed::Lowest => of_series("lowest", "lowest(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| channel::lowest(r, n))
            }),
            Windowed::Stdev => of_series("stdev", "stdev(x, n)", 1, n_minus_one, |x, n, _| {
                by_runs(x, |r| volatility::stdev(r, n))
            }),
            Windowed::Roc => of_series("roc", "roc(x, n)", 0, n_bars, |x, n, _| {
                let mut out = vec![f64::NAN; x.len()];
                for t in n..x.len() {
                    out[t] = arith(BinOp::Div, x[t], x[t - n]) - 1.0;
                }
                out
            }),
            Windowed::Shift => of_series("shift", "shift(x, n)", 0, n_bars, |x, n, _| {
                let len = x.len();
                let mut out = vec![f64::NAN; len];
                if n < len {
                    out[n..].copy_from_slice(&x[..len - n]);
                }
                out
            }),
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

    /// The index of the window among the call's arguments (none for
    /// `obv()`).
    pub fn window_arg(self) -> Option<usize> {
        let spec = self.spec();
        spec.min_window.map(|_| usize::from(spec.reads_series))
    }

    /// The column of this function of `x` over a window of `n` (a value:
    /// a window that is not a whole number at least the function's least,
    /// which a parameter expression like `slow - fast` can give, leaves the
    /// column undefined).
    pub fn column(self, x: &[f64], n: f64, bars: &Bars) -> Vec<f64> {
        let spec = self.spec();
        let Some(min) = spec.min_window else {
            return (spec.compute)(x, 0, bars);
        };
        if !(n >= min as f64 && n <= 1e9 && n.fract() == 0.0) {
            return vec![f64::NAN; bars.len()];
        }
        (spec.compute)(x, n as usize, bars)
    }
}

impl Func {
    /// Every function, by name (windowed first).
    pub fn all() -> impl Iterator<Item = Func> {
        Windowed::ALL.into_iter().map(Func::Windowed).chain([
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
                | Windowed::Adx => "oscillators",
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
                let series = spec.reads_series.then_some(Num);
                series
                    .into_iter()
                    .chain(spec.min_window.map(Window))
                    .collect()
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

    /// Every windowed function is in `Windowed::ALL` (what the checker
    /// looks names up in). The match below is exhaustive: a new variant is
    /// a compile error here until it is listed.
    #[test]
    fn every_windowed_function_is_in_all() {
        let every = |w: Windowed| match w {
            Windowed::Sma
            | Windowed::Ema
            | Windowed::Wma
            | Windowed::Rma
            | Windowed::Sum
            | Windowed::Cumsum
            | Windowed::Rsi
            | Windowed::Atr
            | Windowed::Cci
            | Windowed::Willr
            | Windowed::PlusDi
            | Windowed::MinusDi
            | Windowed::Adx
            | Windowed::Obv
            | Windowed::Hour
            | Windowed::Minute
            | Windowed::Weekday
            | Windowed::Day
            | Windowed::Month
            | Windowed::NewDay
            | Windowed::Highest
            | Windowed::Lowest
            | Windowed::Stdev
            | Windowed::Roc
            | Windowed::Shift => w,
        };
        for w in [
            Windowed::Sma,
            Windowed::Ema,
            Windowed::Wma,
            Windowed::Rma,
            Windowed::Sum,
            Windowed::Cumsum,
            Windowed::Rsi,
            Windowed::Atr,
            Windowed::Cci,
            Windowed::Willr,
            Windowed::PlusDi,
            Windowed::MinusDi,
            Windowed::Adx,
            Windowed::Obv,
            Windowed::Hour,
            Windowed::Minute,
            Windowed::Weekday,
            Windowed::Day,
            Windowed::Month,
            Windowed::NewDay,
            Windowed::Highest,
            Windowed::Lowest,
            Windowed::Stdev,
            Windowed::Roc,
            Windowed::Shift,
        ] {
            assert!(Windowed::ALL.contains(&every(w)), "{w:?} is not in ALL");
        }
        assert_eq!(Windowed::ALL.len(), 25);
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
        }
    }
}
