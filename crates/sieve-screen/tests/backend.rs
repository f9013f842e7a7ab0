//! One suite, run against every screening backend (`backend_tests!`).
//! The GPU backend adds its own instantiation behind the `gpu` feature.

use std::ops::ControlFlow;

use sieve_core::config::Config;
use sieve_core::data::{synth, Bars};
use sieve_core::evaluate::Evaluator;
use sieve_core::grid::ParamSpace;
use sieve_core::market::Market;
use sieve_core::strategy::SharedStrategy;
use sieve_screen::{Batch, Checkpoint, CpuBackend, Scored, ScreenBackend, ScreenJob, Screened};

struct Case {
    /// One instrument, or several.
    market: Market,
    strategy: SharedStrategy,
    space: ParamSpace,
    /// [`ScreenJob::series_budget`]: 0 forces per-batch shared series.
    series_budget: u64,
}

fn case(strategy: &str, grid: &str, extra: &str) -> Case {
    case_of(&format!("name = \"{strategy}\""), grid, extra)
}

/// A case from `[strategy]` keys (a built-in's name, or rules).
fn case_of(strategy: &str, grid: &str, extra: &str) -> Case {
    case_on(
        strategy,
        grid,
        extra,
        vec![(String::new(), synth(2500, 11))],
    )
}

/// A case on the named instruments' bars.
fn case_on(strategy: &str, grid: &str, extra: &str, data: Vec<(String, Bars)>) -> Case {
    case_with(strategy, grid, extra, data, &Default::default())
}

/// A case whose rules may call `functions` (defined outside sieve).
fn case_with(
    strategy: &str,
    grid: &str,
    extra: &str,
    data: Vec<(String, Bars)>,
    functions: &sieve_core::rules::ExternalFunctions,
) -> Case {
    let config = Config::parse_with(
        &format!(
            "[strategy]\n{strategy}\n[strategy.params]\n{grid}\n[score]\nscore_start = \"2019-01-01\"\n{extra}"
        ),
        &[],
        functions,
    )
    .unwrap();
    let strategy = config.strategy().unwrap();
    let space = config.space(&*strategy).unwrap();
    let market = Market::new(&config.scoring(), data, &*strategy).unwrap();
    Case {
        market,
        strategy,
        space,
        series_budget: sieve_screen::SERIES_BUDGET,
    }
}

/// A MACD rule strategy: definitions on definitions, a crossing pair, a
/// trend filter.
const MACD_RULES: &str = r#"name = "macd_rules"
entry = "cross_above(macd, signal) and close > sma(close, trend)"
exit = "cross_below(macd, signal)"
constraints = ["fast < slow"]
define = { macd = "ema(close, fast) - ema(close, slow)", signal = "ema(macd, sig)" }"#;
const MACD_GRID: &str = "fast = { start = 4, stop = 16, step = 4 }\nslow = { values = [20, 30] }\nsig = { values = [5, 9] }\ntrend = { values = [50, 100] }";

/// Rules reading a real-valued parameter inside a window (a column per
/// combination), shorts and a trailing stop.
const BAND_RULES: &str = r#"name = "band_rules"
entry = "close > sma(close, n) + k * stdev(close, n) and rsi(close, 14) < 70"
exit = "close < highest(close - k, n) - 2 * atr(14)"
short_entry = "close < sma(close, n) - k * stdev(close, n)"
short_exit = "close > sma(close, n)"
trailing_stop = "k * atr(14)"
"#;
const BAND_GRID: &str =
    "n = { values = [10, 20, 40] }\nk = { start = 0.5, stop = 2.0, step = 0.5 }";

/// A threshold rule with real-valued parameters read per bar (not inside a
/// window), `if` on a scalar condition, `clamp`, a crossing and a stop.
const THRESHOLD_RULES: &str = r#"name = "threshold_rules"
entry = "clamp(rsi(close, n), 0, 100) < lo and close > if(lo > 30, sma(close, 50), lowest(close, 20))"
exit = "rsi(close, n) > lo + band or cross_below(close, sma(close, 50))"
trailing_stop = "2 * atr(14)"
"#;
const THRESHOLD_GRID: &str = "n = { values = [7, 14] }\nlo = { start = 25, stop = 40, step = 2.5 }\nband = { values = [20, 30.5, 40] }";

