//! Trade management (stops, targets, `max_bars`, `size`, liquidation)
//! worked by hand on bars small enough to follow: every fill price, exit
//! reason and the final equity is computed here from the rules in
//! docs/config.md, not by the engine.

use sieve_core::config::Config;
use sieve_core::data::Bars;
use sieve_core::engine::{Backtest, ExitReason};
use sieve_core::evaluate::{Evaluator, Scoring};
use sieve_core::indicators::IndicatorSet;
use sieve_core::strategy::indicators_for;

use crate::assert_close;

/// Daily bars from rows of (open, high, low, close).
fn ohlc(rows: &[[f64; 4]]) -> Bars {
    Bars {
        time: (0..rows.len() as i64)
            .map(|i| 1_577_836_800_000 + i * 86_400_000)
            .collect(),
        open: rows.iter().map(|r| r[0]).collect(),
        high: rows.iter().map(|r| r[1]).collect(),
        low: rows.iter().map(|r| r[2]).collect(),
        close: rows.iter().map(|r| r[3]).collect(),
        volume: None,
        timezone: None,
        extra: Vec::new(),
        unread: Vec::new(),
        detail: None,
        frames: None,
    }
}

/// The exact backtest of `strategy` (keys of `[strategy]`) with
/// `backtest` (keys of `[backtest]`, 1000 cash) on `rows`; also checks that
/// the screen's objective is the backtest's.
fn run(strategy: &str, backtest: &str, rows: &[[f64; 4]]) -> Backtest {
    run_on(strategy, backtest, ohlc(rows))
}

/// [`run`] on `bars`.
fn run_on(strategy: &str, backtest: &str, bars: Bars) -> Backtest {
    let config = Config::parse(&format!(
        "[strategy]\nname = \"m\"\n{strategy}\n[backtest]\ninitial_cash = 1000\n{backtest}\n[score]\nmin_trades = 0\n"
    ))
    .unwrap();
    let shared = config.strategy().unwrap();
    let s = &*shared;
    let set = IndicatorSet::build_for(&bars, s.series(), indicators_for(s, &[]));
    let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
    let eval = Evaluator {
        bars: &bars,
        strategy: s,
        indicators: &set,
        scoring: &scoring,
        portfolio: None,
    };
    let bt = eval.backtest(&[]);
    let m = eval.metrics(&bt, &scoring.windows.score);
    let screened = eval.screen(&[], &mut Vec::new());
    assert_eq!(
        screened.objective.to_bits(),
        eval.objective(&m).to_bits(),
        "screen == exact"
    );
    bt
}

/// (entry bar, entry price, exit bar, exit price, reason) of each trade.
fn trades(bt: &Backtest) -> Vec<(usize, f64, Option<usize>, f64, ExitReason)> {
    bt.trades
        .iter()
        .map(|t| {
            (
                t.entry_bar,
                t.entry_price,
                t.exit_bar,
                t.exit_price,
                t.exit_reason,
            )
        })
        .collect()
}

fn last(bt: &Backtest) -> f64 {
    *bt.equity.last().unwrap()
}

use ExitReason::*;

const ENTER_AT_10: &str = "entry = \"close == 10\"\nexit = \"false\"";

#[test]
fn a_stop_inside_the_bar_and_one_hit_on_the_fill_bar_with_next_open() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 11.0, 9.5, 10.5],  // filled at 10: 100 units, stop 9; low 9.5
        [10.5, 10.6, 8.5, 9.5],   // low 8.5 <= 9: out at 9 (cash 900)
        [9.5, 10.0, 9.0, 10.0],   // entry decided again
        [8.0, 9.0, 7.0, 8.0],     // filled at 8: 112.5 units, stop 7.2; low 7
    ];
    let bt = run(&format!("{ENTER_AT_10}\nstop_loss = 0.1"), "", &rows);
    assert_eq!(
        trades(&bt),
        [
            (1, 10.0, Some(2), 9.0, StopLoss),
            (4, 8.0, Some(4), 7.2, StopLoss),
        ]
    );
    // 900 after the first; 112.5 × (7.2 − 8) = −90 on the second.
    assert_close!(last(&bt), 810.0);
    assert_eq!(bt.position, [0, 1, 0, 0, 0]);
}

#[test]
fn with_fill_close_the_fill_bar_is_not_exposed() {
    let rows = [
        [10.0, 10.0, 8.0, 10.0], // filled at the close 10; its low 8 does not count
        [10.0, 11.0, 9.5, 10.5],
        [9.5, 9.6, 8.5, 9.5], // stop 9 touched
    ];
    let bt = run(
        &format!("{ENTER_AT_10}\nstop_loss = 0.1"),
        "fill = \"close\"",
        &rows,
    );
    assert_eq!(trades(&bt), [(0, 10.0, Some(2), 9.0, StopLoss)]);
    assert_close!(last(&bt), 900.0);
}

#[test]
fn gaps_through_a_stop_or_a_target_fill_at_the_open() {
    let stop_gap = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0], // filled at 10, stop 9, target 12
        [8.5, 9.0, 8.0, 8.8],    // opens below the stop: out at 8.5
    ];
    let keys = format!("{ENTER_AT_10}\nstop_loss = 0.1\ntake_profit = 0.2");
    let bt = run(&keys, "", &stop_gap);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 8.5, StopLoss)]);
    assert_close!(last(&bt), 850.0);
    let target_gap = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [12.5, 13.0, 12.2, 12.8], // opens above the target 12: out at 12.5
    ];
    let bt = run(&keys, "", &target_gap);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 12.5, TakeProfit)]);
    assert_close!(last(&bt), 1250.0);
    // Touched inside the bar: at the level.
    let target_inside = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [11.0, 12.3, 10.8, 11.5],
    ];
    let bt = run(&keys, "", &target_inside);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 12.0, TakeProfit)]);
    assert_close!(last(&bt), 1200.0);
}

#[test]
fn both_levels_touched_in_one_bar_is_the_stop() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [10.0, 12.5, 8.5, 11.0], // high >= 12 and low <= 9
    ];
    let keys = format!("{ENTER_AT_10}\nstop_loss = 0.1\ntake_profit = 0.2");
    let bt = run(&keys, "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.0, StopLoss)]);
}

#[test]
fn a_decided_exit_fills_at_the_open_before_a_stop_touched_later() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 9.8], // exit decided (close < 10)
        [9.6, 9.7, 8.0, 8.5],   // exit at the open 9.6; the stop 9 is not taken
        [8.5, 8.6, 8.4, 8.5],
    ];
    let bt = run(
        "entry = \"close == 10\"\nexit = \"close < 10\"\nstop_loss = 0.1",
        "",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.6, Rule)]);
    assert_close!(last(&bt), 960.0);
}

#[test]
fn a_short_stop_and_target_are_mirrored() {
    let rules = "entry = \"false\"\nexit = \"false\"\nshort_entry = \"close == 10\"\nshort_exit = \"false\"";
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],  // short 100 at 10: stop 11, target 8
        [10.5, 11.5, 10.2, 11.2], // high 11.5 >= 11: bought back at 11
    ];
    let keys = format!("{rules}\nstop_loss = 0.1\ntake_profit = 0.2");
    let bt = run(&keys, "direction = \"long_short\"", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 11.0, StopLoss)]);
    assert_close!(last(&bt), 900.0);
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [9.0, 9.2, 7.5, 8.2], // low 7.5 <= 8: bought back at 8
    ];
    let bt = run(&keys, "direction = \"long_short\"", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 8.0, TakeProfit)]);
    assert_close!(last(&bt), 1200.0);
}

#[test]
fn fees_and_slippage_apply_to_stop_fills() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [9.5, 9.6, 8.0, 8.5],
    ];
    let bt = run(
        &format!("{ENTER_AT_10}\nstop_loss = 0.1"),
        "fee = 0.01\nslippage = 0.01",
        &rows,
    );
    // Bought at 10.1 with all 1000 including the fee; the stop is 10%
    // below the fill price: 9.09, sold at 9.09 × 0.99 less a 1% fee.
    let entry = 10.0 * 1.01;
    let units = 1000.0 / (entry * 1.01);
    let stop = entry * 0.9;
    let sold = stop * 0.99;
    let cash = units * sold * (1.0 - 0.01);
    let t = &bt.trades[0];
    assert_eq!((t.exit_bar, t.exit_reason), (Some(2), StopLoss));
    assert_close!(t.entry_price, entry);
    assert_close!(t.exit_price, sold);
    assert_close!(last(&bt), cash);
}

