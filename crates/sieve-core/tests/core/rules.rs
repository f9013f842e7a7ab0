//! Rule strategies against computations written from scratch here: the
//! indicators by their definitions, the state machine, and an all-in
//! engine, on daily and hourly data and with both fills.

use sieve_core::config::Config;
use sieve_core::data::{synth, Bars};
use sieve_core::engine::Fill;
use sieve_core::evaluate::{Evaluator, Scoring};
use sieve_core::indicators::IndicatorSet;
use sieve_core::strategy::indicators_for;

const RULES: &str = r#"
[strategy]
name = "trend_dip"
entry = "close > sma(close, n) and rsi(close, k) < u"
exit = "close < sma(close, n)"
[strategy.params]
n = { values = [10, 30] }
k = { values = [5, 14] }
u = { values = [40, 55] }
[backtest]
fee = 0.002
"#;

/// SMA by its definition: the mean of the last n closes.
fn sma(x: &[f64], n: usize) -> Vec<f64> {
    (0..x.len())
        .map(|t| {
            if t + 1 < n {
                f64::NAN
            } else {
                x[t + 1 - n..=t].iter().sum::<f64>() / n as f64
            }
        })
        .collect()
}

/// Wilder's RSI: seeded with the mean gain/loss of the first n changes,
/// then avg = (avg·(n−1) + this)/n.
fn rsi(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if x.len() <= n {
        return out;
    }
    let change = |t: usize| x[t] - x[t - 1];
    let mut gain = (1..=n).map(|t| change(t).max(0.0)).sum::<f64>() / n as f64;
    let mut loss = (1..=n).map(|t| (-change(t)).max(0.0)).sum::<f64>() / n as f64;
    let value = |g: f64, l: f64| {
        if g + l == 0.0 {
            50.0
        } else {
            100.0 * g / (g + l)
        }
    };
    out[n] = value(gain, loss);
    for (t, o) in out.iter_mut().enumerate().skip(n + 1) {
        gain = (gain * (n - 1) as f64 + change(t).max(0.0)) / n as f64;
        loss = (loss * (n - 1) as f64 + (-change(t)).max(0.0)) / n as f64;
        *o = value(gain, loss);
    }
    out
}

/// Long-only positions: enter when flat and the entry holds, leave when
/// long and the exit holds (comparisons with NaN are false).
fn positions(bars: &Bars, n: usize, k: usize, u: f64) -> Vec<i8> {
    let (avg, strength) = (sma(&bars.close, n), rsi(&bars.close, k));
    let mut held = 0i8;
    bars.close
        .iter()
        .enumerate()
        .map(|(t, &c)| {
            if held == 0 && c > avg[t] && strength[t] < u {
                held = 1;
            } else if held == 1 && c < avg[t] {
                held = 0;
            }
            held
        })
        .collect()
}

/// All-in, long-only: the final equity and the number of round trips.
fn engine(bars: &Bars, pos: &[i8], fee: f64, fill: Fill) -> (f64, usize) {
    let (mut cash, mut units, mut trades) = (10_000.0, 0.0, 0);
    for t in 0..bars.len() {
        let (target, price) = match fill {
            Fill::Close => (pos[t], bars.close[t]),
            Fill::NextOpen if t > 0 => (pos[t - 1], bars.open[t]),
            Fill::NextOpen => continue,
        };
        if target == 1 && units == 0.0 {
            units = cash / (price * (1.0 + fee));
            cash -= units * price * (1.0 + fee);
        } else if target == 0 && units > 0.0 {
            cash += units * price * (1.0 - fee);
            units = 0.0;
            trades += 1;
        }
    }
    if units > 0.0 {
        trades += 1; // the open one
    }
    (cash + units * bars.close[bars.len() - 1], trades)
}

fn hourly(mut bars: Bars) -> Bars {
    let start = bars.time[0];
    for (i, t) in bars.time.iter_mut().enumerate() {
        *t = start + i as i64 * 3_600_000;
    }
    bars
}

