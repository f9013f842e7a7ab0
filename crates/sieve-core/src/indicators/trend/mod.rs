//! Trend-following stops that carry state from bar to bar.
mod sar;
mod supertrend;
pub use sar::sar;
pub use supertrend::supertrend;