#[test]
fn whole_lots_and_a_stop_in_price_units() {
    let rows = [
        [7.0, 7.0, 7.0, 10.0],
        [7.0, 7.5, 6.5, 7.2], // 1000 / 7 = 142.9: 140 units at 7, stop 7 − 2 = 5
        [6.0, 6.2, 4.5, 5.5], // low 4.5 <= 5: out at 5
    ];
    let bt = run(
        &format!("{ENTER_AT_10}\nstop_distance = 2"),
        "lot_size = 10",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 7.0, Some(2), 5.0, StopLoss)]);
    assert_eq!(bt.trades[0].units, 140.0);
    assert_close!(last(&bt), 1000.0 - 140.0 * 2.0);
}

#[test]
fn max_bars_with_either_fill() {
    let rows = [[10.0, 10.5, 9.5, 10.0]; 6];
    // Entry on every close at 10; next_open: filled at bar 1 (held 0 at
    // its close), held 2 at bar 3's close → out at bar 4's open, and the
    // level rule decides again on bar 4's close → in at bar 5.
    let bt = run(&format!("{ENTER_AT_10}\nmax_bars = 2"), "", &rows);
    assert_eq!(
        trades(&bt)
            .iter()
            .map(|t| (t.0, t.2, t.4))
            .collect::<Vec<_>>(),
        [(1, Some(4), MaxBars), (5, None, End)]
    );
    // close: filled at bar 0's close, out at bar 2's close; in again at
    // bar 3's close (bar 2 decided the exit), out at bar 5's.
    let bt = run(
        &format!("{ENTER_AT_10}\nmax_bars = 2"),
        "fill = \"close\"",
        &rows,
    );
    assert_eq!(
        trades(&bt)
            .iter()
            .map(|t| (t.0, t.2, t.4))
            .collect::<Vec<_>>(),
        [(0, Some(2), MaxBars), (3, Some(5), MaxBars)]
    );
}

#[test]
fn size_below_and_above_one() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [10.0, 12.5, 9.5, 12.0],
    ];
    let bt = run(&format!("{ENTER_AT_10}\nsize = 0.5"), "", &rows);
    assert_eq!(bt.trades[0].units, 50.0);
    assert_close!(last(&bt), 500.0 + 50.0 * 12.0);
    // Above max_leverage (2): capped at 2 → 200 units, −1000 cash (an
    // expression; a constant above the cap is refused).
    let bt = run(
        &format!("{ENTER_AT_10}\nsize = \"close * 0.3\""),
        "max_leverage = 2",
        &rows,
    );
    assert_eq!(bt.trades[0].units, 200.0);
    assert_close!(last(&bt), -1000.0 + 200.0 * 12.0);
    // Off (≤ 0) means all equity.
    let bt = run(&format!("{ENTER_AT_10}\nsize = \"close - 10\""), "", &rows);
    assert_eq!(bt.trades[0].units, 100.0);
}

#[test]
fn a_close_at_or_below_zero_equity_liquidates_and_ends_trading() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],  // 200 units with 2× size: cash −1000
        [8.0, 8.0, 4.5, 4.9],     // equity −1000 + 980 = −20: liquidated
        [10.0, 10.0, 10.0, 10.0], // entry would fire again: nothing
        [10.0, 11.0, 9.0, 10.0],
    ];
    let bt = run(
        &format!("{ENTER_AT_10}\nsize = 2"),
        "max_leverage = 2",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 4.9, Liquidated)]);
    assert_eq!(&bt.equity[2..], [0.0, 0.0, 0.0]);
    assert_eq!(bt.position, [0, 1, 0, 0, 0]);
    // A short 100 at 10 (cash 2000) closing at 21: equity −100.
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 10.0],
        [15.0, 22.0, 15.0, 21.0],
    ];
    let bt = run(
        "entry = \"false\"\nexit = \"close == 10\"\nsize = 1",
        "direction = \"long_short\"",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 21.0, Liquidated)]);
    assert_eq!(last(&bt), 0.0);
}

#[test]
fn a_stop_or_a_gap_that_loses_more_than_the_equity_liquidates() {
    // Three times the equity long at 100 (30 units, cash −2,000); the
    // stop 40 % below is touched at 60: sold at 60, cash −200 → 0.
    let rows = [
        [100.0, 100.0, 100.0, 100.0],
        [100.0, 100.0, 50.0, 90.0],
        [95.0, 101.0, 94.0, 101.0],
    ];
    let bt = run(
        "entry = \"close > 99\"\nexit = \"close < 0\"\nsize = 3\nstop_loss = 0.4",
        "fill = \"close\"\nmax_leverage = 3",
        &rows,
    );
    assert_eq!(trades(&bt)[0].4, StopLoss);
    assert_eq!(bt.equity[1], 0.0, "clamped at the close");
    assert_eq!(bt.equity[2], 0.0, "and trades no more");
    assert_eq!(bt.trades.len(), 1);
    // A gap from 100 to 20 with twice the equity: out at the open, lost.
    let rows = [
        [100.0, 100.0, 100.0, 100.0],
        [100.0, 100.0, 99.0, 100.0],
        [20.0, 21.0, 19.0, 20.0],
        [100.0, 101.0, 99.0, 100.0],
    ];
    let bt = run(
        "entry = \"close == 100\"\nexit = \"false\"\nsize = 2\nstop_loss = 0.3",
        "max_leverage = 2",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 100.0, Some(2), 20.0, StopLoss)]);
    assert_eq!(&bt.equity[2..], [0.0, 0.0]);
}

#[test]
fn after_a_stop_a_level_rule_reenters_on_that_close_and_a_crossing_waits() {
    let rows = [
        [9.0, 9.0, 9.0, 9.0],
        [9.0, 10.0, 9.0, 10.0], // both rules enter (above 9.5, and crosses it)
        [10.0, 10.5, 9.6, 10.0], // filled at 10, stop 9.5 (5%)
        [10.0, 10.2, 9.4, 10.0], // stopped at 9.5; close 10 still above 9.5
        [10.0, 10.5, 9.8, 10.2],
    ];
    let level = run(
        "entry = \"close > 9.5\"\nexit = \"false\"\nstop_loss = 0.05",
        "",
        &rows,
    );
    assert_eq!(
        trades(&level),
        [
            (2, 10.0, Some(3), 9.5, StopLoss),
            (4, 10.0, None, 10.2, End)
        ]
    );
    let crossing = run(
        "entry = \"cross_above(close, 9.5)\"\nexit = \"false\"\nstop_loss = 0.05",
        "",
        &rows,
    );
    assert_eq!(trades(&crossing), [(2, 10.0, Some(3), 9.5, StopLoss)]);
}

#[test]
fn exit_reasons_of_rules_reversals_trailing_stops_and_the_end() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 11.0, 10.0, 11.0],
        [11.0, 11.0, 8.0, 8.0], // trailing stop 2 below 11: out at the next open
        [8.0, 10.0, 8.0, 10.0],
        [10.0, 10.0, 10.0, 10.0],
    ];
    let bt = run(
        "entry = \"close == 10\"\nexit = \"false\"\ntrailing_stop = \"2\"",
        "",
        &rows,
    );
    let reasons: Vec<ExitReason> = bt.trades.iter().map(|t| t.exit_reason).collect();
    assert_eq!(reasons, [TrailingStop, End]);
    let bt = run(
        "entry = \"close == 10\"\nexit = \"close == 8\"",
        "direction = \"long_short\"",
        &rows,
    );
    let reasons: Vec<ExitReason> = bt.trades.iter().map(|t| t.exit_reason).collect();
    assert_eq!(reasons, [Reversal, Reversal, End]);
}

mod properties {
    use proptest::prelude::*;
    use sieve_core::config::Config;
    use sieve_core::data::synth;
    use sieve_core::engine::{self, Backtest};
    use sieve_core::evaluate::{Evaluator, Scoring};
    use sieve_core::indicators::IndicatorSet;
    use sieve_core::lanes::{LaneScratch, Level};
    use sieve_core::strategy::indicators_for;

