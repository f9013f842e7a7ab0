//! The screen in lanes gives exactly — bit for bit — what the scalar screen
//! gives for each combination, with every vector code the CPU runs (portable,
//! AVX2, AVX-512), whatever the engine settings, objective, direction,
//! windows and strategy.

use proptest::prelude::*;
use sieve_core::config::{Config, ScreenWindow};
use sieve_core::data::{synth, Bars};
use sieve_core::engine::{EngineConfig, Fill};
use sieve_core::evaluate::{Evaluator, Scoring, ScreenScore};
use sieve_core::indicators::IndicatorSet;
use sieve_core::lanes::{LaneScratch, Level, LANES};
use sieve_core::metrics::{Boundary, Objective};
use sieve_core::strategy::{self, Direction, ParamKind, Strategy as SieveStrategy};

/// NaN equals NaN; everything else by its bits.
fn same(a: &ScreenScore, b: &ScreenScore) -> bool {
    let bits = |x: f64| if x.is_nan() { u64::MAX } else { x.to_bits() };
    bits(a.objective) == bits(b.objective)
        && a.trades == b.trades
        && bits(a.sharpe) == bits(b.sharpe)
}

/// Screens `sets` one by one and in lanes (every vector level the CPU runs,
/// and the default choice) and compares.
fn check(bars: &Bars, config: &Config, s: &dyn SieveStrategy, sets: &[Vec<f64>]) {
    let scoring = Scoring::new(&config.scoring(), bars).unwrap();
    let keys = Evaluator::indicators_for(s, sets.iter().map(Vec::as_slice));
    let ind = IndicatorSet::build_for(bars, s.series(), keys);
    let eval = Evaluator {
        bars,
        strategy: s,
        indicators: &ind,
        scoring: &scoring,
        portfolio: None,
    };
    let mut scratch = Vec::new();
    let expected: Vec<ScreenScore> = sets.iter().map(|p| eval.screen(p, &mut scratch)).collect();
    let fail = |p: &[f64], g: &ScreenScore, w: &ScreenScore, how: &str| {
        panic!(
            "{} {p:?} with {:?}, {:?}, {:?} ({how}): lanes {g:?}, scalar {w:?}",
            s.name(),
            config.scoring.engine,
            config.scoring.direction,
            config.scoring.objective
        )
    };
    let params: Vec<&[f64]> = sets.iter().map(Vec::as_slice).collect();
    let unset = ScreenScore {
        objective: -1.0,
        trades: 0,
        sharpe: -1.0,
    };
    let scratches = Level::available().into_iter().map(LaneScratch::always);
    let unmemoized = LaneScratch::always(Level::best()).without_memo();
    for mut lanes in scratches.chain([LaneScratch::default(), unmemoized]) {
        // A batch at a time; then all at once with the memo full of their
        // targets (every lane a hit); then all at once with an empty memo
        // (repeats wait beside the lanes they repeat).
        for (group, want) in params.chunks(LANES).zip(expected.chunks(LANES)) {
            let mut got = vec![unset; group.len()];
            eval.screen_lanes(group, &mut lanes, &mut got);
            for ((g, w), p) in got.iter().zip(want).zip(group) {
                if !same(g, w) {
                    fail(p, g, w, "a batch");
                }
            }
        }
        for (how, scratch) in [
            ("remembered", &mut lanes),
            ("at once", &mut LaneScratch::default()),
        ] {
            let mut got = vec![unset; params.len()];
            eval.screen_lanes(&params, scratch, &mut got);
            for ((g, w), p) in got.iter().zip(&expected).zip(&params) {
                if !same(g, w) {
                    fail(p, g, w, how);
                }
            }
        }
    }
}

/// Parameter sets of `s` drawn from its grid ranges by `seed`.
fn param_sets(s: &dyn SieveStrategy, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            s.params()
                .iter()
                .map(|spec| {
                    let (lo, hi, _) = spec.grid;
                    let v = lo + next() * (hi - lo);
                    if spec.kind == ParamKind::Int {
                        v.round()
                    } else {
                        v
                    }
                })
                .collect()
        })
        .collect()
}

