//! Momentum indicators.
mod rsi;
pub use rsi::rsi;
