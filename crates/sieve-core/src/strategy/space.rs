//! The distinct indicator settings many parameter sets need ([`Keys`]),
//! gathered as a set: memory is the distinct settings, however many sets
//! name them. [`super::indicators_for_space`] feeds it a whole grid without
//! materialising it.

use crate::indicators::Indicator;

/// Indicator keys gathered from many parameter sets: a set, so memory is
/// the distinct keys however many sets name them.
#[derive(Default)]
pub(crate) struct Keys {
    /// A fast hash: a grid names its keys millions of times.
    seen: rustc_hash::FxHashSet<Indicator>,
    scratch: Vec<Indicator>,
}

impl Keys {
    /// Adds the keys `indicators` writes (one parameter set's).
    pub(crate) fn add(&mut self, indicators: impl FnOnce(&mut Vec<Indicator>)) {
        self.scratch.clear();
        indicators(&mut self.scratch);
        self.seen.extend(self.scratch.iter().copied());
    }

    /// The distinct keys, sorted.
    pub(crate) fn finish(self) -> Vec<Indicator> {
        let mut keys: Vec<Indicator> = self.seen.into_iter().collect();
        keys.sort_unstable();
        keys
    }
}