    /// Rules that trade often, long and short, one reading the trade.
    const RULES: [&str; 4] = [
        "entry = \"close > sma(close, n) and position == 0\"\nexit = \"close < entry_price * 0.97 or bars_held > 12\"",
        "entry = \"cross_above(close, sma(close, n))\"\nexit = \"cross_below(close, sma(close, n))\"",
        "entry = \"close > sma(close, n)\"\nexit = \"close < sma(close, n)\"\nshort_entry = \"rsi(close, 5) > 70\"\nshort_exit = \"rsi(close, 5) < 50\"",
        "entry = \"rsi(close, n) < 40\"\nexit = \"rsi(close, n) > 60\"\ntrailing_stop = \"2 * atr(5)\"",
    ];

    fn bits(x: f64) -> u64 {
        if x.is_nan() {
            u64::MAX
        } else {
            x.to_bits()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The screen (one at a time and in lanes at every vector level)
        /// gives the exact engine's objective, trades and Sharpe for rules
        /// with random stops, targets, bar limits and sizes.
        #[test]
        fn screen_equals_exact_with_trade_management(
            seed in 0u64..1_000_000,
            n_bars in 40usize..600,
            rules in 0usize..4,
            stop in prop_oneof![Just(None), (0.005..0.1).prop_map(Some)],
            distance in any::<bool>(),
            target in prop_oneof![Just(None), (0.005..0.2).prop_map(Some)],
            max_bars in prop_oneof![Just(None), (1u32..20).prop_map(Some)],
            size in prop_oneof![Just(None), (0.2..3.0).prop_map(Some)],
            close_fill in any::<bool>(),
            long_short in any::<bool>(),
            fee in prop_oneof![Just(0.0), 0.0..0.01],
            slippage in prop_oneof![Just(0.0), 0.0..0.005],
            lot in prop_oneof![Just(0.0), Just(1.0)],
            score_share in prop_oneof![Just(0.0f64), 0.1f64..0.8],
            screen_full in any::<bool>(),
            objective in prop::sample::select(vec!["sharpe", "sortino", "total_return", "calmar"]),
            trail in prop_oneof![Just(None), (0.005..0.1).prop_map(Some)],
            max_entries in prop_oneof![Just(None), (2u32..5).prop_map(Some)],
            conventions in prop::sample::select(vec!["sieve", "vectorbt", "backtesting.py"]),
        ) {
            let mut text = format!("[strategy]\nname = \"p\"\n{}\n", RULES[rules]);
            if let Some(v) = stop {
                if distance {
                    text.push_str(&format!("stop_distance = \"{} * atr(10)\"\n", v * 20.0));
                } else {
                    text.push_str("stop_loss = \"sl\"\n");
                }
            }
            if let Some(v) = target {
                text.push_str(&format!("take_profit = {v}\n"));
            }
            if let Some(v) = max_bars {
                text.push_str(&format!("max_bars = {v}\n"));
            }
            if let Some(v) = trail {
                text.push_str(&format!("trail_loss = {v}\n"));
            }
            if let Some(v) = max_entries {
                text.push_str(&format!("max_entries = {v}\n"));
            }
            if let Some(v) = size {
                text.push_str(&format!("size = {v}\n"));
            }
            text.push_str("[strategy.params]\nn = { values = [5, 12] }\n");
            if stop.is_some() && !distance {
                text.push_str(&format!("sl = {{ values = [{}, {}] }}\n", stop.unwrap(), stop.unwrap() * 2.0));
            }
            text.push_str(&format!(
                "[backtest]\nconventions = \"{conventions}\"\n{}fill = \"{}\"\ndirection = \"{}\"\nfee = {fee}\nslippage = {slippage}\nlot_size = {lot}\nmax_leverage = 3\n[score]\nobjective = \"{objective}\"\nmin_trades = 0\nscreen_window = \"{}\"\n",
                // (Pyramids measure stops from the fill price.)
                match max_entries {
                    Some(_) => "stop_price_from = \"fill\"\n",
                    None => "",
                },
                if close_fill { "close" } else { "next_open" },
                if long_short { "long_short" } else { "long" },
                if screen_full { "full" } else { "score" },
            ));
            if score_share > 0.0 {
                text.push_str(&format!("score_start = \"{}%\"\n", (score_share * 100.0).round()));
            }
            let config = Config::parse(&text).unwrap();
            let shared = config.strategy().unwrap();
            let s = &*shared;
            let space = config.space(s).unwrap();
            let sets: Vec<Vec<f64>> = (0..space.size()).map(|i| space.params_of(i)).collect();
            let bars = synth(n_bars, seed);
            let keys = Evaluator::indicators_for(s, sets.iter().map(Vec::as_slice));
            let set = IndicatorSet::build_for(&bars, s.series(), keys);
            let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
            let eval = Evaluator { bars: &bars, strategy: s, indicators: &set, scoring: &scoring, portfolio: None };
            let params: Vec<&[f64]> = sets.iter().map(Vec::as_slice).collect();
            let mut scratch = Vec::new();
            for p in &params {
                let (bt, m) = eval.backtest_with_metrics(p, &[scoring.screen, scoring.windows.score]);
                let screened = eval.screen(p, &mut scratch);
                prop_assert_eq!(bits(screened.objective), bits(eval.window_objective(&scoring.screen, &m[0])));
                prop_assert_eq!(screened.trades, m[0].trades);
                // Every trade's exit is where the engine says it is.
                for t in &bt.trades {
                    prop_assert!(t.exit_bar.is_none_or(|x| x >= t.entry_bar));
                }
                // Liquidation: equity never closes below zero, held or not
                // (a stop or a gap may lose more than the equity).
                for (e, p) in bt.equity.iter().zip(&bt.position) {
                    prop_assert!(*e >= 0.0 && (*p == 0 || *e > 0.0), "equity {} held {}", e, p);
                }
            }
            for level in Level::available() {
                let mut got = vec![Default::default(); params.len()];
                eval.screen_lanes(&params, &mut LaneScratch::always(level), &mut got);
                for (g, p) in got.iter().zip(&params) {
                    let want = eval.screen(p, &mut scratch);
                    prop_assert_eq!(bits(g.objective), bits(want.objective));
                    prop_assert_eq!(bits(g.sharpe), bits(want.sharpe));
                }
            }
        }

        /// Without management keys the managed engine is the plain one:
        /// the same equity and trades, bit for bit (a trailing stop's exact
        /// backtests run through it for their exit reasons).
        #[test]
        fn the_managed_engine_without_keys_is_the_plain_engine(
            seed in 0u64..1_000_000,
            n_bars in 40usize..600,
            rules in 0usize..3,
            close_fill in any::<bool>(),
            long_short in any::<bool>(),
            fee in prop_oneof![Just(0.0), 0.0..0.01],
            lot in prop_oneof![Just(0.0), Just(1.0), Just(500.0)],
        ) {
            let text = format!(
                "[strategy]\nname = \"p\"\n{}\n[strategy.params]\nn = {{ values = [5] }}\n[backtest]\nfill = \"{}\"\ndirection = \"{}\"\nfee = {fee}\nlot_size = {lot}\n",
                RULES[rules + 1],
                if close_fill { "close" } else { "next_open" },
                if long_short { "long_short" } else { "long" },
            );
            let config = Config::parse(&text).unwrap();
            let shared = config.strategy().unwrap();
            let s = &*shared;
            let bars = synth(n_bars, seed);
            let set = IndicatorSet::build_for(&bars, s.series(), indicators_for(s, &[5.0]));
            let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
            let mut managed = Backtest {
                equity: vec![0.0; n_bars],
                position: vec![0; n_bars],
                trades: Vec::new(),
                instruments: Vec::new(),
                detail: None,
            };
            s.simulate(&bars, &set, &[5.0], scoring.direction, &scoring.engine, n_bars, &mut managed);
            let mut positions = vec![0; n_bars];
            s.positions(&bars, &set, &[5.0], scoring.direction, &mut positions);
            let plain = engine::backtest(&bars, &positions, &scoring.engine);
            prop_assert_eq!(managed.equity.iter().map(|e| e.to_bits()).collect::<Vec<_>>(),
                            plain.equity.iter().map(|e| e.to_bits()).collect::<Vec<_>>());
            prop_assert_eq!(&managed.position, &plain.position);
            prop_assert_eq!(managed.trades.len(), plain.trades.len());
            for (a, b) in managed.trades.iter().zip(&plain.trades) {
                prop_assert_eq!((a.entry_bar, a.exit_bar, a.units.to_bits(), a.pnl.to_bits()),
                                (b.entry_bar, b.exit_bar, b.units.to_bits(), b.pnl.to_bits()));
            }
        }
    }
}

/// A bar-by-bar reference written from docs/config.md for one strategy —
/// long while `close > sma(close, n)`, flat when `close < sma(close, n)` —
/// with a fractional stop, target, bar limit and size, no fees: final
/// equity and (entry bar, exit bar, reason) of each closed trade.
#[allow(clippy::needless_range_loop)] // every series read by bar, as the docs say it
fn reference(
    bars: &Bars,
    n: usize,
    stop: f64,
    target: f64,
    max_bars: usize,
    size: f64,
    close_fill: bool,
) -> (f64, Vec<(usize, usize, ExitReason)>) {
    struct Account {
        cash: f64,
        units: f64,
        entry: f64,
        fill_bar: usize,
        held: bool,
        closed: Vec<(usize, usize, ExitReason)>,
    }
    impl Account {
        fn enter(&mut self, t: usize, p: f64, size: f64) {
            self.units = size * self.cash / p;
            self.cash -= self.units * p;
            (self.entry, self.fill_bar, self.held) = (p, t, true);
        }
        fn exit(&mut self, t: usize, p: f64, why: ExitReason) {
            self.cash += self.units * p;
            self.units = 0.0;
            self.held = false;
            self.closed.push((self.fill_bar, t, why));
        }
    }
    let c = &bars.close;
    let sma = |t: usize| (t + 1 >= n).then(|| c[t + 1 - n..=t].iter().sum::<f64>() / n as f64);
    let mut a = Account {
        cash: 1000.0,
        units: 0.0,
        entry: 0.0,
        fill_bar: 0,
        held: false,
        closed: Vec::new(),
    };
    let mut pending: Option<(bool, ExitReason)> = None; // (enter?, why)
    for t in 0..c.len() {
        if !close_fill {
            match pending.take() {
                Some((true, _)) if !a.held => a.enter(t, bars.open[t], size),
                Some((false, why)) if a.held => a.exit(t, bars.open[t], why),
                _ => {}
            }
        }
        let exposed = a.held && (a.fill_bar < t || (!close_fill && a.fill_bar == t));
        if exposed {
            let (s, g) = (a.entry * (1.0 - stop), a.entry * (1.0 + target));
            let o = bars.open[t];
            let hit = if o <= s {
                Some((o, StopLoss))
            } else if o >= g {
                Some((o, TakeProfit))
            } else if bars.low[t] <= s {
                Some((s, StopLoss))
            } else if bars.high[t] >= g {
                Some((g, TakeProfit))
            } else {
                None
            };
            if let Some((p, why)) = hit {
                a.exit(t, p, why);
            }
        }
        let want = match sma(t) {
            Some(m) if c[t] > m && !a.held => Some((true, Rule)),
            Some(m) if c[t] < m && a.held => Some((false, Rule)),
            _ if a.held && t - a.fill_bar >= max_bars => Some((false, MaxBars)),
            _ => None,
        };
        if close_fill {
            match want {
                Some((true, _)) => a.enter(t, c[t], size),
                Some((false, why)) => a.exit(t, c[t], why),
                None => {}
            }
        } else {
            pending = want;
        }
    }
    (a.cash + a.units * c[c.len() - 1], a.closed)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// The engine (with its skips over quiet stretches) against the
    /// bar-by-bar reference above.
    #[test]
    fn the_managed_engine_follows_the_reference(
        seed in 0u64..1_000_000,
        n_bars in 40usize..700,
        n in 2usize..30,
        stop in 0.005f64..0.08,
        target in 0.005f64..0.15,
        max_bars in 1usize..40,
        size in 0.1f64..1.0,
        close_fill in proptest::prelude::any::<bool>(),
    ) {
        let bars = sieve_core::data::synth(n_bars, seed);
        let config = Config::parse(&format!(
            "[strategy]\nname = \"r\"\nentry = \"close > sma(close, {n})\"\nexit = \"close < sma(close, {n})\"\nstop_loss = {stop}\ntake_profit = {target}\nmax_bars = {max_bars}\nsize = {size}\n[backtest]\ninitial_cash = 1000\nfill = \"{}\"\n",
            if close_fill { "close" } else { "next_open" }
        )).unwrap();
        let shared = config.strategy().unwrap();
        let s = &*shared;
        let set = IndicatorSet::build_for(&bars, s.series(), indicators_for(s, &[]));
        let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
        let eval = Evaluator { bars: &bars, strategy: s, indicators: &set, scoring: &scoring, portfolio: None };
        let bt = eval.backtest(&[]);
        let (equity, closed) = reference(&bars, n, stop, target, max_bars, size, close_fill);
        let got: Vec<(usize, usize, ExitReason)> = bt
            .trades
            .iter()
            .filter_map(|t| t.exit_bar.map(|x| (t.entry_bar, x, t.exit_reason)))
            .collect();
        proptest::prop_assert_eq!(got, closed);
        let last = *bt.equity.last().unwrap();
        proptest::prop_assert!((last - equity).abs() <= 1e-9 * equity.abs(), "{} vs {}", last, equity);
    }
}

#[test]
fn rules_read_the_entry_price_bars_held_and_position() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 10.5, 9.8, 10.0],  // filled at 10
        [10.0, 10.2, 9.5, 9.6],   // 9.6 ≥ 9.5: stays
        [9.6, 9.7, 9.3, 9.4],     // 9.4 < 10 × 0.95: exit decided
        [9.3, 9.5, 9.2, 9.3],     // out at the open 9.3
    ];
    let bt = run(
        "entry = \"close == 10 and position == 0\"\nexit = \"close < entry_price * 0.95\"",
        "",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(4), 9.3, Rule)]);
    // bars_held: 0 on the fill bar's close (next_open), so `>= 2` decides
    // on bar 3 and fills at bar 4's open.
    let bt = run(
        &format!("{ENTER_AT_10}\nexit = \"bars_held >= 2\"").replace("exit = \"false\"\n", ""),
        "",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(4), 9.3, Rule)]);
    // A reversal read from the position: short after two bars long.
    let bt = run(
        "entry = \"close == 10\"\nexit = \"false\"\nshort_entry = \"position == 1 and bars_held >= 1\"\nshort_exit = \"false\"",
        "direction = \"long_short\"",
        &rows,
    );
    assert_eq!(
        trades(&bt)
            .iter()
            .map(|t| (t.0, t.2, t.4))
            .collect::<Vec<_>>(),
        [(1, Some(3), Reversal), (3, None, End)]
    );
}

