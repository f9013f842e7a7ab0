//! Momentum indicators.
mod cci;
mod rsi;
mod willr;
pub use cci::cci;
pub use rsi::rsi;
pub use willr::willr;
