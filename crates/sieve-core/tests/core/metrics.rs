//! Each metric formula (docs/metrics.md) on a short equity series worked by hand.

use sieve_core::engine::{backtest, Backtest, EngineConfig, ExitReason, Side, Trade};
use sieve_core::metrics::{evaluate, Window, WindowKind};

use crate::assert_close;

/// Equity 110, 99, 121, 110 after 100 initial cash, one bar a day.
fn sample() -> (sieve_core::data::Bars, Backtest) {
    let bars = crate::bars(&[1.0; 4], &[1.0; 4]);
    let trade = |exit: usize, pnl: f64, ret: f64| Trade {
        side: Side::Long,
        entry_bar: 0,
        entry_price: 1.0,
        exit_bar: Some(exit),
        exit_price: 1.0,
        units: 1.0,
        fees: 0.0,
        pnl,
        ret,
        exit_reason: ExitReason::Rule,
        entry_reason: sieve_core::engine::EntryReason::Signal,
    };
    let bt = Backtest {
        equity: vec![110.0, 99.0, 121.0, 110.0],
        position: vec![1, 1, 0, 1],
        trades: vec![
            trade(1, 10.0, 0.1),
            trade(2, -5.0, -0.05),
            trade(3, 4.0, 0.04),
        ],
        instruments: Vec::new(),
        detail: None,
    };
    (bars, bt)
}

#[test]
fn full_window_by_hand() {
    let (bars, bt) = sample();
    let w = Window {
        kind: WindowKind::Full,
        start: 0,
        end: 4,
    };
    let m = evaluate(&bars, &bt, &w, 100.0, 252.0);
    let years = 3.0 / 365.25;
    assert_close!(m.total_return, 0.1);
    assert_close!(m.cagr, 1.1f64.powf(1.0 / years) - 1.0);
    // peaks 110 → trough 99 is 10%; 121 → 110 is 9.09%.
    assert_close!(m.max_drawdown, 0.1);
    assert_close!(m.calmar, m.cagr / 0.1);
    let r = [0.1, -0.1, 121.0 / 99.0 - 1.0, 110.0 / 121.0 - 1.0];
    let mean = r.iter().sum::<f64>() / 4.0;
    let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0;
    assert_close!(m.sharpe, mean / var.sqrt() * 252f64.sqrt());
    let downside = (r[1] * r[1] + r[3] * r[3]) / 4.0;
    assert_close!(m.sortino, mean / downside.sqrt() * 252f64.sqrt());
    assert_eq!(m.trades, 3);
    assert_close!(m.win_rate, 2.0 / 3.0);
    assert_close!(m.profit_factor, 14.0 / 5.0);
    assert_close!(m.avg_trade, (0.1 - 0.05 + 0.04) / 3.0);
    assert_close!(m.exposure, 0.75);
}

#[test]
fn score_window_starts_from_the_previous_close() {
    let (bars, bt) = sample();
    let w = Window {
        kind: WindowKind::Score,
        start: 2,
        end: 4,
    };
    let m = evaluate(&bars, &bt, &w, 100.0, 252.0);
    // E_start = 99 (close of bar 1); E_end = 110; 2 days elapsed.
    assert_close!(m.total_return, 110.0 / 99.0 - 1.0);
    assert_close!(m.cagr, (110.0f64 / 99.0).powf(365.25 / 2.0) - 1.0);
    assert_close!(m.max_drawdown, 1.0 - 110.0 / 121.0);
    // Only trades that closed inside the window (bars 2 and 3).
    assert_eq!(m.trades, 2);
    assert_close!(m.profit_factor, 4.0 / 5.0);
    assert_close!(m.exposure, 0.5);
}

#[test]
fn drawdown_counts_a_fall_from_the_starting_value() {
    let bars = crate::bars(&[1.0; 2], &[1.0; 2]);
    let bt = Backtest {
        equity: vec![90.0, 95.0],
        position: vec![1, 1],
        trades: vec![],
        instruments: Vec::new(),
        detail: None,
    };
    let m = evaluate(
        &bars,
        &bt,
        &Window {
            kind: WindowKind::Full,
            start: 0,
            end: 2,
        },
        100.0,
        365.0,
    );
    assert_close!(m.max_drawdown, 0.1);
    assert!(m.win_rate.is_nan() && m.profit_factor.is_nan() && m.trades == 0);
}