#[test]
fn keys_refuse_what_cannot_hold() {
    let parse = |strategy: &str, backtest: &str| {
        Config::parse(&format!(
            "[strategy]\nname = \"m\"\n{ENTER_AT_10}\n{strategy}\n[backtest]\n{backtest}\n"
        ))
        .unwrap_err()
        .to_string()
    };
    let e = parse("size = 3", "max_leverage = 2");
    assert!(
        e.contains("strategy.size") && e.contains("above backtest.max_leverage"),
        "{e}"
    );
    let e = parse("max_bars = 2.5", "");
    assert!(
        e.contains("strategy.max_bars") && e.contains("whole number"),
        "{e}"
    );
    let e = parse("", "max_leverage = 0.5");
    assert!(
        e.contains("backtest.max_leverage") && e.contains("≥ 1"),
        "{e}"
    );
    for key in [
        "stop_distance = \"entry_price * 0.1\"",
        "max_bars = \"bars_held + 3\"",
        "size = \"position + 1\"",
    ] {
        let e = parse(key, "");
        assert!(e.contains("before the trade exists"), "{key}: {e}");
    }
}

#[test]
fn the_trades_state_cannot_be_read_by_what_remembers_bars() {
    for rule in [
        "sma(close - entry_price, 3) > 0",
        "cross_above(close, entry_price)",
        "shift(bars_held, 1) > 2",
    ] {
        let e = Config::parse(&format!(
            "[strategy]\nname = \"m\"\nentry = \"close > 0\"\nexit = \"{rule}\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("strategy.exit") && e.contains("known only bar by bar"),
            "{rule}: {e}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// An exit rule `… or bars_held >= k` trades exactly as `max_bars = k`
    /// (two mechanisms: the rules reading the state, the engine's limit),
    /// with a stop beside it; also the entry price against a stop level.
    #[test]
    fn rules_reading_the_state_match_the_engines_own_limits(
        seed in 0u64..1_000_000,
        n_bars in 40usize..900,
        n in 2usize..20,
        k in 1usize..30,
        stop in 0.01f64..0.08,
        close_fill in proptest::prelude::any::<bool>(),
    ) {
        let bars = sieve_core::data::synth(n_bars, seed);
        let backtest = |rules: &str| {
            let config = Config::parse(&format!(
                "[strategy]\nname = \"s\"\nentry = \"close > sma(close, {n})\"\n{rules}\nstop_loss = {stop}\n[backtest]\nfill = \"{}\"\n",
                if close_fill { "close" } else { "next_open" }
            )).unwrap();
            let shared = config.strategy().unwrap();
            let s = &*shared;
            let set = IndicatorSet::build_for(&bars, s.series(), indicators_for(s, &[]));
            let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
            Evaluator { bars: &bars, strategy: s, indicators: &set, scoring: &scoring, portfolio: None }.backtest(&[])
        };
        let by_rule = backtest(&format!("exit = \"close < sma(close, {n}) or bars_held >= {k}\""));
        let by_limit = backtest(&format!("exit = \"close < sma(close, {n})\"\nmax_bars = {k}"));
        let shape = |bt: &Backtest| bt.trades.iter().map(|t| (t.entry_bar, t.exit_bar, t.entry_price.to_bits(), t.exit_price.to_bits(), t.exit_reason == StopLoss)).collect::<Vec<_>>();
        proptest::prop_assert_eq!(shape(&by_rule), shape(&by_limit));
        proptest::prop_assert_eq!(
            by_rule.equity.iter().map(|e| e.to_bits()).collect::<Vec<_>>(),
            by_limit.equity.iter().map(|e| e.to_bits()).collect::<Vec<_>>()
        );
    }
}

/// `stop_level` (close − 2) moves the stop on each close of the trade, up
/// only: 10 after the fill bar's close of 12, kept at 10 when the close of
/// 11 says 9, so the low of 9.8 on bar 3 takes the trade out at 10.
#[test]
fn a_moving_stop_ratchets_up_and_never_down() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 12.0, 10.0, 12.0], // filled at 10 (100 units); level 10
        [12.0, 13.0, 11.0, 11.0], // low 11 > 10; level 9: the stop stays 10
        [11.0, 12.0, 9.8, 12.0],  // low 9.8 <= 10: out at 10
        [12.0, 12.0, 12.0, 12.0],
    ];
    let bt = run(
        &format!("{ENTER_AT_10}\nstop_level = \"close - 2\""),
        "",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(3), 10.0, StopLevel)]);
    assert_close!(last(&bt), 1000.0);
}