/// Every per-bar node kind on the device: division (by zero: undefined),
/// `==`/`!=`, abs/min/max, `not`, a boolean `if` on a per-bar condition, an
/// undefined scalar (`1 / 0`) that resets a crossing mid-series, high, low
/// and volume, explicit short rules and a trailing stop on both sides.
const EDGE_RULES: &str = r#"name = "edge_rules"
entry = "if(volume > sma(volume, n), (close - open) / (high - low) > d, not (abs(close - open) != 0)) and cross_above(if(close > open, close, 1 / 0), min(high, max(low, sma(close, n))))"
exit = "cross_below(close, sma(close, n)) or close != if(close > open, close, 1 / 0)"
short_entry = "(close - open) / (high - low) < -d"
short_exit = "close > highest(high, n) or -close == -open"
trailing_stop = "d * atr(14)"
"#;
const EDGE_GRID: &str = "n = { values = [10, 20] }\nd = { values = [0.2, 0.5] }";

/// Trade management: a swept stop-loss and take-profit on a crossing.
const BRACKET_RULES: &str = r#"name = "bracket_rules"
entry = "cross_above(sma(close, fast), sma(close, slow))"
exit = "cross_below(sma(close, fast), sma(close, slow))"
stop_loss = "sl"
take_profit = "tp"
"#;
const BRACKET_GRID: &str = "fast = { values = [5, 10] }\nslow = { values = [20, 40] }\nsl = { values = [0.02, 0.05] }\ntp = { values = [0.04, 0.1] }";

/// Every other piece of trade management: stops and targets in price
/// units, a bar limit, sizes above 1 (liquidation possible), and rules
/// reading the open trade (its entry price, bars held and position).
const MANAGED_RULES: &str = r#"name = "managed_rules"
entry = "close > sma(close, n) and position == 0"
exit = "close < entry_price * (1 - k / 20) or bars_held > 30"
short_entry = "close < sma(close, n) and position == 0"
short_exit = "close > entry_price * (1 + k / 20)"
stop_distance = "2 * atr(14)"
target_distance = "3 * k * atr(14)"
max_bars = "hold"
size = "0.5 * k"
"#;
const MANAGED_GRID: &str =
    "n = { values = [10, 20] }\nk = { values = [1, 2, 3] }\nhold = { values = [5, 40] }";
const MANAGED_SETTINGS: &str = "[backtest]\nmax_leverage = 1.5\ndirection = \"long_short\"";

/// A column of the data (undefined on some bars) read by name and by
/// `col("…")`: a shared series on the CPU, uploaded to the device.
const COLUMN_RULES: &str = r#"name = "column_rules"
entry = "signal > k and close > sma(close, 20)"
exit = "col('signal') < -k"
"#;
const COLUMN_GRID: &str = "k = { start = 0, stop = 0.6, step = 0.2 }";

/// Synthetic bars with a `signal` column: a wave with undefined stretches.
fn with_signal() -> Vec<(String, Bars)> {
    let mut bars = synth(2500, 11);
    let signal = (0..bars.len())
        .map(|i| match i % 97 < 5 {
            true => f64::NAN,
            false => (i as f64 * 0.05).sin(),
        })
        .collect();
    bars.extra = vec![sieve_core::data::ExtraColumn {
        name: "signal".into(),
        values: signal,
        problem: None,
    }];
    vec![(String::new(), bars)]
}

/// A function of the bars defined outside sieve (as a Python indicator
/// is): a wave of frequency `f`, undefined on some stretches.
struct Wave(Vec<String>);

impl sieve_core::rules::ExternalFunction for Wave {
    fn name(&self) -> &str {
        "wave"
    }
    fn arg_names(&self) -> &[String] {
        &self.0
    }
    fn series(&self, bars: &Bars, settings: &[f64]) -> Vec<f64> {
        (0..bars.len())
            .map(|i| match i % 89 < 4 {
                true => f64::NAN,
                false => (i as f64 * 0.02 * settings[0]).sin(),
            })
            .collect()
    }
}

/// Hourly entries under a daily trend and a 4-hour RSI, exits when
/// another instrument (half-hourly bars) falls under its average.
const FRAME_RULES: &str = r#"name = "frames"
entry = "cross_above(sma(close, fast), sma(close, slow)) and close > tf(\"1d\", sma(close, n)) and tf(\"4h\", rsi(close, 14) < 70)"
exit = "cross_below(sma(close, fast), sma(close, slow)) or informative(\"lead\", close < sma(close, m))""#;
const FRAME_GRID: &str = "fast = { values = [3, 8] }\nslow = { values = [20, 40] }\nn = { values = [3, 5] }\nm = { values = [10, 30] }";

