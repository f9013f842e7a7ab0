//! The crossing scan, shared by the built-in crosses (`sma_cross`,
//! `ema_cross`: [`super::average_cross`]) and rule strategies whose rules
//! are one crossing pair of shared averages (`rules/compile.rs` finds
//! them): where a pair of series cross, the 16-bit codes compared first,
//! with the blocks of the CPU's SIMD level. It sits in the strategy layer,
//! beside the `Strategy` trait whose `Changes` and `Direction` it writes
//! and reads, below every strategy that calls it.
//!
//! The crossing rule: "fast crosses above slow at t" when fast[t] > slow[t] and, at the latest
//! earlier bar where fast ≠ slow with both defined, fast < slow. Bars where the
//! two are equal neither cross nor reset the memory of the last side.

use super::{Changes, Direction, PerBar, Targets};
use crate::data::Bars;
#[cfg(target_arch = "x86_64")]
use crate::indicators::PAST_END;
use crate::indicators::{Indicator, IndicatorSet};
use crate::simd::Level;

/// The two series a crossing scan compares.
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a> {
    fast: &'a [f64],
    slow: &'a [f64],
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    /// Both as 16-bit codes on one scale ([`IndicatorSet::with_codes`]),
    /// which the vector blocks compare first; empty from [`Pair::wide`]
    /// (the portable blocks do not read them).
    codes: (&'a [i16], &'a [i16]),
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    /// The first bar where both codes hold.
    coded_from: usize,
}

impl<'a> Pair<'a> {
    /// The pair of series for the portable blocks (no codes).
    pub(crate) fn wide(fast: &'a [f64], slow: &'a [f64]) -> Self {
        Pair {
            fast,
            slow,
            codes: (&[], &[]),
            coded_from: 0,
        }
    }

