//! Windows and metrics.
//!
//! Every metric is computed by one streaming accumulator, [`WindowStats`],
//! fed bar by bar and trade by trade. The exact backtest replays its stored
//! equity curve into it; the screen feeds it live from the engine. Same code,
//! same order of operations: the screen score equals the exact score.

mod aggregate;
mod drawdown;
mod objective;
mod ratios;
mod returns;
mod trades;
mod window;

pub use aggregate::{mean_metrics, Aggregate, Aggregation};
pub use drawdown::Drawdown;
pub use objective::{rank_order, Objective};
pub use ratios::ReturnMoments;
pub use returns::{cagr, total_return};
pub use trades::TradeStats;
pub use window::{Boundary, Window, WindowKind, WindowStats, Windows};

use crate::data::Bars;
use crate::engine::Backtest;

/// Every metric of one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    pub total_return: f64,
    pub cagr: f64,
    pub max_drawdown: f64,
    pub calmar: f64,
    pub sharpe: f64,
    pub sortino: f64,
    pub trades: u64,
    pub win_rate: f64,
    pub profit_factor: f64,
    pub avg_trade: f64,
    pub exposure: f64,
}

impl Metrics {
    /// Column names, in the order of [`Metrics::values`].
    pub const NAMES: [&'static str; 11] = [
        "total_return",
        "cagr",
        "max_drawdown",
        "calmar",
        "sharpe",
        "sortino",
        "trades",
        "win_rate",
        "profit_factor",
        "avg_trade",
        "exposure",
    ];

    pub fn values(&self) -> [f64; 11] {
        [
            self.total_return,
            self.cagr,
            self.max_drawdown,
            self.calmar,
            self.sharpe,
            self.sortino,
            self.trades as f64,
            self.win_rate,
            self.profit_factor,
            self.avg_trade,
            self.exposure,
        ]
    }
}

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
