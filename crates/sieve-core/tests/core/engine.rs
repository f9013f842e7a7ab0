//! The exact engine against hand-computed trades. Bars: opens 10, 11, 12,
//! 13, 14 and closes 10.5, 11.5, 12.5, 13.5, 14.5 (see `super::bars`).

use sieve_core::engine::{backtest, EngineConfig, Fill, Side};

use crate::assert_close;

const OPEN: [f64; 5] = [10.0, 11.0, 12.0, 13.0, 14.0];
const CLOSE: [f64; 5] = [10.5, 11.5, 12.5, 13.5, 14.5];

fn run(positions: &[i8], cfg: EngineConfig) -> sieve_core::engine::Backtest {
    backtest(&crate::bars(&OPEN, &CLOSE), positions, &cfg)
}

#[test]
fn next_open_fills_at_the_following_open() {
    // Long decided at bar 0 → bought at open[1] = 11; flat decided at bar 2 →
    // sold at open[3] = 13.
    let bt = run(&[1, 1, 0, 0, 0], EngineConfig::default());
    let units = 10_000.0 / 11.0;
    assert_close!(bt.equity[0], 10_000.0);
    assert_close!(bt.equity[1], units * 11.5);
    assert_close!(bt.equity[2], units * 12.5);
    assert_close!(bt.equity[3], units * 13.0);
    assert_close!(bt.equity[4], units * 13.0);
    assert_eq!(bt.position, vec![0, 1, 1, 0, 0]);
    assert_eq!(bt.trades.len(), 1);
    let t = bt.trades[0];
    assert_eq!((t.side, t.entry_bar, t.exit_bar), (Side::Long, 1, Some(3)));
    assert_close!(t.pnl, units * 2.0);
    assert_close!(t.ret, 2.0 / 11.0);
}

#[test]
fn close_fill_trades_at_the_deciding_close_and_last_bar_targets_fill() {
    let cfg = EngineConfig {
        fill: Fill::Close,
        ..Default::default()
    };
    let bt = run(&[0, 1, 1, 0, 1], cfg);
    let first = 10_000.0 / 11.5 * 13.5;
    assert_close!(bt.equity[3], first);
    // Re-entry on the last bar fills at its close (next_open would not fill).
    assert_close!(bt.equity[4], first);
    assert_eq!(bt.trades.len(), 2);
    assert!(!bt.trades[1].is_closed());
    let next_open = run(&[0, 0, 0, 0, 1], EngineConfig::default());
    assert!(next_open.trades.is_empty());
    assert_eq!(next_open.equity[4], 10_000.0);
}

#[test]
fn fee_and_slippage_on_both_sides() {
    let cfg = EngineConfig {
        fee: 0.01,
        slippage: 0.02,
        ..Default::default()
    };
    let bt = run(&[1, 1, 0, 0, 0], cfg);
    let buy = 11.0 * 1.02;
    let units = 10_000.0 / (buy * 1.01);
    let sell = 13.0 * 0.98;
    // Entry fee is taken from cash: nothing is left after buying.
    assert_close!(bt.equity[1], units * 11.5);
    let final_cash = units * sell * 0.99;
    assert_close!(bt.equity[4], final_cash);
    let t = bt.trades[0];
    assert_close!(t.entry_price, buy);
    assert_close!(t.exit_price, sell);
    assert_close!(t.fees, units * buy * 0.01 + units * sell * 0.01);
    assert_close!(t.pnl, final_cash - 10_000.0);
    assert_close!(t.ret, final_cash / 10_000.0 - 1.0);
}

#[test]
fn whole_lots_round_down_and_leave_cash() {
    let cfg = EngineConfig {
        lot_size: 100.0,
        ..Default::default()
    };
    let bt = run(&[1, 1, 0, 0, 0], cfg);
    // 10,000 / 11 = 909.09 units → 900; 100 cash left.
    assert_eq!(bt.trades[0].units, 900.0);
    assert_close!(bt.equity[1], 100.0 + 900.0 * 11.5);
    assert_close!(bt.equity[4], 100.0 + 900.0 * 13.0);
}

#[test]
fn a_trade_that_affords_no_lot_is_skipped() {
    let cfg = EngineConfig {
        lot_size: 1000.0,
        ..Default::default()
    };
    let bt = run(&[1, 1, 1, 1, 1], cfg);
    assert!(bt.trades.is_empty());
    assert!(bt.equity.iter().all(|&e| e == 10_000.0));
}

#[test]
fn fractional_units_by_default() {
    let bt = run(&[1, 0, 0, 0, 0], EngineConfig::default());
    assert_close!(bt.trades[0].units, 10_000.0 / 11.0);
    assert!(bt.trades[0].units.fract() != 0.0);
}

#[test]
fn long_to_short_reversal_closes_then_opens_with_all_equity() {
    // Long at open[1] = 11; reversal decided at bar 1 → at open[2] = 12 sell
    // the long, then short with all equity; cover at open[4] = 14.
    let bt = run(&[1, -1, -1, 0, 0], EngineConfig::default());
    let long_units = 10_000.0 / 11.0;
    let cash = long_units * 12.0;
    let short_units = cash / 12.0;
    assert_close!(bt.equity[2], cash - short_units * (12.5 - 12.0));
    assert_close!(bt.equity[3], cash - short_units * (13.5 - 12.0));
    assert_close!(bt.equity[4], cash - short_units * (14.0 - 12.0));
    assert_eq!(bt.position, vec![0, 1, -1, -1, 0]);
    assert_eq!(bt.trades.len(), 2);
    let (l, s) = (bt.trades[0], bt.trades[1]);
    assert_eq!((l.side, l.exit_bar), (Side::Long, Some(2)));
    assert_eq!((s.side, s.entry_bar, s.exit_bar), (Side::Short, 2, Some(4)));
    assert_close!(l.pnl, long_units * 1.0);
    assert_close!(s.pnl, -short_units * 2.0);
    assert_close!(s.ret, -2.0 / 12.0);
}

#[test]
fn short_with_fee_and_slippage_mirrors_long() {
    let cfg = EngineConfig {
        fee: 0.01,
        slippage: 0.02,
        ..Default::default()
    };
    let bt = run(&[-1, -1, 0, 0, 0], cfg);
    let sell = 11.0 * 0.98;
    let units = 10_000.0 / (sell * 1.01);
    let buy = 13.0 * 1.02;
    let cash = 10_000.0 + units * sell - units * sell * 0.01 - units * buy * 1.01;
    assert_close!(bt.equity[4], cash);
    assert_close!(bt.trades[0].pnl, cash - 10_000.0);
}

#[test]
fn open_position_at_the_end_stays_open() {
    let bt = run(&[0, 1, 1, 1, 1], EngineConfig::default());
    let units = 10_000.0 / 12.0;
    assert_close!(bt.equity[4], units * 14.5);
    assert_eq!(bt.trades.len(), 1);
    let t = bt.trades[0];
    assert_eq!((t.entry_bar, t.exit_bar), (2, None));
    assert!(!t.is_closed());
    assert_close!(t.pnl, units * 2.5);
}

#[test]
fn several_round_trips_compound() {
    // in at open 11, out at 12; in at 13, out at 14 (next_open).
    let bt = run(&[1, 0, 1, 0, 0], EngineConfig::default());
    assert_eq!(bt.trades.len(), 2);
    assert_close!(bt.equity[4], 10_000.0 * 12.0 / 11.0 * 14.0 / 13.0);
}