#[test]
fn a_new_rule_strategy_matches_a_computation_from_scratch() {
    for (label, bars) in [
        ("daily", synth(1500, 5)),
        ("hourly", hourly(synth(1500, 8))),
    ] {
        for fill in ["next_open", "close"] {
            let config =
                Config::parse_with_overrides(RULES, &[format!("backtest.fill=\"{fill}\"")])
                    .unwrap();
            let shared = config.strategy().unwrap();
            let strategy = &*shared;
            let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
            let mut traded = 0;
            for n in [10usize, 30] {
                for k in [5usize, 14] {
                    for u in [40.0, 55.0] {
                        let params = [n as f64, k as f64, u];
                        let set = IndicatorSet::build_for(
                            &bars,
                            strategy.series(),
                            indicators_for(strategy, &params),
                        );
                        let eval = Evaluator {
                            bars: &bars,
                            strategy,
                            indicators: &set,
                            scoring: &scoring,
                            portfolio: None,
                        };
                        let want = positions(&bars, n, k, u);
                        let bt = eval.backtest(&params);
                        let case = format!("{label} {fill} n={n} k={k} u={u}");
                        let mut got = Vec::new();
                        eval.positions(&params, &mut got);
                        assert_eq!(got, want, "{case}: positions");
                        let (equity, trades) = engine(&bars, &want, 0.002, scoring.engine.fill);
                        assert_eq!(bt.trades.len(), trades, "{case}: trades");
                        let last = bt.equity[bars.len() - 1];
                        assert!(
                            (last - equity).abs() <= 1e-9 * equity,
                            "{case}: equity {last} vs {equity}"
                        );
                        traded += trades;
                    }
                }
            }
            assert!(
                traded > 20,
                "{label} {fill}: the rules must trade ({traded})"
            );
        }
    }
}

#[test]
fn undefined_values_never_trade_and_crossings_need_an_earlier_side() {
    // Entry on a crossing of close over a 3-bar SMA; exit on the mirror.
    let config = Config::parse(
        "[strategy]\nname = \"c\"\nentry = \"cross_above(close, sma(close, 3))\"\nexit = \"cross_below(close, sma(close, 3))\"\n",
    )
    .unwrap();
    let shared = config.strategy().unwrap();
    let strategy = &*shared;
    // sma(3): -, -, 2, 3, 3.667, 3, 2.667
    let close = [1.0, 2.0, 3.0, 4.0, 4.0, 1.0, 3.0];
    let bars = crate::bars(&close, &close);
    let set = IndicatorSet::build_for(&bars, strategy.series(), indicators_for(strategy, &[]));
    let mut out = vec![9i8; close.len()];
    strategy.positions(
        &bars,
        &set,
        &[],
        sieve_core::strategy::Direction::Long,
        &mut out,
    );
    // Above from bar 2 on with no earlier side: no entry until close goes
    // below (bar 5) and back above (bar 6).
    assert_eq!(out, [0, 0, 0, 0, 0, 0, 1]);
}

fn positions_of(rules: &str, close: &[f64], direction: &str) -> Vec<i8> {
    let config = Config::parse(&format!(
        "[strategy]\nname = \"h\"\n{rules}\n[backtest]\ndirection = \"{direction}\"\n"
    ))
    .unwrap();
    let shared = config.strategy().unwrap();
    let strategy = &*shared;
    let bars = crate::bars(close, close);
    let set = IndicatorSet::build_for(&bars, strategy.series(), indicators_for(strategy, &[]));
    let mut out = vec![9i8; close.len()];
    strategy.positions(&bars, &set, &[], config.scoring.direction, &mut out);
    out
}

#[test]
fn trailing_stop_by_hand() {
    // Enter above 10; the stop trails the highest close since entry by 2:
    // highest 13 → out when close < 11 (bar 4), back in at bar 5.
    let rules = "entry = \"close > 10\"\nexit = \"false\"\ntrailing_stop = \"2\"";
    let close = [9.0, 11.0, 13.0, 12.0, 10.5, 12.0];
    assert_eq!(positions_of(rules, &close, "long"), [0, 1, 1, 1, 0, 1]);
}