/// The config of the strategy (and anything else) that `text` sets
/// (`""`: the default strategy), with these settings.
#[allow(clippy::too_many_arguments)]
fn config_of(
    text: &str,
    engine: EngineConfig,
    direction: Direction,
    objective: Objective,
    score_share: f64,
    holdout_share: Option<f64>,
    screen_full: bool,
    min_trades: u64,
) -> Config {
    let mut c = Config::parse(text).unwrap();
    c.scoring.engine = engine;
    c.scoring.direction = direction;
    c.scoring.objective = objective;
    c.scoring.score_start = (score_share > 0.0).then_some(Boundary::Share(score_share));
    c.scoring.holdout_start = holdout_share.map(Boundary::Share);
    c.scoring.screen_window = if screen_full {
        ScreenWindow::Full
    } else {
        ScreenWindow::Score
    };
    c.scoring.min_trades = min_trades;
    c
}

/// The default engine, Sharpe on every bar, in `direction`.
fn default_engine(direction: Direction) -> Config {
    config_of(
        "",
        EngineConfig::default(),
        direction,
        Objective::Sharpe,
        0.0,
        None,
        false,
        0,
    )
}

/// Rule strategies: the shipped examples, rules that go short and cross
/// often, and a crossing pair of other averages of other prices (the
/// built-in crosses' scan, like the sma_cross and ema_cross examples).
const RULE_STRATEGIES: [&str; 9] = [
    include_str!("../../../../examples/strategies/sma_cross.toml"),
    include_str!("../../../../examples/strategies/ema_cross.toml"),
    include_str!("../../../../examples/strategies/macd.toml"),
    include_str!("../../../../examples/strategies/rsi_reversion.toml"),
    include_str!("../../../../examples/strategies/bollinger_reversion.toml"),
    include_str!("../../../../examples/strategies/weighted_score.toml"),
    include_str!("../../../../examples/strategies/supertrend_sar.toml"),
    r#"
[strategy]
name = "swing"
entry = "cross_above(close, sma(close, n))"
exit = "cross_below(close, sma(close, n)) or rsi(close, k) > u"
short_entry = "close < sma(close, n) and rsi(close, k) < 100 - u"
short_exit = "cross_above(close, sma(close, n))"
[strategy.params]
n = { start = 2, stop = 40, step = 1 }
k = { start = 2, stop = 20, step = 1 }
u = { start = 50, stop = 90, step = 5 }
"#,
    r#"
[strategy]
name = "pair"
entry = "cross_above(wma(high, a), lowest(close, b))"
exit = "cross_below(wma(high, a), lowest(close, b))"
[strategy.params]
a = { start = 1, stop = 30, step = 1 }
b = { start = 1, stop = 30, step = 1 }
"#,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Every built-in strategy and the rule strategies above (which the
    /// screen runs in lanes on AVX2).
    #[test]
    fn lanes_equal_the_scalar_screen(
        seed in 0u64..1_000_000,
        n_bars in 30usize..900,
        strategy_pick in 0usize..64,
        close_fill in any::<bool>(),
        fee in prop_oneof![Just(0.0), 0.0..0.01],
        slippage in prop_oneof![Just(0.0), 0.0..0.005],
        lot in prop_oneof![Just(0.0), Just(1.0), Just(50.0)],
        long_short in any::<bool>(),
        objective in 0usize..6,
        score_share in prop_oneof![Just(0.0), 0.0..0.9],
        holdout in prop_oneof![Just(None), (0.91..0.99).prop_map(Some)],
        screen_full in any::<bool>(),
        min_trades in 0u64..3,
        n_sets in 1usize..20,
    ) {
        let bars = synth(n_bars, seed);
        let registry = strategy::registry();
        let pick = strategy_pick % (registry.len() + RULE_STRATEGIES.len());
        let text = match registry.get(pick) {
            Some(s) => format!("[strategy]\nname = \"{}\"\n", s.name()),
            None => RULE_STRATEGIES[pick - registry.len()].to_string(),
        };
        let engine = EngineConfig {
            fill: if close_fill { Fill::Close } else { Fill::NextOpen },
            fee,
            slippage,
            lot_size: lot,
            initial_cash: 10_000.0,
            ..EngineConfig::default()
        };
        let direction = if long_short { Direction::LongShort } else { Direction::Long };
        let c = config_of(&text, engine, direction, Objective::ALL[objective], score_share, holdout, screen_full, min_trades);
        let shared = c.strategy().unwrap();
        let s = &*shared;
        check(&bars, &c, s, &param_sets(s, n_sets, seed));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// `activation` sets that share the score series (the same indicators
    /// and weights, other thresholds and stops: a grid's usual group) take
    /// the vector state machine; it agrees with the scalar one, including
    /// entry ≤ exit (a trade every bar), no stop, all weights zero, and
    /// batches that hold the end of one group and the start of the next.
    #[test]
    fn activation_thresholds_in_lanes_equal_the_scalar_screen(
        seed in 0u64..1_000_000,
        n_bars in 60usize..900,
        close_fill in any::<bool>(),
        long_short in any::<bool>(),
        zero_weights in prop::bool::weighted(0.15),
        score_share in prop_oneof![Just(0.0), 0.0..0.9],
        n_sets in 1usize..20,
        next_group in 0usize..20,
    ) {
        let bars = synth(n_bars, seed);
        let s = strategy::lookup("activation").unwrap();
        let mut sets = param_sets(s, n_sets, seed);
        let (first, steps) = (sets[0].clone(), [0.25, 0.5, 0.75]);
        for (i, p) in sets.iter_mut().enumerate() {
            // Indicators and weights of the first set; thresholds on a
            // coarse grid so some repeat and some tie.
            p[..7].copy_from_slice(&first[..7]);
            if zero_weights {
                p[4..7].fill(0.0);
            }
            p[7] = steps[i % 3] - 0.25 * (i % 2) as f64;
            p[8] = steps[(i / 3) % 3] - 0.5;
            p[9] = [0.0, 1.0, 2.5][(i / 2) % 3];
            if i >= next_group {
                // Another group: another trend weight.
                p[4] += 0.5;
            }
        }
        let engine = EngineConfig {
            fill: if close_fill { Fill::Close } else { Fill::NextOpen },
            ..EngineConfig::default()
        };
        let direction = if long_short { Direction::LongShort } else { Direction::Long };
        let c = config_of("", engine, direction, Objective::Sharpe, score_share, None, false, 0);
        check(&bars, &c, s, &sets);
    }
}

/// Lanes whose equity leaves the positive numbers (a short through a price
/// gap of twelve times; a long account that cannot afford a lot) go
/// through the scalar engine and still agree.
#[test]
fn lanes_outside_the_fast_path_agree_too() {
    // Down, a gap up twelvefold, then down again.
    let n = 400;
    let close: Vec<f64> = (0..n)
        .map(|i| {
            let t = i as f64;
            let base = if i < 150 {
                100.0 - 0.5 * t
            } else if i < 300 {
                // A gap: shorts held into it lose more than everything.
                300.0 + (t - 150.0) / 15.0
            } else {
                275.0 - 0.8 * (t - 300.0)
            };
            base + 3.0 * (t * 0.7).sin()
        })
        .collect();
    let open: Vec<f64> = std::iter::once(close[0])
        .chain(close[..n - 1].iter().copied())
        .collect();
    let bars = crate::bars(&open, &close);
    let s = strategy::lookup("sma_cross").unwrap();
    let sets: Vec<Vec<f64>> = (0..24)
        .map(|i| vec![2.0 + (i % 6) as f64, 8.0 + (i / 6) as f64 * 5.0])
        .collect();
    for (lot, score_share) in [(0.0, 0.3), (0.0, 0.6), (40.0, 0.3), (400.0, 0.3)] {
        for direction in [Direction::LongShort, Direction::Long] {
            let engine = EngineConfig {
                lot_size: lot,
                fee: 0.001,
                ..EngineConfig::default()
            };
            let c = config_of(
                "",
                engine,
                direction,
                Objective::Calmar,
                score_share,
                None,
                false,
                0,
            );
            check(&bars, &c, s, &sets);
        }
    }
    // The case is real: some short's equity goes below zero.
    let c = config_of(
        "",
        EngineConfig::default(),
        Direction::LongShort,
        Objective::Calmar,
        0.3,
        None,
        false,
        0,
    );
    let scoring = Scoring::new(&c.scoring(), &bars).unwrap();
    let keys = Evaluator::indicators_for(s, sets.iter().map(Vec::as_slice));
    let ind = IndicatorSet::build(&bars, keys);
    let eval = Evaluator {
        bars: &bars,
        strategy: s,
        indicators: &ind,
        scoring: &scoring,
        portfolio: None,
    };
    assert!(sets
        .iter()
        .any(|p| eval.backtest(p).equity.iter().any(|&e| e < 0.0)));
}

/// Lanes without a stop take an infinite one (the ATR is never negative):
/// bars that do not move at first give an ATR of exactly 0 (∞ · 0 is NaN
/// there), and lanes that enter long on that stretch (entry ≤ 0) still
/// agree with the scalar screen, stop or none. (With shorts, the score of
/// such a stretch is 0, where a lane with entry ≤ 0 both rises and falls,
/// so no short holds there: the short side's negated tests are checked
/// on NaN by the `simd` unit test.)
#[test]
fn lanes_without_a_stop_agree_where_the_atr_is_zero() {
    let n = 500;
    let moving = synth(n, 7);
    let flat = 150;
    let pick = |series: &[f64], i: usize| if i < flat { 100.0 } else { series[i] };
    let bars = Bars {
        time: moving.time.clone(),
        open: (0..n).map(|i| pick(&moving.open, i)).collect(),
        high: (0..n).map(|i| pick(&moving.high, i)).collect(),
        low: (0..n).map(|i| pick(&moving.low, i)).collect(),
        close: (0..n).map(|i| pick(&moving.close, i)).collect(),
        volume: None,
        timezone: None,
        extra: Vec::new(),
        unread: Vec::new(),
        detail: None,
        frames: None,
    };
    let s = strategy::lookup("activation").unwrap();
    let mut sets = Vec::new();
    for entry in [-0.5, 0.0, 0.3] {
        for stop in [0.0, 2.0, 0.0, 1.0] {
            // trend_len, rsi_len, dc_len, atr_len, weights, entry, exit, stop
            sets.push(vec![
                20.0,
                14.0,
                20.0,
                14.0,
                1.0,
                0.5,
                1.0,
                entry,
                entry - 0.4,
                stop,
            ]);
        }
    }
    for direction in [Direction::Long, Direction::LongShort] {
        check(&bars, &default_engine(direction), s, &sets);
    }
    // The case is real: the ATR is exactly 0 on bars where a lane without
    // a stop is long.
    let keys = Evaluator::indicators_for(s, sets.iter().map(Vec::as_slice));
    let ind = IndicatorSet::build(&bars, keys);
    let atr = ind.get(sieve_core::indicators::Indicator::Atr(14));
    let scoring = Scoring::new(&Config::parse("").unwrap().scoring(), &bars).unwrap();
    let eval = Evaluator {
        bars: &bars,
        strategy: s,
        indicators: &ind,
        scoring: &scoring,
        portfolio: None,
    };
    let mut positions = Vec::new();
    eval.positions(&sets[0], &mut positions);
    assert!((0..n).any(|t| atr[t] == 0.0 && positions[t] == 1));
}

/// Scratch space remembers scores by targets for one screen: handing it an
/// evaluator of other bars is a programming error, and it says so instead
/// of returning the first screen's scores.
#[test]
#[should_panic(expected = "serves one screen")]
fn scratch_space_refuses_a_second_screen() {
    let s = strategy::lookup("sma_cross").unwrap();
    let sets = [vec![5.0, 20.0]];
    let params: Vec<&[f64]> = sets.iter().map(Vec::as_slice).collect();
    let config = Config::parse("").unwrap();
    let mut lanes = LaneScratch::default();
    let mut out = [ScreenScore::default()];
    let (a, b) = (synth(300, 1), synth(300, 2));
    for bars in [&a, &b] {
        let scoring = Scoring::new(&config.scoring(), bars).unwrap();
        let keys = Evaluator::indicators_for(s, sets.iter().map(Vec::as_slice));
        let ind = IndicatorSet::build(bars, keys);
        let eval = Evaluator {
            bars,
            strategy: s,
            indicators: &ind,
            scoring: &scoring,
            portfolio: None,
        };
        eval.screen_lanes(&params, &mut lanes, &mut out);
    }
}

/// `activation` sets whose targets the strategy keys alike (a term weighted
/// 0, whose length then does not count; no stop, so the ATR's length counts
/// only in the trend term) reuse each other's scores, batch after batch:
/// still exactly the scalar screen's, also where the irrelevant length
/// moves the first bar simulated (an RSI longer than every other warmup).
#[test]
fn activation_sets_keyed_alike_share_scores_exactly() {
    let s = strategy::lookup("activation").unwrap();
    let mut sets = Vec::new();
    for rsi_len in [7.0, 14.0, 40.0, 7.0] {
        for i in 0..LANES {
            // trend_len, rsi_len, dc_len, atr_len, weights, entry, exit, stop
            sets.push(vec![
                20.0,
                rsi_len,
                10.0,
                10.0,
                1.0,
                0.0,
                0.5,
                0.1 + 0.1 * (i % 4) as f64,
                -0.2 + 0.2 * (i / 4) as f64,
                if i % 3 == 0 { 0.0 } else { 1.5 },
            ]);
        }
    }
    for (seed, long_short) in [(3, false), (4, true), (5, false)] {
        let bars = synth(400, seed);
        let direction = if long_short {
            Direction::LongShort
        } else {
            Direction::Long
        };
        check(&bars, &default_engine(direction), s, &sets);
    }
}

/// `activation`'s changes from the lanes are entry for entry those of its
/// positions (what the memo keys on), also where a lane still holds a
/// position at the last bar of bars that are not whole 64-bar words.
#[test]
fn activation_lane_changes_equal_its_positions_as_changes() {
    use sieve_core::strategy::{Changes, LaneBuffers};
    let s = strategy::lookup("activation").unwrap();
    let mut held_at_end = 0;
    for (n, seed, direction) in [
        (300, 1, Direction::Long),
        (333, 2, Direction::LongShort),
        (448, 3, Direction::Long),
    ] {
        let bars = synth(n, seed);
        let sets: Vec<Vec<f64>> = (0..LANES)
            .map(|i| {
                let entry = -0.3 + 0.1 * (i % 4) as f64;
                let stop = if i < 4 { 0.0 } else { 3.0 };
                vec![20.0, 14.0, 10.0, 10.0, 1.0, 0.5, 0.5, entry, -0.99, stop]
            })
            .collect();
        let params: Vec<&[f64]> = sets.iter().map(Vec::as_slice).collect();
        let ind = IndicatorSet::build(&bars, Evaluator::indicators_for(s, params.iter().copied()));
        for level in Level::available() {
            let mut buffers = LaneBuffers::default();
            let mut got: [Changes; LANES] = Default::default();
            s.lane_changes(
                &bars,
                &ind,
                &params,
                direction,
                n,
                level,
                &mut buffers,
                &mut got,
            );
            for (p, got) in params.iter().zip(&got) {
                let mut positions = vec![0; n];
                s.positions(&bars, &ind, p, direction, &mut positions);
                let mut want = Changes::default();
                want.set_from(&positions);
                assert_eq!(got, &want, "{level:?} {p:?} on {n} bars");
                held_at_end += usize::from(positions[n - 1] != 0);
            }
        }
    }
    assert!(held_at_end > 0, "no lane held a position at the end");
}
