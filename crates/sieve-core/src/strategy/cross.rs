//! The crossing rule shared by `sma_cross` and `ema_cross`:
//! "fast crosses above slow at t" when fast[t] > slow[t] and, at the latest
//! earlier bar where fast ≠ slow with both defined, fast < slow. Bars where the
//! two are equal neither cross nor reset the memory of the last side.

use super::{len_param, Changes, Direction, LaneBuffers, ParamSpec, PerBar, Strategy, Targets};
use crate::data::Bars;
use crate::grid::ParamSpace;
use crate::indicators::{Indicator, IndicatorSet};
use crate::simd::Level;

/// The two series a crossing scan compares.
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a> {
    fast: &'a [f64],
    slow: &'a [f64],
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    /// Both rounded to f32 ([`IndicatorSet::get_narrow`]), which the vector
    /// blocks compare first; empty from [`Pair::wide`] (the portable blocks
    /// do not read them).
    narrow: (&'a [f32], &'a [f32]),
}

impl<'a> Pair<'a> {
    /// The pair of series for the portable blocks (no narrowed values).
    pub(crate) fn wide(fast: &'a [f64], slow: &'a [f64]) -> Self {
        Pair {
            fast,
            slow,
            narrow: (&[], &[]),
        }
    }

    /// The averages `fast` and `slow` of `set`, for any blocks.
    fn of(set: &'a IndicatorSet, fast: Indicator, slow: Indicator) -> Self {
        let ((fast, narrow_fast), (slow, narrow_slow)) = (set.both(fast), set.both(slow));
        Pair {
            fast,
            slow,
            narrow: (narrow_fast, narrow_slow),
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

/// [`Blocks::next_event`] on the narrowed values, [`BLOCK`] bars at a time:
/// `maybe(f, s)` tells whether any bar of the block at `f`, `s` may be an
/// event (on the event side or tied, in f32); only then `bits(f, s)` gives
/// the event bits and the tie bits of the `W` bars at `f`, `s`. Rounding to
/// f32 keeps order, so a strict narrow compare is the f64 one; a tie is
/// decided on the f64 values. The bars after the last whole block are
/// portable.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn narrowed<const W: usize>(
    pair: &Pair<'_>,
    mut t: usize,
    n: usize,
    last_side: i8,
    maybe: impl Fn(*const f32, *const f32) -> bool,
    bits: impl Fn(*const f32, *const f32) -> (u32, u32),
) -> usize {
    const { assert!(BLOCK.is_multiple_of(W) && BLOCK <= 32) };
    let (nf, ns) = pair.narrow;
    let whole = n.min(nf.len()).min(ns.len());
    while t + BLOCK <= whole {
        // In bounds: both hold `whole` ≥ t + BLOCK values.
        let (f, s) = (nf[t..].as_ptr(), ns[t..].as_ptr());
        if maybe(f, s) {
            let (mut events, mut ties) = (0u32, 0u32);
            for k in 0..BLOCK / W {
                let (e, tie) = bits(nf[t + W * k..].as_ptr(), ns[t + W * k..].as_ptr());
                events |= e << (W * k);
                ties |= tie << (W * k);
            }
            // Only ties before the first strict event can come first.
            if events != 0 {
                ties &= (events & events.wrapping_neg()) - 1;
            }
            while ties != 0 {
                let i = ties.trailing_zeros() as usize;
                let event = is_event(pair.fast[t + i], pair.slow[t + i], last_side);
                events |= u32::from(event) << i;
                ties &= ties - 1;
            }
            if events != 0 {
                return t + events.trailing_zeros() as usize;
            }
        }
        t += BLOCK;
    }
    Portable::next_event(pair, t, n, last_side)
}

/// Vector compares of the narrowed values for one side: `STRICT` the
/// event compare, `MAYBE` event or tie (`_CMP_*` predicates).
#[cfg(target_arch = "x86_64")]
trait Narrow {
    fn next<const STRICT: i32, const MAYBE: i32>(
        pair: &Pair<'_>,
        t: usize,
        n: usize,
        last_side: i8,
    ) -> usize;
}

/// [`Blocks::next_event`] with the compares of `last_side`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn by_side<N: Narrow>(pair: &Pair<'_>, t: usize, n: usize, last_side: i8) -> usize {
    use std::arch::x86_64::*;
    match last_side {
        1 => N::next::<_CMP_LT_OQ, _CMP_LE_OQ>(pair, t, n, last_side),
        -1 => N::next::<_CMP_GT_OQ, _CMP_GE_OQ>(pair, t, n, last_side),
        // Ordered not-equal: false where either is NaN, as sides.
        _ => N::next::<_CMP_NEQ_OQ, _CMP_ORD_Q>(pair, t, n, last_side),
    }
}

/// AVX-512 compares of 16 narrowed bars, straight into bit masks. Only used
/// inlined into functions compiled with `avx512f`.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx512Blocks;

#[cfg(target_arch = "x86_64")]
impl Narrow for Avx512Blocks {
    #[inline(always)]
    fn next<const STRICT: i32, const MAYBE: i32>(
        pair: &Pair<'_>,
        t: usize,
        n: usize,
        last_side: i8,
    ) -> usize {
        use std::arch::x86_64::*;
        // SAFETY (both closures): `narrowed` passes BLOCK readable values
        // at each pointer; the caller runs on AVX-512.
        let compare = |f: *const f32, s: *const f32, k: usize| unsafe {
            let (fv, sv) = (
                _mm512_loadu_ps(f.add(16 * k)),
                _mm512_loadu_ps(s.add(16 * k)),
            );
            (
                _mm512_cmp_ps_mask::<STRICT>(fv, sv),
                _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(fv, sv),
                _mm512_cmp_ps_mask::<MAYBE>(fv, sv),
            )
        };
        narrowed::<16>(
            pair,
            t,
            n,
            last_side,
            |f, s| (compare(f, s, 0).2 | compare(f, s, 1).2) != 0,
            |f, s| {
                let (events, ties, _) = compare(f, s, 0);
                (u32::from(events), u32::from(ties))
            },
        )
    }
}

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx512Blocks {
    #[inline(always)]
    fn next_event(pair: &Pair<'_>, t: usize, n: usize, last_side: i8) -> usize {
        by_side::<Self>(pair, t, n, last_side)
    }
}

/// AVX compares of 8 narrowed bars, each into eight bits. Only used inlined
/// into functions compiled with `avx`.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2Blocks;

#[cfg(target_arch = "x86_64")]
impl Narrow for Avx2Blocks {
    #[inline(always)]
    fn next<const STRICT: i32, const MAYBE: i32>(
        pair: &Pair<'_>,
        t: usize,
        n: usize,
        last_side: i8,
    ) -> usize {
        use std::arch::x86_64::*;
        // SAFETY (all three closures): `narrowed` passes BLOCK readable
        // values at each pointer; the caller runs on AVX.
        let load = |f: *const f32, s: *const f32, k: usize| unsafe {
            (_mm256_loadu_ps(f.add(8 * k)), _mm256_loadu_ps(s.add(8 * k)))
        };
        let maybe = |f, s, k| unsafe {
            let (fv, sv) = load(f, s, k);
            _mm256_cmp_ps::<MAYBE>(fv, sv)
        };
        narrowed::<8>(
            pair,
            t,
            n,
            last_side,
            |f, s| unsafe {
                let any = _mm256_or_ps(
                    _mm256_or_ps(maybe(f, s, 0), maybe(f, s, 1)),
                    _mm256_or_ps(maybe(f, s, 2), maybe(f, s, 3)),
                );
                _mm256_movemask_ps(any) != 0
            },
            |f, s| unsafe {
                let (fv, sv) = load(f, s, 0);
                let events = _mm256_cmp_ps::<STRICT>(fv, sv);
                let ties = _mm256_cmp_ps::<_CMP_EQ_OQ>(fv, sv);
                (
                    _mm256_movemask_ps(events) as u32,
                    _mm256_movemask_ps(ties) as u32,
                )
            },
        )
    }
}

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx2Blocks {
    #[inline(always)]
    fn next_event(pair: &Pair<'_>, t: usize, n: usize, last_side: i8) -> usize {
        by_side::<Self>(pair, t, n, last_side)
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
    /// Each average reads one parameter, so the grid's averages are those
    /// of each axis's values: what the default finds by walking every
    /// (fast, slow) pair (250,000 calls for 2..500 × 2..500), in 1,000.
    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        let mut keys = Vec::new();
        // The two parameters `averages` reads.
        for p in [0, 1] {
            space.for_each_setting(&[p], |v| keys.push((self.average)(len_param(v[p]))));
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }
    /// The crossing scan compares the f32 copies first.
    fn narrow_series(&self) -> bool {
        true
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
        _buffers: &mut LaneBuffers,
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
            let pair = Pair::of(self.indicators, fast, slow);
            cross_changes::<B>(pair, start, self.direction, end, changes);
        }
    }
}

/// The scan compiled for AVX-512: a block's test is two compares of 16
/// narrowed bars (comparisons of values rounded once, the same way for
/// every level, so the levels cannot differ).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
fn lane_changes_avx512(job: &Job<'_>, out: &mut [Changes]) {
    job.run::<Avx512Blocks>(out)
}

/// The scan compiled for AVX2: a block's test is four compares of 8
/// narrowed bars and one mask move.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn lane_changes_avx2(job: &Job<'_>, out: &mut [Changes]) {
    job.run::<Avx2Blocks>(out)
}