    /// The averages `fast` and `slow` of `set`, for any blocks.
    fn of(set: &'a IndicatorSet, fast: Indicator, slow: Indicator) -> Self {
        let ((fast, fast_codes), (slow, slow_codes)) = (set.with_codes(fast), set.with_codes(slow));
        Pair {
            fast,
            slow,
            codes: (&fast_codes.values, &slow_codes.values),
            coded_from: fast_codes.from.max(slow_codes.from),
        }
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
    scan::<Portable>(
        Pair::wide(fast, slow),
        start,
        direction,
        n,
        &mut PerBar(out),
    );
}

/// [`cross_positions`] of the first `n` bars as changes.
#[inline(always)]
pub(crate) fn cross_changes<B: Blocks>(
    pair: Pair<'_>,
    start: usize,
    direction: Direction,
    n: usize,
    out: &mut Changes,
) {
    out.reset(n);
    scan::<B>(pair, start.min(n), direction, n, out);
}

#[inline(always)]
fn scan<B: Blocks>(
    pair: Pair<'_>,
    start: usize,
    direction: Direction,
    n: usize,
    out: &mut impl Targets,
) {
    let (fast, slow) = (&pair.fast[..n], &pair.slow[..n]);
    let mut position = 0i8;
    // Sign of fast − slow at the latest bar where they differed (0: none yet).
    let mut last_side = 0i8;
    let mut t = start;
    while t < n {
        // Only a bar on the other side of `last_side` (any side before the
        // first) is an event; equal bars neither cross nor reset. Jump to
        // the next: the bars before it keep the position.
        let i = B::next_event(&pair, t, n, last_side);
        out.quiet(t, i, position);
        if i == n {
            break;
        }
        // An event after a side is a bar on the other side (and reading
        // the f64 values here would be a cache miss per crossing).
        let side = match last_side {
            0 if fast[i] > slow[i] => 1,
            0 => -1,
            side => -side,
        };
        let enter = side > 0 && last_side < 0;
        let exit = side < 0 && last_side > 0;
        position = direction.step(position, enter, exit);
        last_side = side;
        out.bar(i, position);
        out.moved(i, position);
        t = i + 1;
    }
}

/// Finds the next event: a bar on the other side of `last_side`, or on
/// either side when it is 0.
pub(crate) trait Blocks {
    /// The first event in bars `t..n`, or `n` when there is none.
    fn next_event(pair: &Pair<'_>, t: usize, n: usize, last_side: i8) -> usize;
}

/// Blocks of f64 values in fixed-size loops the compiler vectorizes for
/// the CPU it targets.
pub(crate) struct Portable;

impl Blocks for Portable {
    #[inline(always)]
    fn next_event(pair: &Pair<'_>, mut t: usize, n: usize, last_side: i8) -> usize {
        while t < n {
            let len = BLOCK.min(n - t);
            let (f, s) = (&pair.fast[t..t + len], &pair.slow[t..t + len]);
            // One loop per side, each vectorized.
            let events = match last_side {
                1 => block_mask(f, s, |a, b| a < b),
                -1 => block_mask(f, s, |a, b| a > b),
                _ => block_mask(f, s, on_a_side),
            };
            if events != 0 {
                return t + events.trailing_zeros() as usize;
            }
            t += len;
        }
        n
    }
}

/// Whether bar values `a` (fast) and `b` (slow) are an event after
/// `last_side`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn is_event(a: f64, b: f64, last_side: i8) -> bool {
    match last_side {
        1 => a < b,
        -1 => a > b,
        _ => on_a_side(a, b),
    }
}

/// [`Blocks::next_event`] on the codes, [`BLOCK`] bars at a time: `maybe(f,
/// s)` tells whether any bar of the block at `f`, `s` may be an event (its
/// codes on the event side or equal); only then `bits(f, s)` gives the
/// event bits and the tie bits of the block's bars, two bits per bar.
/// Codes keep order, so a strict compare of codes is the f64 one; a tie is
/// decided on the f64 values. The last block reads codes past bar `n`
/// (those past the series' end are [`PAST_END`] padding) and drops their
/// bits. Bars before the codes hold are portable.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn coded(
    pair: &Pair<'_>,
    mut t: usize,
    n: usize,
    last_side: i8,
    maybe: impl Fn(*const i16, *const i16) -> bool,
    bits: impl Fn(*const i16, *const i16) -> (u64, u64),
) -> usize {
    const { assert!(BLOCK <= PAST_END + 1) };
    let (cf, cs) = pair.codes;
    // A block may start at any bar before `readable`.
    let readable = cf.len().min(cs.len()).saturating_sub(BLOCK - 1);
    if t < pair.coded_from {
        let to = pair.coded_from.min(n);
        let i = Portable::next_event(pair, t, to, last_side);
        if i < to {
            return i;
        }
        t = to;
    }
    let end = n.min(readable);
    let (cf, cs) = (cf.as_ptr(), cs.as_ptr());
    while t < end {
        // SAFETY: t < readable, so both hold t + BLOCK codes.
        let (f, s) = unsafe { (cf.add(t), cs.add(t)) };
        if maybe(f, s) {
            let (mut events, mut ties) = bits(f, s);
            if n - t < BLOCK {
                let bars = (1u64 << (2 * (n - t))) - 1;
                events &= bars;
                ties &= bars;
            }
            // Only ties before the first strict event can come first.
            if events != 0 {
                ties &= (events & events.wrapping_neg()) - 1;
            }
            while ties != 0 {
                let i = ties.trailing_zeros() as usize / 2;
                if is_event(pair.fast[t + i], pair.slow[t + i], last_side) {
                    return t + i;
                }
                ties &= !(3 << (2 * i));
            }
            if events != 0 {
                return t + events.trailing_zeros() as usize / 2;
            }
        }
        t += BLOCK;
    }
    Portable::next_event(pair, t.min(n), n, last_side)
}

/// AVX2 compares of 16 codes, each into two bits. Only used inlined into
/// functions compiled with `avx2` (AVX-512 ones included: 32 codes are two
/// AVX registers).
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2Blocks;

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx2Blocks {
    #[inline(always)]
    fn next_event(pair: &Pair<'_>, t: usize, n: usize, last_side: i8) -> usize {
        debug_assert!(Level::best() >= Level::Avx2);
        // SAFETY: only used in functions compiled with AVX2, which run on
        // CPUs that have it.
        unsafe { avx2_next_event(pair, t, n, last_side) }
    }
}