/// Breakeven after +2 %: the level is the entry price once a close is 2 %
/// above it (0, no level, before); with `stop_loss = 0.05` also set the
/// tighter applies: 9.5 first, then 10 from the close of 10.3.
#[test]
fn a_breakeven_stop_replaces_the_fixed_one_when_tighter() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 10.1, 9.6, 10.1],  // filled at 10, stop 9.5; 10.1 < 10.2
        [10.1, 10.4, 10.0, 10.3], // low 10 > 9.5; 10.3 >= 10.2: stop 10
        [10.3, 10.3, 9.9, 10.0],  // low 9.9 <= 10: out at 10
    ];
    let keys = "stop_loss = 0.05\nstop_level = \"if(close >= entry_price * 1.02, entry_price, 0)\"";
    let bt = run(&format!("{ENTER_AT_10}\n{keys}"), "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(3), 10.0, StopLevel)]);
    assert_close!(last(&bt), 1000.0);
    // A level below the fixed stop leaves it: out at 9.5 by the stop_loss.
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.0, 10.0, 10.0], // filled at 10, stop 9.5; level 5
        [10.0, 10.0, 9.4, 9.6],   // low 9.4 <= 9.5: out at 9.5
    ];
    let keys = "stop_loss = 0.05\nstop_level = \"close - 5\"";
    let bt = run(&format!("{ENTER_AT_10}\n{keys}"), "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.5, StopLoss)]);
}

/// Entry orders by hand: a buy stop at 11 not reached on bar 1 expires
/// (`order_bars = 1`); the entry on bar 1's close places it again and bar
/// 2 opens at 12, through it: filled at the open (max(open, level)).
#[test]
fn an_entry_stop_expires_and_fills_at_the_open_on_a_gap() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided: buy stop 11 for bar 1
        [10.0, 10.5, 9.5, 10.0],  // high 10.5 < 11: expires; placed again
        [12.0, 13.0, 11.5, 12.5], // opens through 11: filled at 12
    ];
    let bt = run(&format!("{ENTER_AT_10}\nentry_stop = 11"), "", &rows);
    assert_eq!(trades(&bt), [(2, 12.0, None, 12.5, End)]);
    assert_close!(last(&bt), 1000.0 / 12.0 * 12.5);
    // A buy limit at 9: bar 1 opens at 8.5, below it: filled at the open.
    let rows = [[10.0, 10.0, 10.0, 10.0], [8.5, 9.0, 8.0, 8.8]];
    let bt = run(&format!("{ENTER_AT_10}\nentry_limit = 9"), "", &rows);
    assert_eq!(trades(&bt), [(1, 8.5, None, 8.8, End)]);
}

/// An order good for 2 bars is gone on the third; an exit signal cancels
/// one still waiting.
#[test]
fn an_entry_order_expires_or_is_cancelled_by_an_exit() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided: buy stop 11, bars 1-2
        [10.0, 10.5, 9.5, 10.1],
        [10.1, 10.8, 9.9, 10.2],
        [10.2, 12.0, 10.1, 11.5], // reaches 11, but the order is gone
    ];
    let keys = "entry_stop = 11\norder_bars = 2";
    let bt = run(&format!("{ENTER_AT_10}\n{keys}"), "", &rows);
    assert_eq!(trades(&bt), []);
    // Good for 3 bars it fills on bar 3 at 11 (the open 10.2 is below).
    let keys = "entry_stop = 11\norder_bars = 3";
    let bt = run(&format!("{ENTER_AT_10}\n{keys}"), "", &rows);
    assert_eq!(trades(&bt), [(3, 11.0, None, 11.5, End)]);
    // An exit signal on bar 1's close (10.1) cancels it.
    let strategy = "entry = \"close == 10\"\nexit = \"close > 10.05 and close < 10.15\"\nentry_stop = 11\norder_bars = 3";
    let bt = run(strategy, "", &rows);
    assert_eq!(trades(&bt), []);
}

/// After a stop entry fills inside a bar, its stop and target count from
/// the next bar, except that the target fills on the fill bar when it is
/// touched and the stop is not (backtesting.py's rule); with both touched
/// the fill bar decides nothing.
#[test]
fn a_stop_entry_takes_its_target_on_the_fill_bar_only_without_its_stop() {
    let keys = "entry_stop = 11\nstop_loss = 0.05\ntake_profit = 0.05";
    // Filled at 11: stop 10.45, target 11.55; the high 12 reaches the
    // target, the low 10.6 not the stop: out at 11.55.
    let rows = [[10.0, 10.0, 10.0, 10.0], [10.5, 12.0, 10.6, 11.8]];
    let bt = run(&format!("{ENTER_AT_10}\n{keys}"), "", &rows);
    assert_eq!(trades(&bt), [(1, 11.0, Some(1), 11.55, TakeProfit)]);
    // The low 10.4 touches the stop too: nothing on the fill bar; bar 2
    // touches the stop (low 10.3): out at 10.45.
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.5, 12.0, 10.4, 11.0],
        [11.0, 11.2, 10.3, 10.5],
    ];
    let bt = run(&format!("{ENTER_AT_10}\n{keys}"), "", &rows);
    assert_eq!(trades(&bt), [(1, 11.0, Some(2), 10.45, StopLoss)]);
}

