//! Moving averages.
mod ema;
mod sma;
pub use ema::ema;
pub use sma::sma;
