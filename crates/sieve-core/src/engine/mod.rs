//! The exact f64 engine: fills a target position per bar with
//! all equity, fees and slippage on both sides, optional whole lots, shorts
//! that mirror longs, and equity marked at every close.
//!
//! [`simulate`] streams every bar's equity and every trade to a [`Sink`], so
//! the same arithmetic serves the exact backtest (which keeps everything) and
//! the screen (which only accumulates its window's objective).
//!
//! One fill is one pure step ([`account`]: an order against a holding and
//! the cash it draws on), apart from the loops over bars that decide the
//! orders: [`simulate`] here, [`Managed`] (stops, targets, sizes, bar
//! limits) and the screen's lanes. [`Clock`] walks several instruments'
//! bars in time order, for an account they share.

mod account;
mod clock;
mod managed;
mod portfolio;
mod settings;
mod simulate;
mod sink;
mod targets;
mod trade;
mod weights;

pub(crate) use account::Account;
pub use account::{enter, exit, stop_or_target, Costs, Entered, Exited, Holding};
pub use clock::Clock;
pub use managed::{Decision, Distance, Managed, TradePlan, TradeState};
pub use portfolio::{
    run_portfolio, signals_of_flags, simulate_portfolio, Ledger, Leg, OnSteps, Order,
    PortfolioRules, PortfolioRun, PortfolioScratch, Schedule, Signal, SizeOf, Want,
};
pub use settings::{Conventions, EngineConfig, Fill};
pub use simulate::{backtest, simulate, Backtest};
pub use sink::{Sink, Tee};
pub(crate) use targets::{next_change, Targets};
pub use trade::{EntryReason, ExitReason, Side, Trade};
pub use weights::{run_weights, simulate_weights, WeightLeg, WeightsRun, WeightsScratch};
