//! Moving averages and running sums.
mod ema;
mod rma;
mod sma;
mod sum;
mod wma;
pub use ema::ema;
pub use rma::rma;
pub use sma::sma;
pub use sum::{cumsum, sum};
pub use wma::wma;