/// The rule sma_cross under a daily trend, leaving only while the 4-hour
/// RSI is above 30 or another instrument is below its average.
const FILTERED_PAIR: &str = r#"name = "filtered_pair"
entry = "cross_above(sma(close, fast), sma(close, slow)) and close > tf(\"1d\", sma(close, n))"
exit = "cross_below(sma(close, fast), sma(close, slow)) and (tf(\"4h\", rsi(close, 14)) > 30 or informative(\"lead\", close < sma(close, 10)))""#;
const PAIR_GRID: &str =
    "fast = { values = [3, 5, 8] }\nslow = { values = [20, 40] }\nn = { values = [3, 5] }";

/// 2,500 hourly bars from December 2018 (the score window starts in
/// January) reading `lead`: 3,000 half-hourly bars of another series.
fn hourly_with_informative() -> Vec<(String, Bars)> {
    use sieve_core::data::{Frames, Informative};
    let start = 1_543_622_400_000; // 2018-12-01 00:00 UTC
    let spaced = |mut b: Bars, step: i64| {
        b.time = (0..b.len() as i64).map(|i| start + i * step).collect();
        b
    };
    let lead = spaced(synth(3000, 5), 1_800_000);
    let mut bars = spaced(synth(2500, 11), 3_600_000);
    bars.frames = Some(std::sync::Arc::new(Frames {
        bar: Some(3_600_000),
        informative: vec![Informative {
            name: "lead".into(),
            bars: std::sync::Arc::new(lead),
        }],
        ..Frames::default()
    }));
    vec![(String::new(), bars)]
}

fn rule_cases() -> Vec<Case> {
    let wave =
        sieve_core::rules::ExternalFunctions(vec![std::sync::Arc::new(Wave(vec!["f".into()]))]);
    let mut grouped = case_of(MACD_RULES, MACD_GRID, "");
    grouped.series_budget = 0;
    vec![
        case_of(MACD_RULES, MACD_GRID, "objective = \"sharpe\""),
        grouped,
        case_of(
            BAND_RULES,
            BAND_GRID,
            "[backtest]\ndirection = \"long_short\"",
        ),
        case_of(
            THRESHOLD_RULES,
            THRESHOLD_GRID,
            "objective = \"total_return\"\nmin_trades = 0",
        ),
        case_of(
            EDGE_RULES,
            EDGE_GRID,
            "objective = \"total_return\"\nmin_trades = 0\n[backtest]\ndirection = \"long_short\"",
        ),
        case_of(BRACKET_RULES, BRACKET_GRID, "objective = \"sharpe\""),
        case_of(
            MANAGED_RULES,
            MANAGED_GRID,
            &format!("objective = \"total_return\"\nmin_trades = 0\n{MANAGED_SETTINGS}"),
        ),
        case_on(
            COLUMN_RULES,
            COLUMN_GRID,
            "objective = \"total_return\"\nmin_trades = 0",
            with_signal(),
        ),
        // Higher timeframes and another instrument's bars: shared
        // columns per setting of the parameters read inside.
        case_on(FRAME_RULES, FRAME_GRID, "objective = \"total_return\"\nmin_trades = 0", hourly_with_informative()),
        // A crossing pair with filters: the scan, then the filters read
        // at its crossings; both directions.
        case_on(FILTERED_PAIR, PAIR_GRID, "objective = \"total_return\"\nmin_trades = 0", hourly_with_informative()),
        case_on(FILTERED_PAIR, PAIR_GRID, "objective = \"sharpe\"\n[backtest]\ndirection = \"long_short\"", hourly_with_informative()),
        // A function defined outside sieve: a shared column per setting,
        // uploaded like a built-in's (its setting real-valued).
        case_with(
            "name = \"outside\"\nentry = \"wave(f) > k and close > sma(close, 20)\"\nexit = \"wave(f) < -k\"",
            "f = { values = [0.5, 1.0, 1.5, 2.5] }\nk = { values = [0.2, 0.5] }",
            "objective = \"total_return\"\nmin_trades = 0",
            vec![(String::new(), synth(2500, 11))],
            &wave,
        ),
    ]
}

