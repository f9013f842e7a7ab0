//! The engine and one window's accumulator for [`LANES`] combinations at
//! once.
//!
//! Fills are rare (tens of bars apart), so they stay scalar: each lane keeps
//! its own [`Account`] and the bar of its next fill, exactly as
//! [`crate::engine::simulate`] computes them. Between fills every lane's
//! equity is `cash + signed_units · close`, and the per-bar work — the
//! equity, the return, its sums and the drawdown — runs on all lanes at once
//! in vector registers ([`crate::simd`]: one AVX-512 register, two halves of
//! one AVX register each, or portable arrays), and a stretch where every
//! lane is flat is skipped to the next fill.
//!
//! Each lane performs the same f64 operations in the same order as the
//! scalar engine and [`WindowStats`], so its metrics are bit-identical, with
//! three differences that are provably invisible:
//!
//! * a flat bar's return is computed as `cash / cash − 1` (exactly 0 for a
//!   positive finite cash) where the scalar sink adds a known zero;
//! * the drawdown `1 − equity / peak` is computed only on bars where a
//!   conservative test (one multiplication) says it may exceed the maximum
//!   so far, not at every new low: the maximum comes out the same (the
//!   argument is next to [`Accumulators::window`]);
//! * where every lane is flat after a fill, the bars up to the next fill are
//!   skipped (each would repeat the one before exactly).
//!
//! Both need a positive, finite equity: a lane whose equity is not positive
//! and finite on every bar of the window (its starting value included) is
//! reported as inexact, and the caller scores it with the scalar engine.

// Lanes and bars are indexed by number here: several arrays share the index,
// and the iterator form of the bar loop compiled to slower code (its
// counters lived in memory).
#![allow(clippy::needless_range_loop)]

use crate::data::Bars;
use crate::engine::{Account, EngineConfig};
use crate::metrics::{Drawdown, ReturnMoments, Window, WindowStats};
use crate::strategy::{Changes, Cursor};

#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx4, Avx512};
use crate::simd::{Level, Portable, Vector, LANES};

/// Slack of the drawdown pre-test: generous next to rounding (2⁻⁵³), so a
/// skipped episode provably cannot beat the maximum.
const SLACK: f64 = 1e-9;

/// The running state of every lane's window metrics.
#[derive(Clone, Copy)]
struct Accumulators<const W: usize> {
    prev: [f64; W],
    sum: [f64; W],
    sum_sq: [f64; W],
    downside_sq: [f64; W],
    peak: [f64; W],
    /// `(1 − max) · (1 + SLACK)` once `max > 0`, 1 before: an equity at or
    /// above `peak · factor` cannot set a new maximum drawdown.
    factor: [f64; W],
    max: [f64; W],
}

impl<const W: usize> Accumulators<W> {
    fn new(start: [f64; W]) -> Self {
        Accumulators {
            prev: start,
            sum: [0.0; W],
            sum_sq: [0.0; W],
            downside_sq: [0.0; W],
            peak: start,
            factor: [1.0; W],
            max: [0.0; W],
        }
    }

