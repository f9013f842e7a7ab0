//! Volatility indicators.
mod atr;
mod stdev;
pub use atr::{atr, true_range};
pub use stdev::stdev;