/// Bars per block of the fast path: crossings are tens of bars apart, so
/// most blocks are quiet (64 measured no faster).
const BLOCK: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn avx512_changes(pair: Pair<'_>, start: usize, d: Direction, n: usize, out: &mut Changes) {
        cross_changes::<Avx512Blocks>(pair, start, d, n, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    fn avx2_changes(pair: Pair<'_>, start: usize, d: Direction, n: usize, out: &mut Changes) {
        cross_changes::<Avx2Blocks>(pair, start, d, n, out)
    }

    /// Two random walks that cross often, with ties, NaNs, and (with
    /// `near`) values apart by less than f32 resolves: the narrowed
    /// compares see ties there that the f64 values do not have.
    fn walks(near: bool) -> (Vec<f64>, Vec<f64>) {
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
            // Now and then an undefined value, which is on neither side.
            fast.push(if fast.len() % 97 == 50 {
                f64::NAN
            } else {
                value
            });
            slow.push(b);
        }
        (fast, slow)
    }

    /// Every level's changes of `fast` against `slow` (and the f32 copies)
    /// are the positions of the scalar scan, for both directions and
    /// several starts and ends.
    fn assert_levels_agree(fast: &[f64], slow: &[f64], label: &str) {
        let narrow = |v: &[f64]| v.iter().map(|&v| v as f32).collect::<Vec<f32>>();
        let (nf, ns) = (narrow(fast), narrow(slow));
        let pair = Pair {
            fast,
            slow,
            narrow: (&nf, &ns),
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

    /// Bars where the f32 copies tie but the f64 values differ and make
    /// an event (after either side).
    fn f32_only_events(fast: &[f64], slow: &[f64]) -> usize {
        (0..fast.len())
            .filter(|&i| fast[i] as f32 == slow[i] as f32)
            .filter(|&i| on_a_side(fast[i], slow[i]))
            .count()
    }

    #[test]
    fn changes_are_the_positions() {
        for near in [false, true] {
            let (fast, slow) = walks(near);
            if near {
                assert!(
                    f32_only_events(&fast, &slow) > 20,
                    "the walks tie in f32 only"
                );
            }
            assert_levels_agree(&fast, &slow, &format!("near {near}"));
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
        // First a side and a cross seen in f64 only: above by 1e-12 for
        // two blocks, then below.
        let (mut fast, mut slow) = (vec![1.0 + 1e-12; 64], vec![1.0; 64]);
        fast.extend([1.0 - 1e-12; 64]);
        slow.extend([1.0; 64]);
        while fast.len() < 2000 {
            let (f, s) = (palette[next(16) as usize], palette[next(16) as usize]);
            for _ in 0..1 + next(40) {
                fast.push(f);
                slow.push(s);
            }
        }
        assert!(
            f32_only_events(&fast, &slow) > 100,
            "f32-only ties with events"
        );
        assert_levels_agree(&fast, &slow, "edge values");
    }

    #[test]
    fn the_averages_of_a_grid_are_those_of_every_pair() {
        use crate::evaluate::indicators_for_space;
        use crate::grid::{Axis, Constraint};
        for name in ["sma_cross", "ema_cross"] {
            let strategy = crate::strategy::lookup(name).expect("built in");
            let axis = |param: usize, values: &[f64]| Axis {
                param,
                name: strategy.params()[param].name.to_string(),
                values: values.to_vec(),
            };
            let fast_lt_slow = || Constraint::parse("fast < slow", strategy).expect("parses");
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
                let space = ParamSpace::new(strategy, axes, constraints).expect("a grid");
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