fn cases() -> Vec<Case> {
    vec![
        case("sma_cross", "fast = { start = 2, stop = 40, step = 3 }\nslow = { start = 10, stop = 120, step = 10 }", ""),
        case("ema_cross", "fast = { start = 2, stop = 30, step = 4 }\nslow = { values = [20, 50, 90] }", "screen_window = \"full\"\nobjective = \"sharpe\""),
        case("rsi_reversion", "period = { values = [7, 14] }\nlower = { start = 20, stop = 40, step = 10 }\nupper = { start = 55, stop = 75, step = 10 }", "objective = \"sortino\""),
        case("donchian_breakout", "entry = { start = 10, stop = 50, step = 10 }\nexit = { values = [5, 10, 20] }", "objective = \"total_return\"\nmin_trades = 3"),
        case(
            "activation",
            "trend_len = { values = [30, 90] }\nrsi_len = { values = [14] }\ndc_len = { values = [20, 40] }\natr_len = { values = [14] }\nw_trend = { values = [0, 1] }\nw_rsi = { values = [0.5, 1] }\nw_dc = { values = [1] }\nentry = { start = 0.2, stop = 0.6, step = 0.2 }\nexit = { values = [-0.2, 0.0] }\nstop_atr = { values = [0, 2.5] }",
            "",
        ),
    ]
    .into_iter()
    .chain(rule_cases())
    .chain(market_cases())
    .collect()
}

/// Three instruments of different lengths and starts, each aggregate, and
/// the three as one portfolio.
fn market_cases() -> Vec<Case> {
    let data = || {
        vec![
            ("a".to_string(), synth(2500, 11)),
            ("b".to_string(), synth(2200, 12)),
            ("c".to_string(), synth(2600, 13)),
        ]
    };
    let grid =
        "fast = { start = 2, stop = 40, step = 3 }\nslow = { start = 10, stop = 120, step = 10 }";
    ["mean", "median", "min"]
        .into_iter()
        .map(|how| {
            let extra = format!("aggregate = \"{how}\"\nobjective = \"sharpe\"");
            case_on("name = \"sma_cross\"", grid, &extra, data())
        })
        .chain([case_on(
            "name = \"sma_cross\"",
            grid,
            "aggregate = \"min\"",
            same_closes(),
        )])
        // The three from one account, at most two positions open.
        .chain([case_on(
            "name = \"sma_cross\"",
            grid,
            "objective = \"sharpe\"\n[portfolio]\nmax_positions = 2",
            data(),
        )])
        .collect()
}

/// Two instruments with the same closes and other opens: every
/// combination has the same targets on both (crossings of averages of
/// closes) and other fills, so other scores.
fn same_closes() -> Vec<(String, Bars)> {
    let a = synth(2500, 11);
    let mut b = a.clone();
    for (i, open) in b.open.iter_mut().enumerate() {
        *open *= 1.0 + 0.01 * (i as f64 * 0.37).sin();
        b.high[i] = b.high[i].max(*open);
        b.low[i] = b.low[i].min(*open);
    }
    vec![("a".to_string(), a), ("b".to_string(), b)]
}

fn screen(
    backend: &dyn ScreenBackend,
    c: &Case,
    top: usize,
    threads: usize,
    batch: Option<Batch>,
) -> Vec<Scored> {
    let job = ScreenJob {
        market: &c.market,
        strategy: &*c.strategy,
        space: &c.space,
        batch: batch.unwrap_or(Batch::whole(c.space.size())),
        top,
        threads,
        resume: None,
        series_budget: c.series_budget,
        stop: None,
    };
    backend
        .screen(&job, &mut |_| Ok(ControlFlow::Continue(())))
        .unwrap()
        .done()
        .expect("never stopped")
        .top
}

/// (grid index, exact objective) of every allowed combination, by the exact engine.
fn exact_scores(c: &Case) -> Vec<(u64, f64)> {
    let params: Vec<(u64, Vec<f64>)> = (0..c.space.size())
        .map(|i| (i, c.space.params_of(i)))
        .filter(|(_, p)| c.space.allowed(p))
        .collect();
    let keys = Evaluator::indicators_for(&*c.strategy, params.iter().map(|(_, p)| p.as_slice()));
    // Each instrument's exact objective (a portfolio's: the portfolio's),
    // then the aggregate over them.
    let sets = c.market.series(&*c.strategy, keys);
    let evals = c.market.evaluators(&*c.strategy, &sets);
    let per_instrument: Vec<Vec<f64>> = evals
        .iter()
        .map(|eval| {
            params
                .iter()
                .map(|(_, p)| {
                    let bt = eval.backtest(p);
                    eval.objective(&eval.metrics(&bt, &eval.scoring.screen))
                })
                .collect()
        })
        .collect();
    params
        .iter()
        .enumerate()
        .map(|(k, (i, _))| {
            let values: Vec<f64> = per_instrument.iter().map(|o| o[k]).collect();
            (*i, c.market.aggregation.of(&values))
        })
        .collect()
}

