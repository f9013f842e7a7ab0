//! Windows and metrics.
//!
//! Every metric is computed by one streaming accumulator, [`WindowStats`],
//! fed bar by bar and trade by trade. The exact backtest replays its stored
//! equity curve into it; the screen feeds it live from the engine. Same code,
//! same order of operations: the screen score equals the exact score.

mod aggregate;
mod drawdown;
mod evaluate;
mod objective;
mod ratios;
mod returns;
mod summary;
mod trades;
mod window;

pub use aggregate::{mean_metrics, Aggregate, Aggregation};
pub use drawdown::Drawdown;
pub use evaluate::evaluate;
pub use objective::{rank_order, Objective};
pub use ratios::ReturnMoments;
pub use returns::{cagr, total_return};
pub use summary::Metrics;
pub use trades::TradeStats;
pub use window::{Boundary, Window, WindowKind, WindowStats, Windows};
