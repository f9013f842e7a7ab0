//! A strategy's targets as the bars where they change: what the lane engine
//! reads (a few dozen entries instead of one byte per bar).

/// Targets of bars `0..len`: `targets[k]` holds from `bars[k]` until the
/// next entry's bar. The first entry is at bar 0; consecutive targets
/// differ.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    bars: Vec<usize>,
    targets: Vec<i8>,
    len: usize,
}

impl Changes {
    /// Flat on all `len` bars (add changes with [`Changes::push`]).
    pub fn reset(&mut self, len: usize) {
        self.bars.clear();
        self.targets.clear();
        self.bars.push(0);
        self.targets.push(0);
        self.len = len;
    }

    /// From bar `t` on (after every bar pushed so far) the target is
    /// `target`.
    #[inline]
    pub fn push(&mut self, t: usize, target: i8) {
        let last = self.bars.len() - 1;
        if self.bars[last] == t {
            self.targets[last] = target;
            if last > 0 && self.targets[last - 1] == target {
                self.bars.pop();
                self.targets.pop();
            }
        } else if self.targets[last] != target {
            self.bars.push(t);
            self.targets.push(target);
        }
    }

    /// Adds the moves in `words` (bit `i` of `words[w]`: the target moves
    /// at bar `64 w + i`, below [`Changes::len`]) with their targets from
    /// `target`, right after [`Changes::reset`]. Each move must change the
    /// target.
    ///
    /// Faster than [`Changes::push`] per move: the entries are written
    /// into room made first, with the count in a register (pushes store
    /// the length and read the last bar back on every move).
    #[inline(always)]
    pub fn extend_moves(&mut self, words: &[u64], target: impl Fn(usize) -> i8) {
        let count: usize = words.iter().map(|w| w.count_ones() as usize).sum();
        let from = self.bars.len();
        self.bars.resize(from + count, 0);
        self.targets.resize(from + count, 0);
        let (bars, targets) = (&mut self.bars[..], &mut self.targets[..]);
        let mut k = from;
        for (w, &word) in words.iter().enumerate() {
            let mut moves = word;
            while moves != 0 {
                let t = w * 64 + moves.trailing_zeros() as usize;
                bars[k] = t;
                targets[k] = target(t);
                k += 1;
                moves &= moves - 1;
            }
        }
        debug_assert!(from == 1 && k == from + count);
        debug_assert!(bars.last().is_none_or(|&t| t < self.len));
        // A move at bar 0 replaces the target there.
        if count > 0 && bars[from] == bars[from - 1] {
            self.bars.remove(from - 1);
            self.targets.remove(from - 1);
        }
        debug_assert!(self.targets.windows(2).all(|t| t[0] != t[1]));
    }

    /// The changes of a target per bar.
    pub fn set_from(&mut self, positions: &[i8]) {
        self.reset(positions.len());
        let mut t = 0;
        let mut current = 0;
        loop {
            t = crate::engine::next_change(positions, t, current);
            if t >= positions.len() {
                break;
            }
            current = positions[t];
            self.push(t, current);
            t += 1;
        }
    }

    /// The bars covered.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Each change: the bar it takes effect and the target from there.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (usize, i8)> + '_ {
        self.bars.iter().copied().zip(self.targets.iter().copied())
    }

    /// A reader that moves forward through the bars.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            changes: self,
            at: 0,
        }
    }

    /// The target on every bar (what [`Changes::set_from`] read).
    pub fn to_positions(&self) -> Vec<i8> {
        let mut out = vec![0; self.len];
        for (k, (&from, &target)) in self.bars.iter().zip(&self.targets).enumerate() {
            let to = self
                .bars
                .get(k + 1)
                .copied()
                .unwrap_or(self.len)
                .min(self.len);
            out[from.min(to)..to].fill(target);
        }
        out
    }
}

/// Reads [`Changes`] at bars that never go backwards.
pub struct Cursor<'a> {
    changes: &'a Changes,
    /// The entry holding at the last bar asked for.
    at: usize,
}

