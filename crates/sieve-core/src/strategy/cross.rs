//! The crossing rule shared by `sma_cross` and `ema_cross`:
//! "fast crosses above slow at t" when fast[t] > slow[t] and, at the latest
//! earlier bar where fast ≠ slow with both defined, fast < slow. Bars where the
//! two are equal neither cross nor reset the memory of the last side.

use super::{len_param, Changes, Direction, ParamSpec, Strategy};
use crate::data::Bars;
use crate::indicators::{Indicator, IndicatorSet};
use crate::simd::Level;

/// Where the crossing scan writes its positions.
trait Out {
    /// Bars `from..to` all hold `position`.
    fn quiet(&mut self, from: usize, to: usize, position: i8);
    /// Bar `t` holds `position`.
    fn bar(&mut self, t: usize, position: i8);
}

struct PerBar<'a>(&'a mut [i8]);

impl Out for PerBar<'_> {
    #[inline(always)]
    fn quiet(&mut self, from: usize, to: usize, position: i8) {
        self.0[from..to].fill(position);
    }
    #[inline(always)]
    fn bar(&mut self, t: usize, position: i8) {
        self.0[t] = position;
    }
}

impl Out for Changes {
    #[inline(always)]
    fn quiet(&mut self, _: usize, _: usize, _: i8) {}
    #[inline(always)]
    fn bar(&mut self, t: usize, position: i8) {
        self.push(t, position);
    }
}

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
    scan::<Portable>(fast, slow, start, direction, n, &mut PerBar(out));
}

/// [`cross_positions`] of the first `n` bars as changes.
#[inline(always)]
pub(crate) fn cross_changes<B: Blocks>(
    fast: &[f64],
    slow: &[f64],
    start: usize,
    direction: Direction,
    n: usize,
    out: &mut Changes,
) {
    out.reset(n);
    scan::<B>(fast, slow, start.min(n), direction, n, out);
}

#[inline(always)]
fn scan<B: Blocks>(
    fast: &[f64],
    slow: &[f64],
    start: usize,
    direction: Direction,
    n: usize,
    out: &mut impl Out,
) {
    let (fast, slow) = (&fast[..n], &slow[..n]);
    let mut position = 0i8;
    // Sign of fast − slow at the latest bar where they differed (0: none yet).
    let mut last_side = 0i8;
    let mut t = start;
    while t < n {
        // Only a bar on the other side of `last_side` (any side before the
        // first) is an event; equal bars neither cross nor reset. Find the
        // first in the next block with a few vector compares and jump to
        // it: the bars before it keep the position.
        let len = BLOCK.min(n - t);
        let events = B::events(&fast[t..t + len], &slow[t..t + len], last_side);
        if events == 0 {
            out.quiet(t, t + len, position);
            t += len;
            continue;
        }
        let i = t + events.trailing_zeros() as usize;
        out.quiet(t, i, position);
        let side = if fast[i] > slow[i] { 1 } else { -1 };
        let enter = side > 0 && last_side < 0;
        let exit = side < 0 && last_side > 0;
        position = direction.step(position, enter, exit);
        last_side = side;
        out.bar(i, position);
        t = i + 1;
    }
}

/// Finds the bars of a block (at most [`BLOCK`]) that are events: on the
/// other side of `last_side`, or on either side when it is 0.
pub(crate) trait Blocks {
    /// Bit i set where bar i of the block is an event.
    fn events(fast: &[f64], slow: &[f64], last_side: i8) -> u32;
}

/// Fixed-size loops the compiler vectorizes for the CPU it targets.
pub(crate) struct Portable;

impl Blocks for Portable {
    #[inline(always)]
    fn events(f: &[f64], s: &[f64], last_side: i8) -> u32 {
        match last_side {
            1 => block_mask(f, s, |a, b| a < b),
            -1 => block_mask(f, s, |a, b| a > b),
            _ => block_mask(f, s, on_a_side),
        }
    }
}

/// A block's event bits from vector compares of `W` bars each:
/// `compare(f, s)` gives the bits of the `W` bars at `f`, `s` (pointers to
/// `W` readable values each). Short blocks (the last) are portable.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn chunked<const W: usize>(
    f: &[f64],
    s: &[f64],
    last_side: i8,
    compare: impl Fn(*const f64, *const f64) -> u32,
) -> u32 {
    const { assert!(BLOCK.is_multiple_of(W) && BLOCK <= 32) };
    if f.len() < BLOCK || s.len() < BLOCK {
        return Portable::events(f, s, last_side);
    }
    let mut events = 0u32;
    for k in 0..BLOCK / W {
        // In bounds: both slices hold BLOCK values.
        events |= compare(f[W * k..].as_ptr(), s[W * k..].as_ptr()) << (W * k);
    }
    events
}

