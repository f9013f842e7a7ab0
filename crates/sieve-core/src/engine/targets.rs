//! Where the engine reads a strategy's target positions ([`Targets`]) and
//! the scan for the next change among them ([`next_change`]).

/// First index ≥ `from` whose target differs from `current`
/// (`targets.len()` if none), eight targets per step.
#[inline]
pub(crate) fn next_change(targets: &[i8], from: usize, current: i8) -> usize {
    let splat = u64::from_ne_bytes([current as u8; 8]);
    let mut i = from;
    while i + 8 <= targets.len() {
        let mut word = [0u8; 8];
        for (w, &p) in word.iter_mut().zip(&targets[i..i + 8]) {
            *w = p as u8;
        }
        let diff = u64::from_le_bytes(word) ^ splat;
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < targets.len() && targets[i] == current {
        i += 1;
    }
    i
}

/// Where the engine reads a strategy's targets: one per bar, or
/// [`crate::strategy::Changes`].
pub(crate) trait Targets {
    /// The target of bar `t` (bars asked for never go backwards).
    fn at(&mut self, t: usize) -> i8;
    /// The first bar at or after `from` whose target differs from
    /// `target` (the number of bars if none).
    fn first_differing(&mut self, from: usize, target: i8) -> usize;
}

impl Targets for &[i8] {
    #[inline(always)]
    fn at(&mut self, t: usize) -> i8 {
        self[t]
    }
    #[inline(always)]
    fn first_differing(&mut self, from: usize, target: i8) -> usize {
        next_change(self, from, target)
    }
}
