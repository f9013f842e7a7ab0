//! Momentum indicators.
mod cci;
mod directional;
mod rsi;
mod willr;
pub use cci::cci;
pub use directional::{adx, minus_di, plus_di};
pub use rsi::rsi;
pub use willr::willr;
