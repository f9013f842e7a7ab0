//! Momentum indicators.
mod cci;
mod directional;
mod mfi;
mod rsi;
mod stoch;
mod willr;
pub use cci::cci;
pub use directional::{adx, minus_di, plus_di};
pub use mfi::mfi;
pub use rsi::rsi;
pub use stoch::stoch;
pub use willr::willr;