#[test]
fn short_rules_and_a_mirrored_stop_by_hand() {
    let rules = "entry = \"close > 12\"\nexit = \"close < 11\"\nshort_entry = \"close < 8\"\nshort_exit = \"close > 9\"\ntrailing_stop = \"1\"";
    let close = [10.0, 7.5, 7.0, 7.8, 8.2, 9.5, 13.0, 12.5, 11.5, 7.0];
    // Short at 7.5 (lowest 7): stopped when close > 8 (bar 4). Long at 13:
    // stopped when close < 12 (bar 8). Short again below 8 (bar 9).
    assert_eq!(
        positions_of(rules, &close, "long_short"),
        [0, -1, -1, -1, 0, 0, 1, 1, 0, -1]
    );
    // Long only: the short rules do nothing.
    assert_eq!(
        positions_of(rules, &close, "long"),
        [0, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    );
}

/// A chain of the most definitions allowed compiles (each name looked up
/// by a map: 200,000 used to take 80 s), and one more is refused by name.
#[test]
fn long_chains_of_definitions_compile_and_have_a_cap() {
    let chain = |n: usize| {
        let mut text = format!(
            "[strategy]\nname = \"chain\"\nentry = \"d{} > 0\"\nexit = \"close < 0\"\n[strategy.define]\nd0 = \"close\"\n",
            n - 1
        );
        for i in 1..n {
            text.push_str(&format!("d{i} = \"d{} + 1\"\n", i - 1));
        }
        text
    };
    let max = sieve_core::rules::MAX_DEFINES;
    Config::parse(&chain(max)).unwrap();
    let e = Config::parse(&chain(max + 1)).unwrap_err().to_string();
    assert!(
        e.contains("strategy.define") && e.contains("at most 10000"),
        "{e}"
    );
}

/// `wma`, `rma` and `sum` in rules, by hand: close = 1, 2, 6, 0, 12, 3.
#[test]
fn weighted_wilder_and_summed_windows_by_hand() {
    let close = [1.0, 2.0, 6.0, 0.0, 12.0, 3.0];
    // wma(close, 3) from bar 2: 23/6 ≈ 3.83, 14/6 ≈ 2.33, 7, 5.5:
    // close above it at bars 2 (6) and 4 (12); below at 3 (0) and 5 (3).
    let rules = "entry = \"close > wma(close, 3)\"\nexit = \"close < wma(close, 3)\"";
    assert_eq!(positions_of(rules, &close, "long"), [0, 0, 1, 0, 1, 0]);
    // rma(close, 2): 1.5, 3.75, 1.875, 6.9375, 4.96875 from bar 1:
    // close above at bars 1, 2, 4; below at 3, 5.
    let rules = "entry = \"close > rma(close, 2)\"\nexit = \"close < rma(close, 2)\"";
    assert_eq!(positions_of(rules, &close, "long"), [0, 1, 1, 0, 1, 0]);
    // sum(close, 2) = 3, 8, 6, 12, 15 from bar 1: above 7 at bars 2, 4, 5.
    let rules = "entry = \"sum(close, 2) > 7\"\nexit = \"sum(close, 2) <= 7\"";
    assert_eq!(positions_of(rules, &close, "long"), [0, 0, 1, 0, 1, 1]);
}

/// `obv()` reads the volume: data without one is refused, naming it.
#[test]
fn obv_needs_a_volume_column() {
    let config = Config::parse(
        "[strategy]\nname = \"o\"\nentry = \"obv() > sma(obv(), 5)\"\nexit = \"obv() < sma(obv(), 5)\"\n",
    )
    .unwrap();
    let shared = config.strategy().unwrap();
    let close = [1.0, 2.0, 3.0];
    let e = shared
        .check_data(&crate::bars(&close, &close))
        .unwrap_err()
        .to_string();
    assert!(e.contains("volume") && e.contains("obv"), "{e}");
}

/// Crossings of functions that read no series (`obv()`, `atr(n)`) or a
/// compound one compile and trade as the rules say: only a pair of
/// averages of prices takes the built-in crosses' scan.
#[test]
fn crossings_of_functions_of_the_bars_compile() {
    for (entry, exit) in [
        (
            "cross_above(obv(), sma(obv(), 3))",
            "cross_below(obv(), sma(obv(), 3))",
        ),
        (
            "cross_above(atr(3), sma(close, 3))",
            "cross_below(atr(3), sma(close, 3))",
        ),
        (
            "cross_above(sma(close, 2), sma(close * 2, 3))",
            "cross_below(sma(close, 2), sma(close * 2, 3))",
        ),
    ] {
        let close = [1.0, 2.0, 3.0, 2.0, 1.0, 2.0, 3.0, 4.0];
        let rules = format!("entry = \"{entry}\"\nexit = \"{exit}\"");
        assert_eq!(
            positions_of(&rules, &close, "long").len(),
            close.len(),
            "{entry}"
        );
    }
}

/// The calendar values on hourly bars from 2020-01-01 22:00 UTC (a
/// Wednesday) to Thursday 03:00: hour, weekday and new_day by hand.
#[test]
fn calendar_values_by_hand() {
    let t0 = 1_577_836_800_000i64 + 22 * 3_600_000;
    let n = 6;
    let close = vec![10.0; n];
    let mut bars = crate::bars(&close, &close);
    bars.time = (0..n as i64).map(|i| t0 + i * 3_600_000).collect();
    let run = |rules: &str| {
        let config = Config::parse(&format!(
            "[strategy]\nname = \"cal\"\n{rules}\n[backtest]\nfill = \"close\"\n"
        ))
        .unwrap();
        let shared = config.strategy().unwrap();
        let s = &*shared;
        let set = IndicatorSet::build_for(&bars, s.series(), indicators_for(s, &[]));
        let mut out = vec![9i8; n];
        s.positions(&bars, &set, &[], config.scoring.direction, &mut out);
        out
    };
    // Hours 22, 23, 0, 1, 2, 3: long from 23:00, out from 02:00.
    assert_eq!(
        run("entry = \"hour == 23\"\nexit = \"hour >= 2 and hour < 22\""),
        [0, 1, 1, 1, 0, 0]
    );
    // Weekday 2 (Wednesday) then 3: long on Thursday's bars.
    assert_eq!(
        run("entry = \"weekday == 3\"\nexit = \"weekday != 3\""),
        [0, 0, 1, 1, 1, 1]
    );
    // new_day: the first bar and Thursday 00:00; out on any other bar.
    assert_eq!(
        run("entry = \"new_day\"\nexit = \"not new_day\""),
        [1, 0, 1, 0, 0, 0]
    );
    assert_eq!(
        run("entry = \"day == 2 and month == 1 and minute == 0\"\nexit = \"false\""),
        [0, 0, 1, 1, 1, 1]
    );
}

/// `cumsum` by hand: close − open = 1, −2, 3, 0, −1 sums to 1, −1, 2, 2, 1;
/// above 1.5 at bars 2 and 3.
#[test]
fn running_sums_by_hand() {
    let open = [10.0, 12.0, 9.0, 11.0, 12.0];
    let close = [11.0, 10.0, 12.0, 11.0, 11.0];
    let config = Config::parse(
        "[strategy]\nname = \"c\"\nentry = \"cumsum(close - open) > 1.5\"\nexit = \"cumsum(close - open) <= 1.5\"\n",
    )
    .unwrap();
    let shared = config.strategy().unwrap();
    let s = &*shared;
    let bars = crate::bars(&open, &close);
    let set = IndicatorSet::build_for(&bars, s.series(), indicators_for(s, &[]));
    let mut out = vec![9i8; close.len()];
    s.positions(&bars, &set, &[], config.scoring.direction, &mut out);
    assert_eq!(out, [0, 0, 1, 1, 0]);
}

/// The event functions and `shift` of a true/false value, by hand:
/// close = 1, 3, 2, 5, 4, 6 (up bars 1, 3, 5; down bars 2, 4).
#[test]
fn since_functions_and_shifted_conditions_by_hand() {
    let close = [1.0, 3.0, 2.0, 5.0, 4.0, 6.0];
    let bars = crate::bars(&close, &close);
    let v = |e: &str| sieve_core::rules::values(e, &bars, &Default::default()).unwrap();
    let same = |got: Vec<f64>, want: [f64; 6]| {
        let ok = got
            .iter()
            .zip(want)
            .all(|(g, w)| *g == w || g.is_nan() && w.is_nan());
        assert!(ok, "{got:?} != {want:?}");
    };
    let nan = f64::NAN;
    let up = "close > shift(close, 1)";
    same(
        v(&format!("barssince({up})")),
        [nan, 0.0, 1.0, 0.0, 1.0, 0.0],
    );
    same(
        v(&format!("valuewhen({up}, close)")),
        [nan, 3.0, 3.0, 5.0, 5.0, 6.0],
    );
    same(
        v(&format!("sum_since({up}, close)")),
        [nan, 3.0, 5.0, 5.0, 9.0, 6.0],
    );
    let down = "close < shift(close, 1)";
    same(
        v(&format!("highest_since({down}, close)")),
        [nan, nan, 2.0, 5.0, 4.0, 6.0],
    );
    same(
        v(&format!("lowest_since({down}, close)")),
        [nan, nan, 2.0, 2.0, 4.0, 4.0],
    );
    // A shifted condition is true/false (false for its first bars) and
    // works where rules want one.
    same(
        v(&format!("shift({up}, 2)")),
        [0.0, 0.0, 0.0, 1.0, 0.0, 1.0],
    );
    let rules = format!("entry = \"shift({up}, 2)\"\nexit = \"not shift({up}, 2)\"");
    assert_eq!(positions_of(&rules, &close, "long"), [0, 0, 0, 1, 0, 1]);
}

/// Settings must not change from bar to bar; conditions must be
/// true/false; stoch and sar take their settings.
#[test]
fn stateful_function_arguments_are_checked() {
    let close = [1.0, 2.0, 3.0];
    let bars = crate::bars(&close, &close);
    let err = |e: &str| {
        sieve_core::rules::values(e, &bars, &Default::default())
            .unwrap_err()
            .to_string()
    };
    let e = err("sar(close, 0.2)");
    assert!(e.contains("setting") && e.contains("sar(step, max)"), "{e}");
    let e = err("barssince(close)");
    assert!(e.contains("true/false"), "{e}");
    let e = err("stoch_d(14, 3)");
    assert!(e.contains("stoch_d(n, smooth, d)"), "{e}");
    let e = err("supertrend(1.5, 3)");
    assert!(e.contains("whole number"), "{e}");
    assert!(
        sieve_core::rules::values("supertrend(2, 1.5) > 0", &bars, &Default::default()).is_ok()
    );
    // `new_day()` is true/false like the value `new_day`; calendar values
    // are suggested for near misses.
    assert!(sieve_core::rules::values(
        "barssince(new_day()) + barssince(new_day)",
        &bars,
        &Default::default()
    )
    .is_ok());
    let e = err("houre < 10");
    assert!(e.contains("did you mean 'hour'"), "{e}");
}

/// A moving average defined outside sieve (as a Python indicator is),
/// counting its calls.
struct OutsideSma {
    args: Vec<String>,
    calls: std::sync::Mutex<Vec<f64>>,
}

impl sieve_core::rules::ExternalFunction for OutsideSma {
    fn name(&self) -> &str {
        "outside_sma"
    }
    fn arg_names(&self) -> &[String] {
        &self.args
    }
    fn series(&self, bars: &Bars, settings: &[f64]) -> Vec<f64> {
        self.calls.lock().unwrap().push(settings[0]);
        sma(&bars.close, settings[0] as usize)
    }
}

#[test]
fn a_function_defined_outside_reads_as_a_shared_series() {
    use sieve_core::rules::{ExternalFunction, ExternalFunctions};
    use std::sync::Arc;
    let bars = synth(800, 3);
    let f = Arc::new(OutsideSma {
        args: vec!["n".into()],
        calls: Default::default(),
    });
    let functions = ExternalFunctions(vec![f.clone() as Arc<dyn ExternalFunction>]);
    let rules = |average: &str| {
        format!(
            "[strategy]\nname = \"x\"\nentry = \"close > {average} * (1 + k / 100)\"\nexit = \"close < {average}\"\n[strategy.params]\nn = {{ values = [5, 20, 50] }}\nk = {{ values = [0, 1] }}\n"
        )
    };
    let outside = Config::parse_with(&rules("outside_sma(n)"), &[], &functions).unwrap();
    let inside = Config::parse(&rules("sma(close, n)")).unwrap();
    let mut traded = 0;
    for (n, k) in [(5.0, 0.0), (20.0, 1.0), (50.0, 0.0), (50.0, 1.0)] {
        let params = [n, k];
        let run = |config: &Config| {
            let strategy = config.strategy().unwrap();
            let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
            let set = IndicatorSet::build_for(
                &bars,
                strategy.series(),
                indicators_for(&*strategy, &params),
            );
            let eval = Evaluator {
                bars: &bars,
                strategy: &*strategy,
                indicators: &set,
                scoring: &scoring,
                portfolio: None,
            };
            let mut got = Vec::new();
            eval.positions(&params, &mut got);
            got
        };
        let want = run(&inside);
        assert_eq!(run(&outside), want, "n={n} k={k}");
        traded += want.windows(2).filter(|w| w[0] != w[1]).count();
    }
    assert!(traded > 10);
    // One call per setting built (k does not reach it).
    assert_eq!(*f.calls.lock().unwrap(), vec![5.0, 20.0, 50.0, 50.0]);
    // Settings only, the right count, and unknown without the functions.
    let err = |text: &str, functions: &ExternalFunctions| {
        Config::parse_with(&rules(text), &[], functions)
            .unwrap_err()
            .to_string()
    };
    let e = err("outside_sma(close)", &functions);
    assert!(
        e.contains("the arguments of outside_sma(n) are settings"),
        "{e}"
    );
    let e = err("outside_sma(n, 2)", &functions);
    assert!(e.contains("outside_sma takes 1 argument, got 2"), "{e}");
    let e = err("outside_sma(n)", &ExternalFunctions::default());
    assert!(e.contains("unknown function 'outside_sma'"), "{e}");
}