fn screen_equals_exact_engine(backend: &dyn ScreenBackend, tolerance: f64) {
    screen_equals_exact_on(backend, tolerance, cases());
}

/// Every backtest setting and every objective, on two built-ins (with
/// hand-written GPU kernels) and rule strategies (generated kernels).
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
fn setting_cases() -> Vec<Case> {
    let strategies = [
        ("name = \"sma_cross\"", "fast = { start = 2, stop = 40, step = 6 }\nslow = { start = 10, stop = 120, step = 20 }"),
        ("name = \"activation\"", "trend_len = { values = [30, 90] }\nrsi_len = 14\ndc_len = { values = [20] }\natr_len = 14\nw_trend = 1\nw_rsi = { values = [0.5, 1] }\nw_dc = 1\nentry = { start = 0.2, stop = 0.6, step = 0.2 }\nexit = { values = [-0.2, 0.0] }\nstop_atr = { values = [0, 2.5] }"),
        (MACD_RULES, MACD_GRID),
        (THRESHOLD_RULES, THRESHOLD_GRID),
        (EDGE_RULES, EDGE_GRID),
        (BRACKET_RULES, BRACKET_GRID),
        (MANAGED_RULES, MANAGED_GRID),
    ];
    let mut settings: Vec<String> = [
        "[backtest]\nfee = 0.002\nslippage = 0.001",
        "[backtest]\nlot_size = 5",
        "[backtest]\ndirection = \"long_short\"",
        "[backtest]\nfill = \"close\"",
    ]
    .map(String::from)
    .to_vec();
    settings.extend(
        sieve_core::metrics::Objective::ALL
            .iter()
            .map(|o| format!("objective = \"{}\"\nmin_trades = 0", o.name())),
    );
    strategies
        .iter()
        .flat_map(|(strategy, grid)| {
            settings
                .iter()
                .map(move |extra| case_of(strategy, grid, extra))
        })
        .collect()
}

fn screen_equals_exact_on(backend: &dyn ScreenBackend, tolerance: f64, cases: Vec<Case>) {
    for c in cases {
        let exact = exact_scores(&c);
        let got = screen(backend, &c, usize::MAX >> 1, 0, None);
        assert_eq!(
            got.len(),
            exact.len(),
            "{}: every allowed combination is kept",
            c.strategy.name()
        );
        let mut by_index = got.clone();
        by_index.sort_by_key(|s| s.index);
        for (s, (i, e)) in by_index.iter().zip(&exact) {
            assert_eq!(s.index, *i);
            let same = (s.score.is_nan() && e.is_nan())
                || s.score == *e
                || (s.score - e).abs() <= tolerance * e.abs().max(1.0);
            assert!(
                same,
                "{} index {i}: screen {} vs exact {e}",
                c.strategy.name(),
                s.score
            );
        }
    }
}

fn top_k_is_the_exact_ranking_truncated(backend: &dyn ScreenBackend) {
    for c in cases() {
        let mut exact = exact_scores(&c);
        exact.sort_by(|a, b| sieve_core::metrics::rank_order(a.1, a.0, b.1, b.0));
        let k = 25;
        let got: Vec<u64> = screen(backend, &c, k, 0, None)
            .iter()
            .map(|s| s.index)
            .collect();
        let want: Vec<u64> = exact.iter().take(k).map(|e| e.0).collect();
        assert_eq!(got, want, "{}", c.strategy.name());
    }
}

fn thread_count_does_not_change_results(backend: &dyn ScreenBackend) {
    for c in cases() {
        let one = screen(backend, &c, 40, 1, None);
        assert_eq!(
            one,
            screen(backend, &c, 40, 2, None),
            "{}",
            c.strategy.name()
        );
        assert_eq!(
            one,
            screen(backend, &c, 40, 5, None),
            "{}",
            c.strategy.name()
        );
    }
}

fn shards_merge_to_the_whole(backend: &dyn ScreenBackend) {
    for c in cases() {
        let whole = screen(backend, &c, 30, 0, None);
        let size = c.space.size();
        let cut = [0, size / 3, size / 2 + 1, size];
        let mut parts: Vec<Scored> = cut
            .windows(2)
            .flat_map(|w| screen(backend, &c, 30, 0, Some(Batch::Range(w[0]..w[1]))))
            .collect();
        parts.sort_by(Scored::rank_cmp);
        parts.truncate(30);
        assert_eq!(parts, whole, "{}", c.strategy.name());
    }
}