/// `trail_loss = 0.1` trails the highest price since entry inside each
/// bar: the stop is checked first, then the peak moves to the bar's high.
/// Filled at 10 (peak 10, stop 9); bar 1's high 12 moves it to 10.8 after
/// its low of 9.6 was checked against 9; bar 2's low 10.9 holds; bar 3's
/// high 13 would give 11.7, but its low 10.5 reaches 10.8 first: out there.
#[test]
fn a_trailing_stop_is_checked_before_the_peak_moves() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 12.0, 9.6, 11.0],  // filled at 10; low 9.6 > 9; peak 12: stop 10.8
        [11.0, 11.5, 10.9, 11.2], // 10.9 > 10.8
        [11.2, 13.0, 10.5, 12.0], // 10.5 <= 10.8: out at 10.8
        [12.0, 12.0, 12.0, 12.0],
    ];
    let bt = run(&format!("{ENTER_AT_10}\ntrail_loss = 0.1"), "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(3), 10.8, Trail)]);
    assert_close!(last(&bt), 1080.0);
    // With a fixed stop 5 % under the entry (9.5) also set, the tighter
    // is the trailing one from bar 1: the same exit. A short mirrored:
    // filled at 10 (stop 11), bar 1's low 8 moves it to 8.8, bar 2's high
    // 9 takes it out at 8.8.
    let bt = run(
        &format!("{ENTER_AT_10}\nstop_loss = 0.05\ntrail_loss = 0.1"),
        "",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(3), 10.8, Trail)]);
    let short = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 8.0, 9.0], // short at 10; high 10.5 < 11; trough 8: 8.8
        [8.7, 9.0, 8.5, 8.7],   // high 9 >= 8.8: out at 8.8
    ];
    let bt = run(
        "entry = \"false\"\nexit = \"false\"\nshort_entry = \"close == 10\"\nshort_exit = \"false\"\ntrail_loss = 0.1",
        "direction = \"long_short\"",
        &short,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 8.8, Trail)]);
    assert_close!(last(&bt), 1120.0);
}

/// vectorbt's conventions bar by bar, on one set of bars: the stop is
/// measured from the fill bar's close (10.5 → 9.45), first checked on the
/// bar after the fill bar (whose low 9 does not count), and filled at
/// its level without slippage; the trailing peak starts at that close.
#[test]
fn the_vectorbt_preset_measures_from_the_close_and_checks_from_the_next_bar() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 11.0, 9.0, 10.5],  // filled at 10: stop 10.5 · 0.9 = 9.45
        [10.5, 10.6, 9.4, 9.9],   // 9.4 <= 9.45: out at 9.45
        [9.9, 9.9, 9.9, 9.9],
    ];
    let keys = format!("{ENTER_AT_10}\nstop_loss = 0.1");
    let bt = run(&keys, "conventions = \"vectorbt\"\nslippage = 0.01", &rows);
    // Entered at 10 · 1.01; out at 10.5 · 0.9 flat.
    assert_eq!(
        trades(&bt),
        [(1, 10.1, Some(2), 10.5 * (1.0 - 0.1), StopLoss)]
    );
    // sieve's own: the fill bar's low 9 reaches the stop 10.1 · 0.9 =
    // 9.09 there, sold at 9.09 · 0.99.
    let bt = run(&keys, "slippage = 0.01", &rows);
    assert_eq!(trades(&bt).len(), 1);
    assert_eq!(trades(&bt)[0].2, Some(1));
    assert_close!(trades(&bt)[0].3, 10.1 * 0.9 * 0.99);
    // Trailing: the peak starts at the fill bar's close, 10.5.
    let bt = run(
        &format!("{ENTER_AT_10}\ntrail_loss = 0.1"),
        "conventions = \"vectorbt\"",
        &rows,
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 10.5 * (1.0 - 0.1), Trail)]);
}

/// With `exit_before_stop = false` (vectorbt's rule) a stop touched on the
/// bar where a decided exit would fill at the open is taken first, at its
/// level; the rest of that order (a reversal's short entry) fills at the
/// open (`stop_bar_orders = "keep"`) or is dropped (vectorbt).
#[test]
fn the_stop_before_the_decided_exit_and_what_happens_to_a_reversal() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.5, 9.5, 9.8], // long at 10, stop 9; exit (reversal) decided
        [9.6, 9.7, 8.0, 8.5],   // open 9.6 > 9, low 8 <= 9
        [8.5, 8.6, 8.4, 8.5],
    ];
    let rules = "entry = \"close == 10\"\nexit = \"close < 10\"\nstop_loss = 0.1";
    let bt = run(rules, "exit_before_stop = false", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.0, StopLoss)]);
    assert_close!(last(&bt), 900.0);
    let long_short = "direction = \"long_short\"\nexit_before_stop = false";
    // Kept: short at the open 9.6 after the stop at 9.
    let bt = run(rules, long_short, &rows);
    let t = trades(&bt);
    assert_eq!(t[0], (1, 10.0, Some(2), 9.0, StopLoss));
    assert_eq!((t[1].0, t[1].1), (2, 9.6));
    // Dropped: flat after the stop; the close of 8.5 (< 10) decides the
    // short again, filled at bar 3's open.
    let bt = run(
        rules,
        &format!("{long_short}\nstop_bar_orders = \"drop\""),
        &rows,
    );
    let t = trades(&bt);
    assert_eq!(t[0], (1, 10.0, Some(2), 9.0, StopLoss));
    assert_eq!((t[1].0, t[1].1), (3, 8.5));
}

/// `stop_bar_orders = "drop"` with `fill = "close"`: the close of the bar
/// a stop filled on decides nothing (vectorbt reads no signal there); the
/// next close does.
#[test]
fn a_dropped_close_decision_on_the_stop_bar() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // long at the close 10, stop 9
        [10.0, 10.0, 8.9, 10.0],  // out at 9; the close of 10 enters again (keep)
        [10.0, 10.0, 10.0, 10.0], // … or here (drop)
    ];
    let keys = format!("{ENTER_AT_10}\nstop_loss = 0.1");
    let bt = run(&keys, "fill = \"close\"", &rows);
    assert_eq!(trades(&bt)[1].0, 1);
    let bt = run(&keys, "fill = \"close\"\nstop_bar_orders = \"drop\"", &rows);
    assert_eq!(trades(&bt)[0], (0, 10.0, Some(1), 9.0, StopLoss));
    assert_eq!(trades(&bt)[1].0, 2);
}

/// A preset's switches can be set one by one over it; `stop_price_from =
/// "close"` needs the stop checked from the next bar with a next-open
/// fill (the fill bar's close is not known on that bar).
#[test]
fn presets_and_switches_are_checked() {
    let parse = |backtest: &str| {
        Config::parse(&format!(
            "[strategy]\nname = \"m\"\n{ENTER_AT_10}\nstop_loss = 0.1\n[backtest]\n{backtest}\n"
        ))
    };
    let c = parse("conventions = \"vectorbt\"\nstop_slippage = true").unwrap();
    let conv = c.scoring().engine.conventions;
    assert!(conv.stop_slippage && conv.stop_from_close && conv.stop_from_next_bar);
    let e = parse("stop_price_from = \"close\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("stop_check = \"next_bar\""), "{e}");
    assert!(parse("stop_price_from = \"close\"\nfill = \"close\"").is_ok());
    let e = parse("conventions = \"zipline\"").unwrap_err().to_string();
    assert!(e.contains("backtesting.py"), "{e}");
}