impl crate::engine::Targets for Cursor<'_> {
    #[inline]
    fn at(&mut self, t: usize) -> i8 {
        let bars = &self.changes.bars;
        while self.at + 1 < bars.len() && bars[self.at + 1] <= t {
            self.at += 1;
        }
        self.changes.targets[self.at]
    }

    #[inline]
    fn first_differing(&mut self, from: usize, target: i8) -> usize {
        let len = self.changes.len;
        if from >= len {
            return len;
        }
        if self.at(from) != target {
            return from;
        }
        // Consecutive targets differ: the next entry is the change.
        self.changes.bars.get(self.at + 1).copied().unwrap_or(len)
    }
}

/// Where a scan writes the targets it finds: a target per bar
/// ([`PerBar`]), or only the bars where it changes ([`Changes`]).
pub(crate) trait Targets {
    /// Bars `from..to` all hold `target` (the one held before them).
    fn quiet(&mut self, from: usize, to: usize, target: i8);
    /// Bar `t` holds `target`.
    fn bar(&mut self, t: usize, target: i8);
    /// Bar `t`'s target, where it may differ from the bar before's (before
    /// bar 0: flat); [`Targets::bar`] is told too.
    fn moved(&mut self, t: usize, target: i8);
}

/// A target per bar.
pub(crate) struct PerBar<'a>(pub &'a mut [i8]);

impl Targets for PerBar<'_> {
    #[inline(always)]
    fn quiet(&mut self, from: usize, to: usize, target: i8) {
        let run = &mut self.0[from..to];
        // The rule machine's quiet runs are 16 bars: one fixed-size store.
        match <&mut [i8; 16]>::try_from(&mut *run) {
            Ok(run) => *run = [target; 16],
            Err(_) => run.fill(target),
        }
    }
    #[inline(always)]
    fn bar(&mut self, t: usize, target: i8) {
        self.0[t] = target;
    }
    #[inline(always)]
    fn moved(&mut self, _: usize, _: i8) {}
}

/// Only the bars where the target moves, with no target per bar written
/// and read again.
impl Targets for Changes {
    #[inline(always)]
    fn quiet(&mut self, _: usize, _: usize, _: i8) {}
    #[inline(always)]
    fn bar(&mut self, _: usize, _: i8) {}
    #[inline(always)]
    fn moved(&mut self, t: usize, target: i8) {
        self.push(t, target);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Targets;

    #[test]
    fn round_trip_and_lookups() {
        let p = [0, 0, 1, 1, 1, -1, 0, 0, 1];
        let mut c = Changes::default();
        c.set_from(&p);
        assert_eq!(c.to_positions(), p);
        assert_eq!(c.bars, [0, 2, 5, 6, 8]);
        let mut cur = c.cursor();
        assert_eq!(cur.first_differing(0, 0), 2);
        assert_eq!(cur.first_differing(3, 1), 5);
        assert_eq!(cur.first_differing(5, 0), 5);
        assert_eq!(cur.first_differing(6, 0), 8);
        assert_eq!(cur.first_differing(8, 1), 9);
        assert_eq!(cur.at(8), 1);
    }

    #[test]
    fn moves_as_bits_equal_pushes() {
        // Targets that move at bar 0, within words, across words, and at
        // the last bar.
        let mut positions = vec![0i8; 150];
        for (t, p) in positions.iter_mut().enumerate() {
            *p = match t {
                0..=2 => 1,
                3..=63 => 0,
                64..=64 => -1,
                65..=127 => 1,
                128..=148 => 0,
                _ => -1,
            };
        }
        let mut words = [0u64; 3];
        let mut before = 0;
        for (t, &p) in positions.iter().enumerate() {
            if p != before {
                words[t / 64] |= 1 << (t % 64);
            }
            before = p;
        }
        let mut c = Changes::default();
        c.reset(positions.len());
        c.extend_moves(&words, |t| positions[t]);
        let mut want = Changes::default();
        want.set_from(&positions);
        assert_eq!(c, want);
        assert_eq!(c.to_positions(), positions);
    }

    #[test]
    fn pushes_on_the_same_bar_replace_and_merge() {
        let mut c = Changes::default();
        c.reset(5);
        c.push(0, 1);
        c.push(2, -1);
        c.push(2, 1);
        c.push(3, 1);
        assert_eq!(c.to_positions(), [1, 1, 1, 1, 1]);
        assert_eq!(c.bars, [0]);
    }
}