/// A scattered list of grid indices (a search's proposal): every index in
/// the list scored and ranked as the whole grid's screen scores it, none
/// outside it; and resumable from any checkpoint.
fn index_lists_screen_exactly_their_combinations(backend: &dyn ScreenBackend) {
    for c in cases() {
        let size = c.space.size();
        // Every index with a pseudo-random hash below a third, in no order
        // and with repeats (the batch sorts them and drops repeats).
        let mut list: Vec<u64> = (0..size)
            .filter(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) % 3 == 0)
            .collect();
        list.reverse();
        list.extend(list.clone().iter().take(5));
        let batch = Batch::of_indices(list.clone(), size).unwrap();
        assert!(!batch.is_empty() && batch.len() < size, "{}", batch.len());
        let k = 20;
        let got = screen(backend, &c, k, 2, Some(batch.clone()));
        let mut want: Vec<Scored> = screen(backend, &c, size as usize, 2, None)
            .into_iter()
            .filter(|s| list.contains(&s.index))
            .collect();
        want.truncate(k);
        assert_eq!(got, want, "{}", c.strategy.name());
    }
    let c = &case(
        "sma_cross",
        "fast = { start = 2, stop = 40, step = 1 }\nslow = { start = 10, stop = 400, step = 1 }",
        "",
    );
    let size = c.space.size();
    let list: Vec<u64> = (0..size).filter(|i| i % 5 == 1 || i % 11 == 0).collect();
    resume_matches_on(backend, c, Batch::of_indices(list, size).unwrap());
}

fn resume_from_any_checkpoint_matches(backend: &dyn ScreenBackend) {
    // Large enough for several batches on one thread.
    let c = &case(
        "sma_cross",
        "fast = { start = 2, stop = 100, step = 1 }\nslow = { start = 5, stop = 300, step = 5 }",
        "",
    );
    resume_matches(backend, c);
    // A rule strategy whose shared series are built per batch.
    let mut c = case_of(
        MACD_RULES,
        "fast = { start = 2, stop = 30, step = 1 }\nslow = { start = 20, stop = 60, step = 2 }\nsig = { values = [5, 9, 13] }\ntrend = { values = [50, 100, 200] }",
        "",
    );
    c.series_budget = 0;
    resume_matches(backend, &c);
}

fn resume_matches(backend: &dyn ScreenBackend, c: &Case) {
    resume_matches_on(backend, c, Batch::whole(c.space.size()));
}

fn resume_matches_on(backend: &dyn ScreenBackend, c: &Case, batch: Batch) {
    let job = ScreenJob {
        market: &c.market,
        strategy: &*c.strategy,
        space: &c.space,
        batch,
        top: 10,
        threads: 1,
        resume: None,
        series_budget: c.series_budget,
        stop: None,
    };
    let mut checkpoints: Vec<Checkpoint> = Vec::new();
    let whole = backend
        .screen(&job, &mut |cp| {
            checkpoints.push(cp.clone());
            Ok(ControlFlow::Continue(()))
        })
        .unwrap();
    assert!(
        checkpoints.len() >= 2,
        "only {} checkpoint(s)",
        checkpoints.len()
    );
    for cp in checkpoints {
        let resumed = backend
            .screen(
                &ScreenJob {
                    resume: Some(cp),
                    ..job_clone(&job)
                },
                &mut |_| Ok(ControlFlow::Continue(())),
            )
            .unwrap();
        assert_eq!(resumed, whole);
    }
    // Stopped by `Break` after its first batch: a typed stop, and resuming
    // from the checkpoint it was shown gives the whole screen.
    let mut seen: Option<Checkpoint> = None;
    let stopped = backend
        .screen(&job, &mut |cp| {
            seen = Some(cp.clone());
            Ok(ControlFlow::Break(()))
        })
        .unwrap();
    assert_eq!(stopped, Screened::Stopped);
    let resumed = backend
        .screen(
            &ScreenJob {
                resume: seen,
                ..job_clone(&job)
            },
            &mut |_| Ok(ControlFlow::Continue(())),
        )
        .unwrap();
    assert_eq!(resumed, whole);
    // Stopped by `ScreenJob::stop`, set once the first batch is shown but
    // not acted on by `on_batch`: the next batch is dropped, the first
    // checkpoint shown again, and resuming from it gives the whole screen.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut shown: Vec<Checkpoint> = Vec::new();
    let stopped = backend
        .screen(
            &ScreenJob {
                stop: Some(&stop),
                ..job_clone(&job)
            },
            &mut |cp| {
                shown.push(cp.clone());
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                Ok(ControlFlow::Continue(()))
            },
        )
        .unwrap();
    assert_eq!(stopped, Screened::Stopped);
    assert_eq!(shown.len(), 2, "the first batch, then the same state again");
    assert_eq!(shown[0], shown[1]);
    let resumed = backend
        .screen(
            &ScreenJob {
                resume: shown.pop(),
                ..job_clone(&job)
            },
            &mut |_| Ok(ControlFlow::Continue(())),
        )
        .unwrap();
    assert_eq!(resumed, whole);
}