/// Pyramiding by hand: `max_entries = 4`, `size = 0.2`, a rule true on
/// every higher close, `stop_distance = 2` from the last entry for the
/// whole position. Entries fill at the opens 11, 12, 13 and 14, each
/// committing 0.2 of the equity then; the close of 15 signals a fifth,
/// refused; bar 6's low reaches the stop 14 − 2 = 12: every unit leaves
/// there, each its own trade.
#[test]
fn three_pyramid_adds_and_one_stop() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.0, 10.0, 11.0], // entry decided
        [11.0, 11.0, 11.0, 12.0], // filled at 11; stop 9; add decided
        [12.0, 12.0, 12.0, 13.0], // add at 12; stop 10
        [13.0, 13.0, 13.0, 14.0], // add at 13; stop 11
        [14.0, 14.0, 14.0, 15.0], // add at 14 (the 4th); stop 12
        [15.0, 15.0, 11.5, 12.0], // low 11.5 <= 12: all out at 12
    ];
    let keys = "entry = \"close > shift(close, 1)\"\nexit = \"false\"\nmax_entries = 4\nsize = 0.2\nstop_distance = 2";
    let bt = run(keys, "", &rows);
    // By hand: each entry buys 0.2 × (cash + units held × price) / price.
    let (mut cash, mut units) = (1000.0, Vec::new());
    for p in [11.0, 12.0, 13.0, 14.0] {
        let equity = cash + units.iter().sum::<f64>() * p;
        let u = 0.2 * equity / p;
        cash -= u * p;
        units.push(u);
    }
    let end = cash + units.iter().sum::<f64>() * 12.0;
    let got = trades(&bt);
    assert_eq!(got.len(), 4, "{got:?}");
    for (k, (trade, p)) in got.iter().zip([11.0, 12.0, 13.0, 14.0]).enumerate() {
        assert_eq!((trade.0, trade.1), (k + 2, p));
        assert_eq!((trade.2, trade.3, trade.4), (Some(6), 12.0, StopLoss));
        assert_close!(bt.trades[k].units, units[k]);
    }
    assert_close!(last(&bt), end);
    assert_eq!(bt.position, [0, 0, 1, 1, 1, 1, 0]);
    use sieve_core::engine::EntryReason::{Add, Signal};
    let how: Vec<_> = bt.trades.iter().map(|t| t.entry_reason).collect();
    assert_eq!(how, [Signal, Add, Add, Add]);
}

/// The rules read the entries held and the last entry's price: adds only
/// 1 above the last entry (Turtle-like), and out once three are held.
#[test]
fn rules_read_the_entries_and_the_last_entry_price() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.0, 10.0, 11.0], // entry decided
        [11.0, 11.0, 11.0, 11.5], // filled at 11; 11.5 < 12: no add
        [11.5, 12.0, 11.5, 12.0], // 12 >= 12: add decided
        [12.0, 13.0, 12.0, 13.0], // add at 12; 13 >= 13: add decided
        [13.0, 13.0, 13.0, 13.0], // add at 13: three entries; exit decided
        [13.5, 13.5, 13.5, 13.5], // all out at 13.5
    ];
    let keys = "entry = \"close > 10.5 and (position == 0 or close >= last_entry_price + 1)\"\nexit = \"entries >= 3\"\nmax_entries = 5\nsize = 0.25";
    let bt = run(keys, "", &rows);
    let got = trades(&bt);
    let entries: Vec<_> = got.iter().map(|t| (t.0, t.1)).collect();
    assert_eq!(entries, [(2, 11.0), (4, 12.0), (5, 13.0)]);
    assert!(got
        .iter()
        .all(|t| t.2 == Some(6) && t.3 == 13.5 && t.4 == Rule));
}

/// Several exits on one close: a liquidation before the rules' exit, the
/// rules' exit before `max_bars`.
#[test]
fn the_priority_of_exits_on_one_close() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 10.0, 10.0, 10.0], // filled at 10; bars held 0
        [10.0, 10.0, 10.0, 10.0], // bars held 1: the rule and max_bars
        [10.0, 10.0, 10.0, 10.0],
    ];
    let keys = "entry = \"close == 10 and position == 0\"\nexit = \"bars_held >= 1\"\nmax_bars = 1";
    let bt = run(keys, "", &rows);
    assert_eq!(trades(&bt)[0], (1, 10.0, Some(3), 10.0, Rule));
    // Without the rule, max_bars alone.
    let keys = "entry = \"close == 10 and position == 0\"\nexit = \"false\"\nmax_bars = 1";
    let bt = run(keys, "", &rows);
    assert_eq!(trades(&bt)[0], (1, 10.0, Some(3), 10.0, MaxBars));
    // A short whose price doubles: equity at 0 on the close where its
    // exit rule also fires; liquidated there, at that close.
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.0, 10.0, 10.0], // short at 10
        [10.0, 20.0, 10.0, 20.0], // close 20: equity 0; exit decided too
        [20.0, 20.0, 20.0, 20.0],
    ];
    let short = "entry = \"false\"\nexit = \"false\"\nshort_entry = \"close == 10 and position == 0\"\nshort_exit = \"close > 15\"\nmax_bars = 5";
    let bt = run(short, "direction = \"long_short\"", &rows);
    assert_eq!(trades(&bt)[0], (1, 10.0, Some(2), 20.0, Liquidated));
}

/// An add keeps a tighter stop: the moving stop's 11 (the fill bar's close
/// 12 less 1) stays when the add at 12 brings no stop of its own, and the
/// low of 9 takes both entries out there.
#[test]
fn an_add_never_loosens_the_stop() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 11.0, 10.0, 11.0], // entry decided
        [11.0, 12.0, 11.0, 12.0], // filled at 11; stop 11; add decided
        [12.0, 12.5, 9.0, 12.5],  // add at 12; low 9: out at 11
        [12.5, 12.5, 12.5, 12.5],
    ];
    let keys = "entry = \"close > shift(close, 1)\"\nexit = \"false\"\nmax_entries = 3\nsize = 0.3\nstop_level = \"close - 1\"";
    let bt = run(keys, "", &rows);
    let got = trades(&bt);
    assert_eq!(got[0], (2, 11.0, Some(3), 11.0, StopLevel));
    assert_eq!(got[1], (3, 12.0, Some(3), 11.0, StopLevel));
}

/// An open through the position's stop ends it at the open before an add
/// decided on the close before could fill.
#[test]
fn an_open_through_the_stop_comes_before_an_add() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 11.0, 10.0, 11.0], // entry decided
        [11.0, 12.0, 11.0, 12.0], // filled at 11, stop 10; add decided
        [8.0, 8.5, 7.5, 8.0],     // opens at 8 under 10: out at 8, no add
        [8.0, 8.0, 8.0, 8.0],
    ];
    let keys = "entry = \"close > 10.5\"\nexit = \"false\"\nmax_entries = 3\nsize = 0.3\nstop_distance = 1";
    let bt = run(keys, "", &rows);
    assert_eq!(trades(&bt), [(2, 11.0, Some(3), 8.0, StopLoss)]);
    // Pyramiding under vectorbt's conventions (stops from the fill bar's
    // close) is refused, naming the way out.
    let e = Config::parse(&format!(
        "[strategy]\nname = \"m\"\n{keys}\n[backtest]\nconventions = \"vectorbt\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("stop_price_from = \"fill\""), "{e}");
}

/// A chandelier from the highest high since the entry: the stop is that
/// high less 1, moved on each close: 10 after the fill bar (high 11), 12
/// after bar 2 (high 13), kept at 12 by bar 3, whose low 11.9 takes it.
#[test]
fn a_chandelier_from_the_highest_high_since_entry() {
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 11.0, 10.0, 10.5], // filled at 10; high since entry 11: stop 10
        [10.5, 13.0, 10.2, 12.5], // 10.2 > 10; 13: stop 12
        [12.5, 12.8, 11.9, 12.5], // 11.9 <= 12: out at 12
    ];
    let keys = format!("{ENTER_AT_10}\nstop_level = \"high_since_entry - 1\"");
    let bt = run(&keys, "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(3), 12.0, StopLevel)]);
    // The lowest low since the entry, read by a rule: out once it is 2
    // under the entry price (bar 2's low 7.9), at the next open.
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.0, 9.0, 9.5], // filled at 10; low since entry 9
        [9.5, 9.6, 7.9, 9.0],   // 7.9 <= 8: exit decided
        [9.0, 9.0, 9.0, 9.0],   // out at 9
    ];
    let keys = "entry = \"close == 10\"\nexit = \"low_since_entry <= entry_price - 2\"";
    let bt = run(keys, "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, Some(3), 9.0, Rule)]);
}

/// The bars of `rows` with detail bars under them: `detail[t]` are bar
/// t's (an hour apart from its open; none: not covered). One detail bar
/// is followed by a flat one at its close (detail bars must be finer).
fn with_detail(rows: &[[f64; 4]], detail: &[&[[f64; 4]]]) -> Bars {
    let mut bars = ohlc(rows);
    let padded: Vec<Vec<[f64; 4]>> = detail
        .iter()
        .map(|d| match d {
            [one] => vec![*one, [one[3]; 4]],
            _ => d.to_vec(),
        })
        .collect();
    let detail: Vec<&[[f64; 4]]> = padded.iter().map(Vec::as_slice).collect();
    let mut fine = ohlc(&detail.concat());
    fine.time = bars
        .time
        .iter()
        .zip(detail)
        .flat_map(|(t, d)| (0..d.len() as i64).map(move |k| t + k * 3_600_000))
        .collect();
    let mapped = sieve_core::data::Detail::map(bars.prices(), fine.prices()).unwrap();
    bars.detail = Some(std::sync::Arc::new(mapped));
    bars
}