    /// Bars `start..end` of the window: fills where `fills` has them, the
    /// metrics of every bar. The accumulators stay in registers; a fill
    /// only reloads the lanes' cash and units.
    #[inline(always)]
    fn window<V: Vector<W>, const DOWNSIDE: bool>(
        &mut self,
        close: &[f64],
        start: usize,
        end: usize,
        fills: &mut Fills<'_, W>,
    ) {
        let (zero, one, slack) = (V::splat(0.0), V::splat(1.0), V::splat(1.0 + SLACK));
        let mut cash = V::load(&fills.cash);
        let mut units = V::load(&fills.units);
        let mut prev = V::load(&self.prev);
        let mut sum = V::load(&self.sum);
        let mut sum_sq = V::load(&self.sum_sq);
        let mut downside_sq = V::load(&self.downside_sq);
        let mut peak = V::load(&self.peak);
        let mut factor = V::load(&self.factor);
        let mut max = V::load(&self.max);
        let close = &close[..end];
        let mut next_event = fills.next_event;
        let mut all_flat = fills.all_flat();
        let mut t = start;
        while t < end {
            if t == next_event {
                fills.fill(t);
                cash = V::load(&fills.cash);
                units = V::load(&fills.units);
                next_event = fills.next_event;
                all_flat = fills.all_flat();
            }
            let e = cash.add(units.mul(V::splat(close[t])));
            let r = e.div(prev).sub(one);
            sum = sum.add(r);
            sum_sq = sum_sq.add(r.mul(r));
            if DOWNSIDE {
                let d = V::select(r.lt(zero), r, zero);
                downside_sq = downside_sq.add(d.mul(d));
            }
            prev = e;
            peak = V::select(e.gt(peak), e, peak);
            let deep = e.lt(peak.mul(factor));
            if V::any(deep) {
                // The scalar drawdown's `1 − equity / peak`, where it may
                // set a new maximum.
                let dd = one.sub(e.div(peak));
                let more = V::and(deep, dd.gt(max));
                max = V::select(more, dd, max);
                factor = V::select(more, one.sub(dd).mul(slack), factor);
            }
            t += 1;
            if all_flat && t < next_event {
                // Every lane flat since this bar: until the next fill each
                // bar repeats it exactly (equity `cash`, return `cash / cash
                // − 1` = +0 adds nothing, no new peak or low, and a
                // drawdown already counted) — skip to that fill.
                t = next_event.min(end);
            }
        }
        prev.store(&mut self.prev);
        sum.store(&mut self.sum);
        sum_sq.store(&mut self.sum_sq);
        downside_sq.store(&mut self.downside_sq);
        peak.store(&mut self.peak);
        factor.store(&mut self.factor);
        max.store(&mut self.max);
    }
}

// Why skipping a bar with `equity ≥ peak · factor` (both rounded) cannot
// change the maximum: then `x = equity / peak ≥ (1 − max)(1 + SLACK)(1 − 2⁻⁵³)³`,
// so `1 − fl(x) < max` and `fl(1 − fl(x)) ≤ max`, for `0 < max < 1`
// (`fl(1 − max)` is within 2⁻⁵³ of `1 − max`); at `max = 0` the factor is 1
// and a bar at or above the peak gives 0; at `max = 1` any positive equity
// gives at most 1. Every bar not skipped has a drawdown at most the scalar
// drawdown's running maximum (its low so far in the episode is at least as
// deep), and every new low that raises that maximum is not skipped: the
// maxima agree bar by bar.

/// One lane's fills and trades.
struct Lane<'a> {
    account: Account<'a>,
    next_fill: usize,
    /// Receives the lane's closed trades (only its trade statistics are
    /// read from the simulation; the rest is set at the end).
    stats: WindowStats,
    /// Bars of the window held up to the last fill, less the place of
    /// the bar the current position opened on (see [`Fills::place`]).
    exposed: i64,
}