/// [`Avx2Blocks`]' [`Blocks::next_event`]: its closures inherit the
/// features, so the intrinsics inline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
#[inline]
fn avx2_next_event(pair: &Pair<'_>, t: usize, n: usize, last_side: i8) -> usize {
    use std::arch::x86_64::*;
    const { assert!(BLOCK == 32) };
    // SAFETY: `coded` passes BLOCK readable codes at each pointer.
    let load = |p: *const i16| unsafe {
        (
            _mm256_loadu_si256(p.cast()),
            _mm256_loadu_si256(p.add(16).cast()),
        )
    };
    // Bit pairs of the 32 bars, from the two halves' compares.
    let mask = |(lo, hi): (__m256i, __m256i)| {
        u64::from(_mm256_movemask_epi8(lo) as u32)
            | u64::from(_mm256_movemask_epi8(hi) as u32) << 32
    };
    let ties = |f: *const i16, s: *const i16| {
        let ((f0, f1), (s0, s1)) = (load(f), load(s));
        (_mm256_cmpeq_epi16(f0, s0), _mm256_cmpeq_epi16(f1, s1))
    };
    // The bars where the first is above the second.
    let above = |f: *const i16, s: *const i16| {
        let ((f0, f1), (s0, s1)) = (load(f), load(s));
        (_mm256_cmpgt_epi16(f0, s0), _mm256_cmpgt_epi16(f1, s1))
    };
    // Whether some bar is not above (all bits are set otherwise).
    let not_all = |(a, b): (__m256i, __m256i)| _mm256_movemask_epi8(_mm256_and_si256(a, b)) != -1;
    match last_side {
        // Events where fast is below; maybe where it is not above.
        1 => coded(
            pair,
            t,
            n,
            last_side,
            |f, s| not_all(above(f, s)),
            |f, s| (mask(above(s, f)), mask(ties(f, s))),
        ),
        -1 => coded(
            pair,
            t,
            n,
            last_side,
            |f, s| not_all(above(s, f)),
            |f, s| (mask(above(f, s)), mask(ties(f, s))),
        ),
        // Every coded bar is on a side or tied.
        _ => coded(
            pair,
            t,
            n,
            last_side,
            |_, _| true,
            |f, s| {
                let tied = mask(ties(f, s));
                (!tied, tied)
            },
        ),
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

/// Crossing scans of pairs of series of one set ([`AverageCross`]'s
/// averages, or two shared series of a rule strategy): each pair's changes,
/// the 16-bit codes compared first.
pub(crate) struct CrossJob<'a> {
    pub bars: &'a Bars,
    pub indicators: &'a IndicatorSet,
    /// (fast, slow) per combination.
    pub pairs: &'a [(Indicator, Indicator)],
    pub direction: Direction,
    pub end: usize,
}

impl CrossJob<'_> {
    /// The changes of every pair with the blocks of `level`.
    pub(crate) fn changes(&self, level: Level, out: &mut [Changes]) {
        assert!(level <= Level::best(), "{level:?} on a CPU without it");
        #[cfg(target_arch = "x86_64")]
        match level {
            // SAFETY: the CPU has the features each function is compiled for.
            Level::Avx512 => return unsafe { lane_changes_avx512(self, out) },
            Level::Avx2 => return unsafe { lane_changes_avx2(self, out) },
            Level::Portable => {}
        }
        self.run::<Portable>(out)
    }

    #[inline(always)]
    fn run<B: Blocks>(&self, out: &mut [Changes]) {
        let end = self.end.min(self.bars.len());
        for (&(fast, slow), changes) in self.pairs.iter().zip(out.iter_mut()) {
            let start = fast.first_valid().max(slow.first_valid());
            let pair = Pair::of(self.indicators, fast, slow);
            cross_changes::<B>(pair, start, self.direction, end, changes);
        }
    }
}

/// The scan compiled for AVX-512: the AVX2 blocks (compares of the same
/// codes, so the levels cannot differ).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
fn lane_changes_avx512(job: &CrossJob<'_>, out: &mut [Changes]) {
    job.run::<Avx2Blocks>(out)
}

/// The scan compiled for AVX2: a block's test is two compares of 16 codes
/// and one mask move.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn lane_changes_avx2(job: &CrossJob<'_>, out: &mut [Changes]) {
    job.run::<Avx2Blocks>(out)
}