#[test]
fn flat_equity_has_nan_calmar_and_sharpe() {
    let bars = crate::bars(&[1.0; 3], &[1.0; 3]);
    let bt = Backtest {
        equity: vec![100.0; 3],
        position: vec![0; 3],
        trades: vec![],
        instruments: Vec::new(),
        detail: None,
    };
    let m = evaluate(
        &bars,
        &bt,
        &Window {
            kind: WindowKind::Full,
            start: 0,
            end: 3,
        },
        100.0,
        365.0,
    );
    assert_eq!(m.max_drawdown, 0.0);
    assert!(m.calmar.is_nan() && m.sharpe.is_nan() && m.sortino.is_nan());
    assert_eq!(m.total_return, 0.0);
}

#[test]
fn a_score_window_that_starts_mid_trade_carries_the_position_in() {
    // Bought at open[1] = 11 (decided on bar 0); the score window starts at
    // bar 3 while long; sold at open[4] = 14 inside the window.
    let open = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0];
    let close = [10.5, 11.5, 12.5, 13.5, 14.5, 15.5];
    let bars = crate::bars(&open, &close);
    let bt = backtest(&bars, &[1, 1, 1, 0, 0, 0], &EngineConfig::default());
    let w = Window {
        kind: WindowKind::Score,
        start: 3,
        end: 6,
    };
    let m = evaluate(&bars, &bt, &w, 10_000.0, 365.0);
    let units = 10_000.0 / 11.0;
    // Start value: close of bar 2 while long; end: sold at 14.
    assert_close!(m.total_return, 14.0 / 12.5 - 1.0);
    assert_eq!(m.trades, 1);
    assert_close!(m.exposure, 1.0 / 3.0);
    assert_close!(bt.equity[2], units * 12.5);
}

#[test]
fn annualization_auto_measures_bars_per_year() {
    let b = sieve_core::data::synth(1000, 1);
    assert_close!(b.bars_per_year(), 365.25);
}

mod windows {
    use sieve_core::config::Config;
    use sieve_core::data::synth;
    use sieve_core::metrics::{Boundary, Windows};

    #[test]
    fn shares_of_the_bars_by_hand() {
        let bars = synth(1000, 1);
        let c = Config::parse("[score]\nscore_start = \"40%\"\nholdout_start = \"80%\"\n").unwrap();
        assert_eq!(c.scoring.score_start, Some(Boundary::Share(0.4)));
        let w = Windows::new(&bars, c.scoring.score_start, c.scoring.holdout_start).unwrap();
        assert_eq!((w.score.start, w.score.end), (400, 800));
        assert_eq!(w.holdout.map(|h| (h.start, h.end)), Some((800, 1000)));
        // "none" turns a boundary off, from the file or from -O.
        let c = Config::parse_with_overrides(
            "[score]\nholdout_start = \"2019-01-01\"\n",
            &["score.holdout_start=none".into()],
        )
        .unwrap();
        assert_eq!(c.scoring.holdout_start, None);
        for bad in ["100%", "-5%", "x%"] {
            let e = Config::parse(&format!("[score]\nscore_start = \"{bad}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("score.score_start") && e.contains("share"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn every_window_problem_at_once_with_the_data_span() {
        // 4,000 daily bars from 2015-01-01: the last is 2025-12-12.
        let bars = synth(4000, 1);
        let c = Config::parse(
            "[score]\nscore_start = \"2026-01-01\"\nholdout_start = \"2027-01-01\"\n",
        )
        .unwrap();
        let e = Windows::new(&bars, c.scoring.score_start, c.scoring.holdout_start)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("score.score_start 2026-01-01 and score.holdout_start 2027-01-01 are after the data (2015-01-01 .. 2025-12-13, 4000 bars)"),
            "{e}"
        );
        // A holdout before the data leaves nothing to select on.
        let e = Windows::new(&bars, None, Some(Boundary::Time(0)))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at or before the first bar") && e.contains("4000 bars"),
            "{e}"
        );
    }
}

/// Equity that overflows (∞, then NaN: units that cost more than an f64
/// holds) leaves every metric but the trade count undefined: the drawdown
/// and win rate used to print 0.
#[test]
fn equity_that_overflows_leaves_the_metrics_undefined() {
    let (bars, mut bt) = sample();
    bt.equity[2] = f64::INFINITY;
    bt.equity[3] = f64::NAN;
    let full = Window {
        kind: WindowKind::Full,
        start: 0,
        end: 4,
    };
    let m = evaluate(&bars, &bt, &full, 100.0, 365.0);
    assert_eq!(m.trades, 3);
    for (name, v) in sieve_core::metrics::Metrics::NAMES.iter().zip(m.values()) {
        if *name != "trades" {
            assert!(v.is_nan(), "{name} = {v}");
        }
    }
    // A window that ends before the overflow keeps its figures.
    let early = Window { end: 2, ..full };
    let m = evaluate(&bars, &bt, &early, 100.0, 365.0);
    assert_close!(m.total_return, -0.01);
}