/// Every lane's account, and the cash and signed units the bars mark.
struct Fills<'a, const W: usize> {
    lanes: [Lane<'a>; W],
    targets: [Cursor<'a>; W],
    open: &'a [f64],
    close: &'a [f64],
    window: Window,
    cash: [f64; W],
    units: [f64; W],
    /// The first bar on which some lane fills.
    next_event: usize,
}

impl<'a, const W: usize> Fills<'a, W> {
    fn new(
        changes: &[&'a Changes; W],
        bars: &'a Bars,
        cfg: &'a EngineConfig,
        window: &Window,
        end: usize,
    ) -> Self {
        Fills {
            lanes: std::array::from_fn(|_| Lane {
                account: Account::new(cfg),
                next_fill: 0,
                stats: WindowStats::new(window, cfg.initial_cash),
                exposed: 0,
            }),
            targets: changes.map(|c| c.cursor()),
            open: &bars.open[..end],
            close: &bars.close[..end],
            window: *window,
            cash: [cfg.initial_cash; W],
            units: [0.0; W],
            next_event: 0,
        }
    }

    /// Whether no lane holds a position.
    fn all_flat(&self) -> bool {
        self.units.iter().all(|&u| u == 0.0)
    }

    /// Bar `t` clamped to the window: the bars of the window in `from..to`
    /// are `place(to) − place(from)`.
    #[inline(always)]
    fn place(&self, t: usize) -> i64 {
        t.clamp(self.window.start, self.window.end.max(self.window.start)) as i64
    }

    /// The fills of bar `t` (the lanes whose next fill it is).
    #[inline(never)]
    fn fill(&mut self, t: usize) {
        // The lanes due, as bits: which lanes fill on a bar is random, so a
        // branch per lane mispredicts.
        let mut due = 0u32;
        for l in 0..W {
            due |= u32::from(self.lanes[l].next_fill == t) << l;
        }
        while due != 0 {
            let l = due.trailing_zeros() as usize;
            due &= due - 1;
            let lane = &mut self.lanes[l];
            let was_held = lane.account.position != 0;
            let a = &mut lane.account;
            a.fill(
                &mut self.targets[l],
                self.open,
                self.close,
                t,
                &mut lane.stats,
            );
            let held = a.position != 0;
            self.cash[l] = a.cash;
            self.units[l] = a.signed_units();
            lane.next_fill = a.next_fill(&mut self.targets[l], t);
            // Bars held in the window, as the sum of each closing bar's
            // place in it minus each opening bar's (no branch: which one a
            // fill is, is random too).
            let opened = i64::from(held) - i64::from(was_held);
            let place = self.place(t);
            self.lanes[l].exposed -= opened * place;
        }
        self.next_event = self
            .lanes
            .iter()
            .map(|l| l.next_fill)
            .min()
            .unwrap_or(usize::MAX);
    }

    /// Bars of the window held by lane `l`, up to bar `end`.
    fn exposed(&self, l: usize, end: usize) -> u64 {
        let lane = &self.lanes[l];
        let open = if lane.account.position != 0 {
            self.place(end)
        } else {
            0
        };
        (lane.exposed + open) as u64
    }}

/// Simulates each lane's targets (`changes`, covering at least the bars up
/// to `window.end`) up to the end of `window` with the vector code of
/// `level` (one this CPU runs) and returns each lane's accumulator of that
/// window, and a mask of the lanes whose result is not exact (score them
/// with the scalar engine).
pub(crate) fn simulate(
    bars: &Bars,
    changes: &[&Changes; LANES],
    cfg: &EngineConfig,
    window: &Window,
    downside: bool,
    level: Level,
) -> ([WindowStats; LANES], u8) {
    assert!(level <= Level::best(), "{level:?} on a CPU without it");
    #[cfg(target_arch = "x86_64")]
    match level {
        // SAFETY: the CPU has the features each function is compiled for.
        Level::Avx512 => return unsafe { simulate_avx512(bars, changes, cfg, window, downside) },
        Level::Avx2 => return unsafe { simulate_avx2(bars, changes, cfg, window, downside) },
        Level::Portable => {}
    }
    if downside {
        run::<Portable, LANES, true>(bars, changes, cfg, window)
    } else {
        run::<Portable, LANES, false>(bars, changes, cfg, window)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn simulate_avx512(
    bars: &Bars,
    changes: &[&Changes; LANES],
    cfg: &EngineConfig,
    window: &Window,
    downside: bool,
) -> ([WindowStats; LANES], u8) {
    if downside {
        run::<Avx512, LANES, true>(bars, changes, cfg, window)
    } else {
        run::<Avx512, LANES, false>(bars, changes, cfg, window)
    }
}

/// Eight lanes as two halves of four in one AVX register each (measured
/// faster than both halves in lockstep: no spilled accumulators, and a
/// half whose lanes are all flat skips to its next fill).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn simulate_avx2(
    bars: &Bars,
    changes: &[&Changes; LANES],
    cfg: &EngineConfig,
    window: &Window,
    downside: bool,
) -> ([WindowStats; LANES], u8) {
    const HALF: usize = LANES / 2;
    let half = |h: usize| -> ([WindowStats; HALF], u8) {
        let changes: [&Changes; HALF] = std::array::from_fn(|l| changes[h * HALF + l]);
        if downside {
            run::<Avx4, HALF, true>(bars, &changes, cfg, window)
        } else {
            run::<Avx4, HALF, false>(bars, &changes, cfg, window)
        }
    };
    let (low, low_inexact) = half(0);
    let (high, high_inexact) = half(1);
    let mut stats = low.into_iter().chain(high);
    let stats = std::array::from_fn(|_| stats.next().expect("two halves fill the lanes"));
    (stats, low_inexact | (high_inexact << HALF))
}

#[inline(always)]
fn run<V: Vector<W>, const W: usize, const DOWNSIDE: bool>(
    bars: &Bars,
    changes: &[&Changes; W],
    cfg: &EngineConfig,
    window: &Window,
) -> ([WindowStats; W], u8) {
    let end = window.end.min(bars.len());
    let start = window.start.min(end);
    let mut fills = Fills::new(changes, bars, cfg, window, end);
    // Before the window only the fills matter, up to the close before it
    // (its starting value).
    let mut start_equity = fills.cash;
    if start > 0 {
        while fills.next_event < start {
            fills.fill(fills.next_event);
        }
        let c = bars.close[start - 1];
        for l in 0..W {
            start_equity[l] = fills.cash[l] + fills.units[l] * c;
        }
    }
    let mut acc = Accumulators::new(start_equity);
    acc.window::<V, DOWNSIDE>(&bars.close[..end], start, end, &mut fills);
    const { assert!(W <= 8, "the inexact mask is a u8") };
    let mut inexact = 0u8;
    for l in 0..W {
        // Flat bars divide cash by itself and the drawdown shortcut needs a
        // positive peak: both hold while the equity stays positive and
        // finite. An equity at or below zero (or −∞) under a positive peak
        // is a drawdown of at least 1, which the pre-test never skips (so
        // `max ≥ 1` flags it, and the rare tiny positive equity whose
        // drawdown rounds to 1); +∞ shows in the peak, NaN in the sum.
        let finite = acc.peak[l].is_finite() && acc.sum[l].is_finite();
        if !(start_equity[l] > 0.0 && acc.max[l] < 1.0 && finite) {
            inexact |= 1 << l;
        }
    }
    let n = (end - start) as u64;
    let stats = std::array::from_fn(|l| {
        let mut stats = fills.lanes[l].stats.clone();
        let last = if n > 0 { acc.prev[l] } else { start_equity[l] };
        stats.set_accumulated(
            start_equity[l],
            last,
            ReturnMoments::from_sums(n, acc.sum[l], acc.sum_sq[l], acc.downside_sq[l]),
            Drawdown::from_parts(acc.peak[l], acc.max[l]),
            fills.exposed(l, end),
        );
        stats
    });
    (stats, inexact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::simulate as scalar;
    use crate::metrics::WindowKind;

    /// A short held through a gap that multiplies the price twelvefold
    /// goes below zero: that lane is flagged, the others are exact.
    #[test]
    fn a_lane_below_zero_is_flagged_and_the_others_are_exact() {
        let n = 60;
        let close: Vec<f64> = (0..n)
            .map(|i| {
                if i < 30 {
                    100.0 - i as f64
                } else {
                    900.0 + i as f64
                }
            })
            .collect();
        let bars = Bars {
            time: (0..n as i64).map(|i| i * 86_400_000).collect(),
            open: close.clone(),
            high: close.iter().map(|c| c + 1.0).collect(),
            low: close.iter().map(|c| c - 1.0).collect(),
            close,
            volume: None,
        };
        let short = vec![-1i8; n];
        let long: Vec<i8> = (0..n).map(|i| i8::from(i % 7 < 4)).collect();
        let flat = vec![0i8; n];
        let positions: [&[i8]; LANES] = std::array::from_fn(|l| match l {
            0 => short.as_slice(),
            1 => flat.as_slice(),
            _ => long.as_slice(),
        });
        let changes: [Changes; LANES] = std::array::from_fn(|l| {
            let mut c = Changes::default();
            c.set_from(positions[l]);
            c
        });
        let lanes: [&Changes; LANES] = std::array::from_fn(|l| &changes[l]);
        let cfg = EngineConfig::default();
        let window = Window {
            kind: WindowKind::Score,
            start: 10,
            end: n,
        };
        for level in Level::available() {
            let (stats, inexact) = simulate(&bars, &lanes, &cfg, &window, true, level);
            assert_eq!(inexact, 0b1, "{level:?}");
            for l in 1..LANES {
                let mut want = WindowStats::new(&window, cfg.initial_cash);
                scalar(&bars, positions[l], &cfg, n, &mut want);
                let (got, want) = (stats[l].finish(&bars, 252.0), want.finish(&bars, 252.0));
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "lane {l}");
            }
        }
    }
}
