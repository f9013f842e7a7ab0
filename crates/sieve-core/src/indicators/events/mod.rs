//! Values anchored on events: bars since a condition was last true, and
//! what a series did since then.
mod since;
pub use since::{barssince, highest_since, lowest_since, sum_since, valuewhen};