fn job_clone<'a>(j: &ScreenJob<'a>) -> ScreenJob<'a> {
    ScreenJob {
        market: j.market,
        strategy: j.strategy,
        space: j.space,
        batch: j.batch.clone(),
        top: j.top,
        threads: j.threads,
        resume: j.resume.clone(),
        series_budget: j.series_budget,
        stop: None,
    }
}

/// Instantiates the suite for one backend; `$tol` is the allowed relative
/// difference from the exact engine (0 for the CPU backend: it must be equal).
macro_rules! backend_tests {
    ($name:ident, $make:expr, $tol:expr) => {
        mod $name {
            use super::*;

            fn backend() -> Box<dyn ScreenBackend> {
                Box::new($make)
            }

            #[test]
            fn screen_equals_exact_engine() {
                super::screen_equals_exact_engine(backend().as_ref(), $tol);
            }
            #[test]
            fn top_k_is_the_exact_ranking_truncated() {
                super::top_k_is_the_exact_ranking_truncated(backend().as_ref());
            }
            #[test]
            fn thread_count_does_not_change_results() {
                super::thread_count_does_not_change_results(backend().as_ref());
            }
            #[test]
            fn shards_merge_to_the_whole() {
                super::shards_merge_to_the_whole(backend().as_ref());
            }
            #[test]
            fn resume_from_any_checkpoint_matches() {
                super::resume_from_any_checkpoint_matches(backend().as_ref());
            }
            #[test]
            fn index_lists_screen_exactly_their_combinations() {
                super::index_lists_screen_exactly_their_combinations(backend().as_ref());
            }
        }
    };
}

backend_tests!(cpu, CpuBackend, 0.0);

/// The same suite on the GPU backend (`--features gpu`). Without an adapter
/// the tests are skipped, unless `SIEVE_REQUIRE_GPU` is set (CI sets it and
/// installs lavapipe): then they fail.
#[cfg(feature = "gpu")]
mod gpu {
    use super::*;
    use sieve_screen::GpuBackend;

    fn backend() -> Option<GpuBackend> {
        match GpuBackend::new() {
            Ok(b) => {
                eprintln!("{}", b.describe());
                Some(b)
            }
            Err(e) if std::env::var_os("SIEVE_REQUIRE_GPU").is_none() => {
                eprintln!("skipping GPU tests: {e}");
                None
            }
            Err(e) => panic!("SIEVE_REQUIRE_GPU is set but: {e}"),
        }
    }

    /// f32 on device: relative agreement within this, for every combination.
    const TOLERANCE: f64 = 2e-3;

    #[test]
    fn screen_agrees_with_exact_engine_within_tolerance() {
        let Some(b) = backend() else { return };
        super::screen_equals_exact_engine(&b, TOLERANCE);
    }

    #[test]
    fn top_k_overlaps_the_exact_ranking() {
        let Some(b) = backend() else { return };
        for c in cases().into_iter().filter(|c| {
            ["sma_cross", "ema_cross", "activation"].contains(&c.strategy.name())
                || sieve_screen::wgsl::strategy_module(&*c.strategy).is_ok()
        }) {
            let mut exact = exact_scores(&c);
            exact.sort_by(|a, b| sieve_core::metrics::rank_order(a.1, a.0, b.1, b.0));
            let k = 25;
            let got: std::collections::HashSet<u64> =
                screen(&b, &c, k, 0, None).iter().map(|s| s.index).collect();
            let want = k.min(exact.len());
            let hits = exact.iter().take(k).filter(|e| got.contains(&e.0)).count();
            assert!(hits + 1 >= want, "{}: {hits} of {want}", c.strategy.name());
        }
    }

    /// Fee and slippage, lot size, long/short, fill at the close and every
    /// objective: GPU scores within the tolerance of the exact engine.
    #[test]
    fn every_setting_and_objective_agrees_with_the_exact_engine() {
        let Some(b) = backend() else { return };
        super::screen_equals_exact_on(&b, TOLERANCE, setting_cases());
    }

