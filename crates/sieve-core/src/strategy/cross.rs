//! The crossing rule shared by `sma_cross` and `ema_cross`:
//! "fast crosses above slow at t" when fast[t] > slow[t] and, at the latest
//! earlier bar where fast ≠ slow with both defined, fast < slow. Bars where the
//! two are equal neither cross nor reset the memory of the last side.

use super::Direction;

pub(crate) fn cross_positions(
    fast: &[f64],
    slow: &[f64],
    start: usize,
    direction: Direction,
    out: &mut [i8],
) {
    let n = out.len();
    let start = start.min(n);
    out[..start].fill(0);
    let (fast, slow) = (&fast[..n], &slow[..n]);
    let mut position = 0i8;
    // Sign of fast − slow at the latest bar where they differed (0: none yet).
    let mut last_side = 0i8;
    let mut t = start;
    while t < n {
        // Fast path: a block with no bar on the other side of `last_side`
        // holds no event (equal bars neither cross nor reset), so the whole
        // block keeps the position. Fixed-size blocks, branch-free: LLVM
        // turns the check into a few vector compares.
        if t + BLOCK <= n {
            let f: &[f64; BLOCK] = fast[t..t + BLOCK].try_into().unwrap_or(&[0.0; BLOCK]);
            let s: &[f64; BLOCK] = slow[t..t + BLOCK].try_into().unwrap_or(&[0.0; BLOCK]);
            let quiet = match last_side {
                1 => !any_pair(f, s, |a, b| a < b),
                -1 => !any_pair(f, s, |a, b| a > b),
                _ => !any_pair(f, s, |a, b| a != b),
            };
            if quiet {
                out[t..t + BLOCK].fill(position);
                t += BLOCK;
                continue;
            }
        }
        let end = (t + BLOCK).min(n);
        for i in t..end {
            let side = (fast[i] > slow[i]) as i8 - (fast[i] < slow[i]) as i8;
            if side != 0 && side != last_side {
                let enter = side > 0 && last_side < 0;
                let exit = side < 0 && last_side > 0;
                position = direction.step(position, enter, exit);
                last_side = side;
            }
            out[i] = position;
        }
        t = end;
    }
}

#[inline(always)]
fn any_pair(f: &[f64; BLOCK], s: &[f64; BLOCK], test: impl Fn(f64, f64) -> bool) -> bool {
    let mut any = 0u8;
    for i in 0..BLOCK {
        any |= test(f[i], s[i]) as u8;
    }
    any != 0
}

/// Bars per block of the fast path: crossings are tens of bars apart, so
/// most blocks are quiet.
const BLOCK: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_do_not_break_a_cross() {
        // below, equal, equal, above → a cross at bar 3; then equal, below → exit at 5.
        let fast = [1.0, 2.0, 2.0, 3.0, 2.0, 1.0];
        let slow = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0];
        let mut out = [9i8; 6];
        cross_positions(&fast, &slow, 0, Direction::Long, &mut out);
        assert_eq!(out, [0, 0, 0, 1, 1, 0]);
    }

    #[test]
    fn starting_above_is_not_a_cross() {
        // First defined bar already above: no earlier differing bar, no entry.
        let fast = [3.0, 3.0, 1.0, 3.0];
        let slow = [2.0, 2.0, 2.0, 2.0];
        let mut out = [0i8; 4];
        cross_positions(&fast, &slow, 0, Direction::Long, &mut out);
        assert_eq!(out, [0, 0, 0, 1]);
        cross_positions(&fast, &slow, 0, Direction::LongShort, &mut out);
        assert_eq!(out, [0, 0, -1, 1]);
    }

    #[test]
    fn touching_and_returning_is_not_a_cross() {
        // above, equal, above: the latest differing bar was above → no event.
        let fast = [1.0, 3.0, 2.0, 3.0];
        let slow = [2.0, 2.0, 2.0, 2.0];
        let mut out = [0i8; 4];
        cross_positions(&fast, &slow, 0, Direction::Long, &mut out);
        assert_eq!(out, [0, 1, 1, 1]);
    }
}
