//! Volatility indicators.
mod atr;
pub use atr::{atr, true_range};