    /// The rule cases the device can run are computed there (f32: some
    /// score differs from the exact f64 one), not on the CPU fallback.
    #[test]
    fn rule_strategies_run_on_the_device() {
        let Some(b) = backend() else { return };
        let on_device: Vec<Case> = cases()
            .into_iter()
            .filter(|c| sieve_screen::wgsl::strategy_module(&*c.strategy).is_ok())
            .collect();
        assert!(
            on_device.len() >= 3,
            "{} rule cases on the device",
            on_device.len()
        );
        for c in on_device {
            let exact: std::collections::HashMap<u64, f64> = exact_scores(&c).into_iter().collect();
            let got = screen(&b, &c, usize::MAX >> 1, 0, None);
            let differs = got
                .iter()
                .filter(|s| s.score.is_finite() && s.score != exact[&s.index])
                .count();
            assert!(
                differs > 0,
                "{}: every score is bit-identical to the CPU's",
                c.strategy.name()
            );
        }
    }

    #[test]
    fn deterministic_and_shards_merge_to_the_whole() {
        let Some(b) = backend() else { return };
        for c in cases() {
            assert_eq!(
                screen(&b, &c, 40, 1, None),
                screen(&b, &c, 40, 2, None),
                "{}",
                c.strategy.name()
            );
        }
        super::shards_merge_to_the_whole(&b);
    }

    #[test]
    fn resume_from_any_checkpoint_matches() {
        let Some(b) = backend() else { return };
        // Small chunks, so the grid takes several.
        super::resume_from_any_checkpoint_matches(&b.with_max_chunk(1000));
    }

    /// Several instruments go to the CPU: the backend says why (for the
    /// caller to show) and screens exactly as the CPU backend does.
    #[test]
    fn a_fallback_is_said_and_screens_as_the_cpu() {
        let Some(b) = backend() else { return };
        for c in market_cases() {
            falls_back_as_the_cpu(&b, &c, "instruments");
        }
    }

    /// `c` goes to the CPU with a notice that names `why`, and screens
    /// there exactly as the CPU backend does.
    fn falls_back_as_the_cpu(b: &GpuBackend, c: &Case, why: &str) {
        let job = ScreenJob {
            market: &c.market,
            strategy: &*c.strategy,
            space: &c.space,
            batch: Batch::whole(c.space.size()),
            top: 20,
            threads: 2,
            resume: None,
            series_budget: c.series_budget,
            stop: None,
        };
        let said = b.fallback(&job).expect("a fallback");
        assert!(said.contains(why), "{said}");
        assert_eq!(CpuBackend.fallback(&job), None);
        assert_eq!(
            screen(b, c, 20, 2, None),
            screen(&CpuBackend, c, 20, 2, None)
        );
    }

    /// A peer's stop conventions go to the CPU, said, and screen there as
    /// the CPU backend does.
    #[test]
    fn a_peers_conventions_fall_back_to_the_cpu() {
        let Some(b) = backend() else { return };
        let c = case_of(
            "entry = \"close > sma(close, n)\"\nexit = \"close < sma(close, n)\"\nstop_loss = 0.05",
            "n = { values = [10, 20, 30] }",
            "[backtest]\nconventions = \"vectorbt\"",
        );
        falls_back_as_the_cpu(&b, &c, "conventions");
    }

    /// Detail bars (`data.detail`) go to the CPU, said, and screen there
    /// as the CPU backend does.
    #[test]
    fn detail_bars_fall_back_to_the_cpu() {
        let Some(b) = backend() else { return };
        // Four 6-hour bars under each daily bar.
        let mut fine = synth(10_000, 11);
        let t0 = fine.time[0];
        for (i, t) in fine.time.iter_mut().enumerate() {
            *t = t0 + i as i64 * 21_600_000;
        }
        let mut daily = sieve_core::data::coarsen(&fine, 4);
        let detail = sieve_core::data::Detail::map(daily.prices(), fine.prices()).unwrap();
        daily.detail = Some(std::sync::Arc::new(detail));
        let c = case_on(
            "entry = \"close > sma(close, n)\"\nexit = \"close < sma(close, n)\"\nstop_loss = 0.02\ntake_profit = 0.02",
            "n = { values = [10, 20, 30] }",
            "",
            vec![(String::new(), daily)],
        );
        falls_back_as_the_cpu(&b, &c, "detail");
    }

    #[test]
    fn index_lists_screen_exactly_their_combinations() {
        let Some(b) = backend() else { return };
        super::index_lists_screen_exactly_their_combinations(&b.with_max_chunk(1000));
    }
}