/// Two AVX-512 compares per block, straight into a bit mask. Only used
/// inlined into functions compiled with `avx512f`.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx512Blocks;

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx512Blocks {
    #[inline(always)]
    fn events(f: &[f64], s: &[f64], last_side: i8) -> u32 {
        use std::arch::x86_64::*;
        chunked::<8>(f, s, last_side, |f, s| {
            // SAFETY: `chunked` passes 8 readable values at each; the
            // caller runs on AVX-512.
            let m = unsafe {
                let (fv, sv) = (_mm512_loadu_pd(f), _mm512_loadu_pd(s));
                match last_side {
                    1 => _mm512_cmp_pd_mask::<_CMP_LT_OQ>(fv, sv),
                    -1 => _mm512_cmp_pd_mask::<_CMP_GT_OQ>(fv, sv),
                    // Ordered not-equal: false where either is NaN, as
                    // sides.
                    _ => _mm512_cmp_pd_mask::<_CMP_NEQ_OQ>(fv, sv),
                }
            };
            u32::from(m)
        })
    }
}

/// Four AVX compares per block, each into four bits. Only used inlined
/// into functions compiled with `avx`.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2Blocks;

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx2Blocks {
    #[inline(always)]
    fn events(f: &[f64], s: &[f64], last_side: i8) -> u32 {
        use std::arch::x86_64::*;
        chunked::<4>(f, s, last_side, |f, s| {
            // SAFETY: `chunked` passes 4 readable values at each; the
            // caller runs on AVX.
            unsafe {
                let (fv, sv) = (_mm256_loadu_pd(f), _mm256_loadu_pd(s));
                let c = match last_side {
                    1 => _mm256_cmp_pd::<_CMP_LT_OQ>(fv, sv),
                    -1 => _mm256_cmp_pd::<_CMP_GT_OQ>(fv, sv),
                    _ => _mm256_cmp_pd::<_CMP_NEQ_OQ>(fv, sv),
                };
                _mm256_movemask_pd(c) as u32
            }
        })
    }
}

/// Whether fast and slow differ as sides do: a NaN is on neither side
/// (where `a != b` would say they differ).
#[inline(always)]
#[allow(clippy::double_comparisons)]
fn on_a_side(a: f64, b: f64) -> bool {
    a < b || a > b
}

/// Bit i set where `test(f[i], s[i])` (at most [`BLOCK`] bars).
#[inline(always)]
fn block_mask(f: &[f64], s: &[f64], test: impl Fn(f64, f64) -> bool) -> u32 {
    if let (Ok(f), Ok(s)) = (<&[f64; BLOCK]>::try_from(f), <&[f64; BLOCK]>::try_from(s)) {
        // Fixed size: compiles to vector compares and a mask move.
        let mut m = 0u32;
        for i in 0..BLOCK {
            m |= u32::from(test(f[i], s[i])) << i;
        }
        return m;
    }
    let mut m = 0u32;
    for (i, (&a, &b)) in f.iter().zip(s).enumerate() {
        m |= u32::from(test(a, b)) << i;
    }
    m
}

/// A strategy that holds the crossing of a fast and a slow moving average of
/// one kind (`sma_cross`, `ema_cross`): parameters `fast`, `slow`.
pub struct AverageCross {
    pub(crate) name: &'static str,
    pub(crate) summary: &'static str,
    pub(crate) params: &'static [ParamSpec],
    /// The average of a length.
    pub(crate) average: fn(usize) -> Indicator,
}

/// The fast and the slow average of `p`.
fn averages(average: fn(usize) -> Indicator, p: &[f64]) -> (Indicator, Indicator) {
    (average(len_param(p[0])), average(len_param(p[1])))
}