/// Bars per block of the fast path: crossings are tens of bars apart, so
/// most blocks are quiet (64 measured no faster).
const BLOCK: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::ParamSpace;
    use crate::indicators::CodeScale;

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
    fn avx512_changes(pair: Pair<'_>, start: usize, d: Direction, n: usize, out: &mut Changes) {
        cross_changes::<Avx2Blocks>(pair, start, d, n, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2")]
    fn avx2_changes(pair: Pair<'_>, start: usize, d: Direction, n: usize, out: &mut Changes) {
        cross_changes::<Avx2Blocks>(pair, start, d, n, out)
    }

    /// Two random walks that cross often, with ties, three undefined
    /// values first, and (with `near`) values apart by less than codes
    /// resolve: their compares see ties there that the f64 values do not
    /// have; with `nans`, undefined values now and then (which leave the
    /// codes only the bars after the last).
    fn walks(near: bool, nans: bool) -> (Vec<f64>, Vec<f64>) {
        let (mut a, mut b, mut x) = (1000.0f64, 1000.0f64, 12345u64);
        let mut fast = Vec::new();
        let mut slow = Vec::new();
        for _ in 0..700 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            a += ((x >> 40) % 5) as f64 - 2.0;
            b += ((x >> 20) % 3) as f64 - 1.0;
            // Every fourth bar (with `near`), fast within 1e-9 of slow.
            let value = if near && (x >> 8) % 4 == 0 {
                b + (((x >> 10) % 3) as f64 - 1.0) * 1e-9
            } else {
                a
            };
            // Undefined values, which are on neither side.
            let i = fast.len();
            fast.push(if i < 3 || nans && i % 97 == 50 {
                f64::NAN
            } else {
                value
            });
            slow.push(b);
        }
        (fast, slow)
    }

    /// The scales the tests code values on: each bar's span of the two (as
    /// the screen's), every value in one code around `mid` apart from
    /// clamped ends (ties everywhere), and the default (coarse).
    fn scales(fast: &[f64], slow: &[f64], mid: f64) -> [(&'static str, CodeScale); 3] {
        let len = fast.len();
        [
            (
                "each bar's span",
                CodeScale::spanning_each_bar(len, [fast, slow]),
            ),
            ("tight", CodeScale::spanning(len, mid, mid)),
            ("coarse", CodeScale::default()),
        ]
    }

    /// Every level's changes of `fast` against `slow` (their codes on
    /// `scale`) are the positions of the scalar scan, for both directions
    /// and several starts and ends.
    fn assert_levels_agree(fast: &[f64], slow: &[f64], scale: &CodeScale, label: &str) {
        let (cf, cs) = (scale.codes(fast), scale.codes(slow));
        let pair = Pair {
            fast,
            slow,
            codes: (&cf.values, &cs.values),
            coded_from: cf.from.max(cs.from),
        };
        let len = fast.len();
        for direction in [Direction::Long, Direction::LongShort] {
            for (start, n) in [(0, len), (37, len), (5, len / 2), (len - 10, len)] {
                let mut positions = vec![0i8; n];
                cross_positions(fast, slow, start, direction, &mut positions);
                let mut changes = Changes::default();
                for level in Level::available() {
                    match level {
                        // SAFETY: the CPU has each level's features.
                        #[cfg(target_arch = "x86_64")]
                        Level::Avx512 => unsafe {
                            avx512_changes(pair, start, direction, n, &mut changes)
                        },
                        #[cfg(target_arch = "x86_64")]
                        Level::Avx2 => unsafe {
                            avx2_changes(pair, start, direction, n, &mut changes)
                        },
                        _ => cross_changes::<Portable>(pair, start, direction, n, &mut changes),
                    }
                    assert_eq!(changes.to_positions(), positions, "{level:?} {label}");
                }
                assert!(
                    positions.iter().any(|&p| p != 0) || start >= len - 10,
                    "{label}"
                );
            }
        }
    }

    /// Bars where the codes tie but the f64 values differ and make an
    /// event (after either side).
    fn code_only_events(fast: &[f64], slow: &[f64], scale: &CodeScale) -> usize {
        (0..fast.len())
            .filter(|&i| on_a_side(fast[i], slow[i]))
            .filter(|&i| scale.code(i, fast[i]) == scale.code(i, slow[i]))
            .count()
    }

    #[test]
    fn changes_are_the_positions() {
        for (near, nans) in [(false, false), (true, false), (true, true)] {
            let (fast, slow) = walks(near, nans);
            let [by_span, tight, coarse] = scales(&fast, &slow, 1000.0);
            if near {
                assert!(
                    code_only_events(&fast, &slow, &by_span.1) > 20,
                    "the walks tie in codes only"
                );
            }
            assert!(code_only_events(&fast, &slow, &tight.1) > 200);
            for (name, scale) in &[by_span, tight, coarse] {
                let label = format!("near {near}, nans {nans}, {name}");
                assert_levels_agree(&fast, &slow, scale, &label);
            }
        }
    }

    /// Values where rounding to f32 overflows to ±∞, flushes to ±0, or
    /// ties, next to ±∞, signed zeros and NaN, in runs long enough to fill
    /// whole blocks.
    #[test]
    fn edge_values_scan_as_in_f64() {
        let big = f64::from(f32::MAX);
        let palette = [
            1e39,
            2e39,
            -1e39,
            f64::INFINITY,
            f64::NEG_INFINITY,
            big,
            big * (1.0 + 1e-12),
            1e-310,
            2e-310,
            -1e-310,
            0.0,
            -0.0,
            f64::NAN,
            1.0,
            1.0 + 1e-12,
            1.0 - 1e-12,
        ];
        let mut x = 99u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        // Without NaN the codes hold on every bar; with it, after the last.
        for with_nan in [false, true] {
            let palette: Vec<f64> = palette
                .iter()
                .copied()
                .filter(|v| with_nan || !v.is_nan())
                .collect();
            // First a side and a cross seen in f64 only: above by 1e-12
            // for two blocks, then below.
            let (mut fast, mut slow) = (vec![1.0 + 1e-12; 64], vec![1.0; 64]);
            fast.extend([1.0 - 1e-12; 64]);
            slow.extend([1.0; 64]);
            while fast.len() < 2000 {
                let m = palette.len() as u64;
                let (f, s) = (palette[next(m) as usize], palette[next(m) as usize]);
                for _ in 0..1 + next(40) {
                    fast.push(f);
                    slow.push(s);
                }
            }
            for (name, scale) in &scales(&fast, &slow, 1.0) {
                assert!(
                    code_only_events(&fast, &slow, scale) > 100,
                    "{name}: code-only ties with events"
                );
                let label = format!("edge values, NaN {with_nan}, {name}");
                assert_levels_agree(&fast, &slow, scale, &label);
            }
        }
    }

    #[test]
    fn the_averages_of_a_grid_are_those_of_every_pair() {
        use crate::grid::{Axis, Constraint};
        use crate::strategy::indicators_for_space;
        for name in ["sma_cross", "ema_cross"] {
            let strategy = crate::strategy::lookup(name).expect("built in");
            let axis = |param: usize, values: &[f64]| Axis {
                param,
                name: strategy.params()[param].name.to_string(),
                values: values.to_vec(),
            };
            let fast_lt_slow = || {
                Constraint::parse("fast < slow", strategy.name(), strategy.params())
                    .expect("parses")
            };
            let spaces = [
                // Overlapping axes, a constraint that excludes some pairs.
                (vec![axis(0, &[2.0, 5.0, 9.0]), axis(1, &[5.0, 20.0])], true),
                // Slow fixed; a fast value no allowed pair uses (both ways
                // compute its average: neither reads constraints).
                (vec![axis(0, &[3.0, 700.0])], true),
                // Neither swept: the defaults.
                (vec![], false),
                (vec![axis(1, &[4.0, 4.0, 30.0])], false),
            ];
            for (axes, constrained) in spaces {
                let constraints = if constrained {
                    vec![fast_lt_slow()]
                } else {
                    vec![]
                };
                let space = ParamSpace::new(strategy.params(), axes, constraints).expect("a grid");
                let every_pair = indicators_for_space(strategy, &space);
                assert!(!every_pair.is_empty());
                assert_eq!(strategy.space_indicators(&space), every_pair, "{name}");
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
