//! Volume indicators.
mod obv;
pub use obv::obv;