impl Strategy for AverageCross {
    fn name(&self) -> &'static str {
        self.name
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }
    fn default_constraints(&self) -> &'static [&'static str] {
        &["fast < slow"]
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        let (fast, slow) = averages(self.average, p);
        out.extend([fast, slow]);
    }
    fn positions(&self, _: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let (fast, slow) = averages(self.average, p);
        let start = fast.first_valid().max(slow.first_valid());
        cross_positions(ind.get(fast), ind.get(slow), start, d, out);
    }
    fn lanes_pay(&self, _params: &[&[f64]]) -> bool {
        true
    }
    /// Straight to changes, with no target per bar (quiet stretches cost
    /// nothing).
    fn lane_changes(
        &self,
        bars: &Bars,
        ind: &IndicatorSet,
        params: &[&[f64]],
        d: Direction,
        end: usize,
        level: Level,
        _scratch: &mut Vec<i8>,
        out: &mut [Changes],
    ) {
        let job = Job {
            average: self.average,
            bars,
            indicators: ind,
            params,
            direction: d,
            end,
        };
        assert!(level <= Level::best(), "{level:?} on a CPU without it");
        #[cfg(target_arch = "x86_64")]
        match level {
            // SAFETY: the CPU has the features each function is compiled for.
            Level::Avx512 => return unsafe { lane_changes_avx512(&job, out) },
            Level::Avx2 => return unsafe { lane_changes_avx2(&job, out) },
            Level::Portable => {}
        }
        job.run::<Portable>(out)
    }
}

/// One call of [`AverageCross::lane_changes`].
struct Job<'a> {
    average: fn(usize) -> Indicator,
    bars: &'a Bars,
    indicators: &'a IndicatorSet,
    params: &'a [&'a [f64]],
    direction: Direction,
    end: usize,
}

impl Job<'_> {
    #[inline(always)]
    fn run<B: Blocks>(&self, out: &mut [Changes]) {
        let end = self.end.min(self.bars.len());
        for (p, changes) in self.params.iter().zip(out.iter_mut()) {
            let (fast, slow) = averages(self.average, p);
            let start = fast.first_valid().max(slow.first_valid());
            let (fast, slow) = (self.indicators.get(fast), self.indicators.get(slow));
            cross_changes::<B>(fast, slow, start, self.direction, end, changes);
        }
    }
}

/// The scan compiled for AVX-512: the block tests become two vector
/// compares and a mask (comparisons only, so nothing can round
/// differently).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
fn lane_changes_avx512(job: &Job<'_>, out: &mut [Changes]) {
    job.run::<Avx512Blocks>(out)
}

/// The scan compiled for AVX2: four compares and mask moves per block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn lane_changes_avx2(job: &Job<'_>, out: &mut [Changes]) {
    job.run::<Avx2Blocks>(out)
}

/// Bars per block of the fast path: crossings are tens of bars apart, so
/// most blocks are quiet.
const BLOCK: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn avx512_changes(
        fast: &[f64],
        slow: &[f64],
        start: usize,
        direction: Direction,
        n: usize,
        out: &mut Changes,
    ) {
        cross_changes::<Avx512Blocks>(fast, slow, start, direction, n, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn avx2_changes(
        fast: &[f64],
        slow: &[f64],
        start: usize,
        direction: Direction,
        n: usize,
        out: &mut Changes,
    ) {
        cross_changes::<Avx2Blocks>(fast, slow, start, direction, n, out)
    }

    #[test]
    fn changes_are_the_positions() {
        // Two random walks that cross often, with ties, NaNs and a late start.
        let (mut a, mut b, mut x) = (0.0f64, 0.0f64, 12345u64);
        let mut fast = Vec::new();
        let mut slow = Vec::new();
        for _ in 0..700 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            a += ((x >> 40) % 5) as f64 - 2.0;
            b += ((x >> 20) % 3) as f64 - 1.0;
            // Now and then an undefined value, which is on neither side.
            fast.push(if fast.len() % 97 == 50 { f64::NAN } else { a });
            slow.push(b);
        }
        for direction in [Direction::Long, Direction::LongShort] {
            for (start, n) in [(0, 700), (37, 700), (5, 333), (690, 700)] {
                let mut positions = vec![0i8; n];
                cross_positions(&fast, &slow, start, direction, &mut positions);
                let mut changes = Changes::default();
                for level in Level::available() {
                    match level {
                        // SAFETY: the CPU has each level's features.
                        #[cfg(target_arch = "x86_64")]
                        Level::Avx512 => unsafe {
                            avx512_changes(&fast, &slow, start, direction, n, &mut changes)
                        },
                        #[cfg(target_arch = "x86_64")]
                        Level::Avx2 => unsafe {
                            avx2_changes(&fast, &slow, start, direction, n, &mut changes)
                        },
                        _ => cross_changes::<Portable>(
                            &fast,
                            &slow,
                            start,
                            direction,
                            n,
                            &mut changes,
                        ),
                    }
                    assert_eq!(changes.to_positions(), positions, "{level:?}");
                }
                assert!(positions.iter().any(|&p| p != 0) || start >= 690);
            }
        }
    }

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
