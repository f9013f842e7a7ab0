//! [`evaluate`]: the metrics of one window, read off a finished backtest.

use super::{Metrics, Window, WindowStats};
use crate::data::Bars;
use crate::engine::Backtest;

/// Metrics of `window` for a finished backtest. `periods_per_year` is P
/// (see [`crate::config::Annualization`]).
pub fn evaluate(
    bars: &Bars,
    bt: &Backtest,
    window: &Window,
    initial_cash: f64,
    periods_per_year: f64,
) -> Metrics {
    let mut stats = WindowStats::new(window, initial_cash);
    for t in window.start.saturating_sub(1)..window.end.min(bt.equity.len()) {
        stats.bar(t, bt.equity[t], bt.position[t]);
    }
    for trade in &bt.trades {
        stats.trade(trade);
    }
    stats.finish(bars, periods_per_year)
}