fn counts(bt: &Backtest) -> (u64, u64) {
    let d = bt.detail.expect("detail counts");
    (d.walked, d.uncovered)
}

/// Bar 2 touches both the stop (9) and the target (11.5) of a trade
/// filled at 10: OHLC says the stop; its detail bars say which came first.
#[test]
fn a_both_touched_bar_is_resolved_by_its_detail_bars_each_way() {
    let keys = "stop_loss = 0.1\ntake_profit = 0.15";
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // entry decided
        [10.0, 10.2, 9.9, 10.0],  // filled at 10: stop 9, target 11.5
        [10.0, 12.0, 8.5, 9.0],   // both touched
    ];
    let strategy = format!("{ENTER_AT_10}\n{keys}");
    let plain = run(&strategy, "", &rows);
    assert_eq!(trades(&plain), [(1, 10.0, Some(2), 9.0, StopLoss)]);
    assert_eq!(plain.detail, None);
    let first_two: [&[[f64; 4]]; 2] = [&[[10.0, 10.0, 10.0, 10.0]], &[[10.0, 10.2, 9.9, 10.0]]];
    // Up first: the target at 11.5, then the fall comes too late.
    let up = [
        [10.0, 11.0, 9.8, 10.9],
        [10.9, 12.0, 10.8, 11.6],
        [11.6, 11.6, 8.5, 9.0],
    ];
    let bars = with_detail(&rows, &[first_two[0], first_two[1], &up]);
    let bt = run_on(&strategy, "", bars);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 11.5, TakeProfit)]);
    assert_close!(last(&bt), 1150.0);
    assert_eq!(counts(&bt), (1, 0));
    // Down first: the stop at 9; a detail bar opening below it (8.8, a
    // gap inside the bar) would fill there.
    let down = [
        [10.0, 10.0, 8.5, 9.2],
        [9.2, 12.0, 9.1, 11.0],
        [11.0, 11.0, 9.0, 9.0],
    ];
    let bt = run_on(
        &strategy,
        "",
        with_detail(&rows, &[first_two[0], first_two[1], &down]),
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.0, StopLoss)]);
    let gapped = [
        [10.0, 10.0, 9.5, 9.6],
        [8.8, 8.9, 8.5, 8.6],
        [8.6, 12.0, 8.6, 9.0],
    ];
    let bt = run_on(
        &strategy,
        "",
        with_detail(&rows, &[first_two[0], first_two[1], &gapped]),
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 8.8, StopLoss)]);
    // A short mirrored: short at 10 (stop 11, target 8.5); bar 2 falls to
    // the target first.
    let short = "entry = \"false\"\nexit = \"false\"\nshort_entry = \"close == 10\"\nshort_exit = \"false\"\nstop_loss = 0.1\ntake_profit = 0.15";
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.2, 9.9, 10.0],
        [10.0, 11.5, 8.0, 11.0],
    ];
    let fall = [[10.0, 10.1, 8.0, 8.2], [8.2, 11.5, 8.2, 11.0]];
    let bt = run_on(
        short,
        "direction = \"long_short\"",
        with_detail(&rows, &[first_two[0], first_two[1], &fall]),
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 8.5, TakeProfit)]);
}

/// A both-touched bar without detail bars under it (a gap in the detail
/// file, or detail bars that do not reach its high and low) keeps the OHLC
/// rule, counted.
#[test]
fn a_detail_gap_falls_back_to_the_ohlc_rule() {
    let strategy = format!("{ENTER_AT_10}\nstop_loss = 0.1\ntake_profit = 0.15");
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 10.2, 9.9, 10.0],
        [10.0, 12.0, 8.5, 9.0],
    ];
    let first_two: [&[[f64; 4]]; 2] = [&[[10.0, 10.0, 10.0, 10.0]], &[[10.0, 10.2, 9.9, 10.0]]];
    let bt = run_on(
        &strategy,
        "",
        with_detail(&rows, &[first_two[0], first_two[1], &[]]),
    );
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.0, StopLoss)]);
    assert_eq!(counts(&bt), (0, 1));
    // Up first, but the detail's high is 11.9, not the bar's 12.
    let short_of = [[10.0, 11.9, 9.8, 11.0], [11.0, 11.0, 8.5, 9.0]];
    let bars = with_detail(&rows, &[first_two[0], first_two[1], &short_of]);
    assert_eq!(bars.detail.as_ref().unwrap().mismatched, 1);
    let bt = run_on(&strategy, "", bars);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 9.0, StopLoss)]);
    assert_eq!(counts(&bt), (0, 1));
}

/// A buy stop fills inside a bar that then falls through the trade's
/// stop: OHLC keeps the trade (its stop counts from the next bar); the
/// detail bars show the fill, then the fall, and stop it on that bar.
#[test]
fn an_entry_stop_and_the_trades_stop_in_one_bar_by_detail_bars() {
    let strategy = format!("{ENTER_AT_10}\nentry_stop = 11\nstop_loss = 0.05");
    let rows = [
        [10.0, 10.0, 10.0, 10.0], // buy stop 11 placed
        [10.5, 11.5, 10.0, 10.2], // filled at 11 (stop 10.45); low 10
        [10.2, 10.6, 10.1, 10.5],
    ];
    let bt = run(&strategy, "", &rows);
    assert_eq!(trades(&bt), [(1, 11.0, Some(2), 10.2, StopLoss)]);
    let first: &[[f64; 4]] = &[[10.0, 10.0, 10.0, 10.0]];
    // Rises through 11 (a detail bar opening at 11.2: filled there), then
    // falls to 10: out at 11.2 × 0.95 = 10.64 on bar 1.
    let rise_then_fall = [
        [10.5, 10.9, 10.4, 10.8],
        [11.2, 11.5, 11.1, 11.3],
        [11.3, 11.3, 10.0, 10.2],
    ];
    let bars = with_detail(&rows, &[first, &rise_then_fall, &[]]);
    let bt = run_on(&strategy, "", bars);
    assert_eq!(trades(&bt), [(1, 11.2, Some(1), 11.2 * 0.95, StopLoss)]);
    assert_eq!(counts(&bt), (1, 0));
    // Falls to 10 first, then rises through 11: the trade survives bar 1
    // and bar 2 opens at 10.2, through its stop 10.45.
    let fall_then_rise = [[10.5, 10.5, 10.0, 10.1], [10.1, 11.5, 10.1, 10.2]];
    let bars = with_detail(&rows, &[first, &fall_then_rise, &[]]);
    let bt = run_on(&strategy, "", bars);
    assert_eq!(trades(&bt), [(1, 11.0, Some(2), 10.2, StopLoss)]);
}

/// A trailing stop walks the detail bars too: bar 2 rises to 13 (trail
/// 11.7) and falls to 11.5; OHLC checks the old stop (10.8) first and
/// keeps the trade; the detail bars show the rise first: out at 11.7.
#[test]
fn a_trailing_stop_moved_inside_a_bar_by_its_detail_bars() {
    let strategy = format!("{ENTER_AT_10}\ntrail_loss = 0.1");
    let rows = [
        [10.0, 10.0, 10.0, 10.0],
        [10.0, 12.0, 9.6, 11.0], // filled at 10; peak 12: stop 10.8
        [11.0, 13.0, 11.5, 12.0],
        [12.0, 12.0, 12.0, 12.0],
    ];
    let bt = run(&strategy, "", &rows);
    assert_eq!(trades(&bt), [(1, 10.0, None, 12.0, End)]);
    let bars = with_detail(
        &rows,
        &[
            &[rows[0]],
            &[rows[1]],
            &[[11.0, 13.0, 12.5, 12.6], [12.6, 12.6, 11.5, 12.0]],
            &[rows[3]],
        ],
    );
    let bt = run_on(&strategy, "", bars);
    assert_eq!(trades(&bt), [(1, 10.0, Some(2), 13.0 * (1.0 - 0.1), Trail)]);
}
