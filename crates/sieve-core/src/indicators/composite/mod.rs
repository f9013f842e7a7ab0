//! Normalised terms built from other indicators, each in [−1, 1]. They exist
//! so a strategy that sweeps weights and thresholds (e.g. `activation`) does
//! the divisions once per indicator setting instead of once per combination.
mod channel_position;
mod rsi_score;
mod trend_score;
pub use channel_position::channel_position;
pub use rsi_score::rsi_score;
pub use trend_score::trend_score;
