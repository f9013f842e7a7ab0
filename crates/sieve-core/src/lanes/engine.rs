//! The engine and one window's accumulator for [`LANES`] combinations at
//! once.
//!
//! Fills are rare (tens of bars apart), so they stay scalar, and come first:
//! a fill depends only on the fills before it, so each lane's [`Account`]
//! runs through its fills alone, exactly as [`crate::engine::simulate`]
//! computes them, and records the cash and units after each. Between fills
//! every lane's
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
//! * the drawdown `1 − equity / peak` is computed once per drawdown episode
//!   (the bars between two new highs, whose peak is one value), at its
//!   lowest equity, when the episode ends, and only where a conservative
//!   test (one multiplication) says it may exceed the maximum so far: the
//!   maximum comes out the same (the argument is next to
//!   [`Accumulators::window`]);
//! * where every lane is flat after a fill, the bars up to the next fill are
//!   skipped (each would repeat the one before exactly).
//!
//! All three need a positive, finite equity: a lane whose equity is not positive
//! and finite on every bar of the window (its starting value included) is
//! reported as inexact, and the caller scores it with the scalar engine.

// Lanes and bars are indexed by number here: several arrays share the index,
// and the iterator form of the bar loop compiled to slower code (its
// counters lived in memory).
#![allow(clippy::needless_range_loop)]

use crate::data::Bars;
use crate::engine::{self as scalar_engine, Account, EngineConfig};
use crate::metrics::{Drawdown, ReturnMoments, Window, WindowStats};
use crate::strategy::Changes;

#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx4, Avx512};
use crate::simd::{Level, Portable, Vector, LANES};

/// Slack of the drawdown pre-test: generous next to rounding (2⁻⁵³), so a
/// skipped episode provably cannot beat the maximum.
const SLACK: f64 = 1e-9;

/// The running state of every lane's window metrics.
#[derive(Clone, Copy)]
struct Accumulators<const W: usize> {
    /// The equity at the close before the window.
    start: [f64; W],
    prev: [f64; W],
    sum: [f64; W],
    sum_sq: [f64; W],
    downside_sq: [f64; W],
    peak: [f64; W],
    /// The lowest equity since the peak was set (the peak itself at first):
    /// the deepest point of the drawdown in progress.
    low: [f64; W],
    /// `(1 − max) · (1 + SLACK)` once `max > 0`, 1 before: an equity at or
    /// above `peak · factor` cannot set a new maximum drawdown.
    factor: [f64; W],
    max: [f64; W],
    /// The return sums of the inner window's bars (the score window inside
    /// a wider screen window: its Sharpe for the Deflated Sharpe).
    inner_sum: [f64; W],
    inner_sum_sq: [f64; W],
}

impl<const W: usize> Accumulators<W> {
    fn new(start: [f64; W]) -> Self {
        Accumulators {
            start,
            prev: start,
            sum: [0.0; W],
            sum_sq: [0.0; W],
            downside_sq: [0.0; W],
            peak: start,
            low: start,
            factor: [1.0; W],
            max: [0.0; W],
            inner_sum: [0.0; W],
            inner_sum_sq: [0.0; W],
        }
    }

    /// Bars `start..end` of the window: fills where `fills` has them, the
    /// metrics of every bar (and, with `INNER`, the inner window's sums).
    /// The accumulators stay in registers; a fill only reloads the lanes'
    /// cash and units.
    #[inline(always)]
    fn window<V: Vector<W>, const DOWNSIDE: bool, const INNER: bool>(
        &mut self,
        close: &[f64],
        start: usize,
        end: usize,
        fills: &mut Marks<'_, W>,
    ) {
        let (zero, one, slack) = (V::splat(0.0), V::splat(1.0), V::splat(1.0 + SLACK));
        let mut cash = V::load(&fills.cash);
        let mut units = V::load(&fills.units);
        let mut prev = V::load(&self.prev);
        let mut sum = V::load(&self.sum);
        let mut sum_sq = V::load(&self.sum_sq);
        let mut downside_sq = V::load(&self.downside_sq);
        let mut peak = V::load(&self.peak);
        let mut low = V::load(&self.low);
        let mut factor = V::load(&self.factor);
        let mut max = V::load(&self.max);
        let mut inner_sum = V::load(&self.inner_sum);
        let mut inner_sum_sq = V::load(&self.inner_sum_sq);
        let close = &close[..end];
        // The drawdown of the episode that ends (its peak, its low), where
        // `ends` says and it may set a new maximum: the scalar drawdown's
        // `1 − equity / peak` at the episode's lowest equity.
        macro_rules! close_episode {
            ($ends:expr) => {{
                let deep = V::and($ends, low.lt(peak.mul(factor)));
                if V::any(deep) {
                    let dd = one.sub(low.div(peak));
                    let more = V::and(deep, dd.gt(max));
                    max = V::select(more, dd, max);
                    factor = V::select(more, one.sub(dd).mul(slack), factor);
                }
            }};
        }
        // One bar's equity, return and drawdown, every lane at once (a
        // macro: a closure would not inherit the caller's target features,
        // and its vector calls would not inline).
        macro_rules! bar {
            ($t:expr) => {{
                let t: usize = $t;
                let e = cash.add(units.mul(V::splat(close[t])));
                let r = e.div(prev).sub(one);
                sum = sum.add(r);
                sum_sq = sum_sq.add(r.mul(r));
                if INNER {
                    inner_sum = inner_sum.add(r);
                    inner_sum_sq = inner_sum_sq.add(r.mul(r));
                }
                if DOWNSIDE {
                    let d = V::select(r.lt(zero), r, zero);
                    downside_sq = downside_sq.add(d.mul(d));
                }
                prev = e;
                // A new high ends a drawdown episode: only then is its low
                // final (and a division due, where it may set a new
                // maximum), not at every new low on the way down.
                let high = e.gt(peak);
                close_episode!(high);
                peak = V::select(high, e, peak);
                low = V::select(high, e, low.min(e));
            }};
        }
        let mut t = start;
        while t < end {
            if t == fills.next_event {
                fills.advance(t);
                cash = V::load(&fills.cash);
                units = V::load(&fills.units);
            }
            // Up to the next fill the lanes' cash and units hold: a plain
            // counted loop (the bar counter waits on nothing).
            let stop = fills.next_event.min(end);
            if fills.all_flat() {
                // Every lane flat since this bar: until the next fill each
                // bar repeats it exactly (equity `cash`, return `cash / cash
                // − 1` = +0 adds nothing, no new peak, and its low
                // already recorded) — skip to that fill.
                bar!(t);
                t = stop;
                continue;
            }
            while t < stop {
                bar!(t);
                t += 1;
            }
        }
        // Every lane's episode in progress, as if the window ended here (a
        // later call continues it: a deeper low only deepens it).
        let every_lane = zero.lt(one);
        close_episode!(every_lane);
        prev.store(&mut self.prev);
        sum.store(&mut self.sum);
        sum_sq.store(&mut self.sum_sq);
        downside_sq.store(&mut self.downside_sq);
        peak.store(&mut self.peak);
        low.store(&mut self.low);
        factor.store(&mut self.factor);
        max.store(&mut self.max);
        inner_sum.store(&mut self.inner_sum);
        inner_sum_sq.store(&mut self.inner_sum_sq);
    }
}

// Why the maximum drawdown comes out as the scalar one's. Within an
// episode the peak is one value P, and `fl(1 − fl(e / P))` does not
// decrease as `e` does (rounding is monotonic), so the episode's largest
// drawdown is the one at its lowest equity; a bar that sets a new high has
// drawdown 0. And skipping an episode whose low is at or above
// `P · factor` (both rounded) cannot change the maximum: then `x = low / P
// ≥ (1 − max)(1 + SLACK)(1 − 2⁻⁵³)³`, so `1 − fl(x) < max` and `fl(1 −
// fl(x)) ≤ max`, for `0 < max < 1` (`fl(1 − max)` is within 2⁻⁵³ of
// `1 − max`); at `max = 0` the factor is 1 and a low at or above the peak
// gives 0; at `max = 1` any positive equity gives at most 1.

/// A lane's fill: its bar, and the cash and signed units after it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fill {
    bar: usize,
    cash: f64,
    units: f64,
}

/// Each lane's fills, reused from batch to batch.
#[derive(Debug, Default)]
pub(crate) struct FillPlans([Vec<Fill>; LANES]);

/// What a lane's fills are simulated against: the bars and the engine,
/// up to bar `end`, and the window whose bars held are counted.
struct Planner<'a> {
    bars: &'a Bars,
    cfg: &'a EngineConfig,
    window: &'a Window,
    end: usize,
}

impl Planner<'_> {
    /// Simulates the fills of one lane's targets over bars `..end` (a
    /// fill depends only on the fills before it, not on the bars between
    /// them), its trades into `stats`, and returns the bars of the window
    /// held.
    ///
    /// One lane at a time, with no bar loop around the fills (measured: in
    /// the bar loop, as before, a fill cost ~60 cycles; lanes in turn, a
    /// fill each, were 0.82× this, two lanes side by side 0.90×: alone, a
    /// lane's branches of opening and closing alternate and predict well).
    fn plan(&self, changes: &Changes, fills: &mut Vec<Fill>) -> (WindowStats, u64) {
        let mut stats = self.stats();
        if let Some(exposed) = self.by_changes(changes, fills, &mut stats) {
            return (stats, exposed);
        }
        // A fill was skipped (no cash, or less than a lot): the account
        // then tries again on every bar, as the general loop does.
        let mut stats = self.stats();
        let exposed = self.by_bars(changes, fills, &mut stats);
        (stats, exposed)
    }

    /// The window's accumulator before any bar.
    fn stats(&self) -> WindowStats {
        WindowStats::new(self.window, self.cfg.initial_cash)
    }

    /// The bars of the window in `from..to` are `place(to) − place(from)`.
    fn place(&self, t: usize) -> i64 {
        let window = self.window;
        t.clamp(window.start, window.end.max(window.start)) as i64
    }

    /// [`Planner::plan`] read straight off the changes: each change whose
    /// fill bar (its own with close fills, the next with next-open ones) is
    /// before `end` is one fill — the first entry too where it is not flat
    /// — and bar 0 gets a record of its own where nothing fills there, as
    /// the general loop gives it. This holds as long as every fill reaches
    /// its target; `None` (and `stats` spoilt) where one does not.
    ///
    /// The general loop ([`Planner::by_bars`]) finds the same bars through
    /// the engine's cursor, which took half the fill pass's instructions
    /// (measured: the `activation` screen 1.12× faster read this way).
    fn by_changes(
        &self,
        changes: &Changes,
        fills: &mut Vec<Fill>,
        stats: &mut WindowStats,
    ) -> Option<u64> {
        let end = self.end;
        let (delay, prices) = match self.cfg.fill {
            scalar_engine::Fill::NextOpen => (1, &self.bars.open[..end]),
            scalar_engine::Fill::Close => (0, &self.bars.close[..end]),
        };
        let mut account = Account::new(self.cfg);
        let mut exposed = 0i64;
        fills.clear();
        if end > 0 {
            // The general loop's first bar, where nothing may fill.
            fills.push(Fill {
                bar: 0,
                cash: account.cash,
                units: 0.0,
            });
        }
        for (bar, target) in changes.entries() {
            let t = bar + delay;
            if t >= end {
                break;
            }
            if target == account.position() {
                // The first entry, flat.
                continue;
            }
            let was_held = account.position() != 0;
            account.rebalance(target, prices[t], t, stats);
            if account.position() != target {
                return None;
            }
            if t == 0 {
                // A fill on bar 0 is that bar's record.
                fills.pop();
            }
            self.record(&account, was_held, t, &mut exposed, fills);
        }
        Some(self.finish(&account, exposed, fills))
    }

    /// [`Planner::plan`] bar by bar through the engine's own loop.
    fn by_bars(&self, changes: &Changes, fills: &mut Vec<Fill>, stats: &mut WindowStats) -> u64 {
        let end = self.end;
        let (open, close) = (&self.bars.open[..end], &self.bars.close[..end]);
        let mut account = Account::new(self.cfg);
        let mut targets = changes.cursor();
        // Bars held up to the last fill, less the place of the bar the
        // current position opened on.
        let mut exposed = 0i64;
        fills.clear();
        let mut t = 0;
        while t < end {
            let was_held = account.position() != 0;
            account.fill(&mut targets, open, close, t, stats);
            self.record(&account, was_held, t, &mut exposed, fills);
            t = account.next_fill(&mut targets, t);
        }
        self.finish(&account, exposed, fills)
    }

    /// Records the account after a fill on bar `t` (the bars held count
    /// from where a position opens to where it closes).
    fn record(
        &self,
        account: &Account<'_>,
        was_held: bool,
        t: usize,
        exposed: &mut i64,
        fills: &mut Vec<Fill>,
    ) {
        let opened = i64::from(account.position() != 0) - i64::from(was_held);
        *exposed -= opened * self.place(t);
        fills.push(Fill {
            bar: t,
            cash: account.cash,
            units: account.signed_units(),
        });
    }

    /// Ends a plan: the bars held to the end, and a last fill that is never
    /// reached (so that reading needs no length check).
    fn finish(&self, account: &Account<'_>, mut exposed: i64, fills: &mut Vec<Fill>) -> u64 {
        if account.position() != 0 {
            exposed += self.place(self.end);
        }
        fills.push(Fill {
            bar: usize::MAX,
            cash: account.cash,
            units: account.signed_units(),
        });
        exposed as u64
    }
}

/// Reads the lanes' fills bar by bar: the cash and signed units each lane
/// marks its equity with.
struct Marks<'a, const W: usize> {
    fills: [&'a [Fill]; W],
    /// Each lane's next fill.
    next: [usize; W],
    cash: [f64; W],
    units: [f64; W],
    /// The first bar on which some lane fills.
    next_event: usize,
}

impl<'a, const W: usize> Marks<'a, W> {
    fn new(fills: [&'a [Fill]; W], initial_cash: f64) -> Self {
        let mut marks = Marks {
            fills,
            next: [0; W],
            cash: [initial_cash; W],
            units: [0.0; W],
            next_event: 0,
        };
        marks.next_event = marks.first_bar();
        marks
    }

    fn first_bar(&self) -> usize {
        (0..W)
            .map(|l| self.fills[l][self.next[l]].bar)
            .min()
            .unwrap_or(usize::MAX)
    }

    /// Whether no lane holds a position.
    fn all_flat(&self) -> bool {
        self.units.iter().all(|&u| u == 0.0)
    }

    /// The fills of bar `t` (the lanes whose next fill it is).
    #[inline(always)]
    fn advance(&mut self, t: usize) {
        for l in 0..W {
            // Which lanes fill on a bar is random: no branch per lane.
            let fill = self.fills[l][self.next[l]];
            let due = fill.bar == t;
            self.cash[l] = if due { fill.cash } else { self.cash[l] };
            self.units[l] = if due { fill.units } else { self.units[l] };
            self.next[l] += usize::from(due);
        }
        self.next_event = self.first_bar();
    }
}

/// What [`simulate`] gives: each lane's accumulator of the window, the
/// per-period Sharpe of the inner window (NaN without one), and a mask of
/// the lanes whose result is not exact (score them with the scalar engine).
pub(crate) struct Simulated {
    pub stats: [WindowStats; LANES],
    pub inner_sharpe: [f64; LANES],
    pub inexact: u8,
}

/// Simulates each lane's targets (`changes`, covering at least the bars up
/// to `window.end`) up to the end of `window` with the vector code of
/// `level` (one this CPU runs), accumulating `window`'s metrics and, in the
/// same pass, the Sharpe of `inner` (a window within `window`: the score
/// window of a screen over the full window).
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate(
    bars: &Bars,
    changes: &[&Changes; LANES],
    cfg: &EngineConfig,
    window: &Window,
    inner: Option<&Window>,
    downside: bool,
    level: Level,
    plans: &mut FillPlans,
) -> Simulated {
    assert!(level <= Level::best(), "{level:?} on a CPU without it");
    let end = window.end.min(bars.len());
    let start = window.start.min(end);
    let mut stats: [WindowStats; LANES] =
        std::array::from_fn(|_| WindowStats::new(window, cfg.initial_cash));
    let mut exposed = [0; LANES];
    let planner = Planner {
        bars,
        cfg,
        window,
        end,
    };
    for l in 0..LANES {
        // Unused lanes repeat the first one's targets (the screen hands
        // the engine distinct targets otherwise): their fills are the
        // same, simulated once.
        if let Some(j) = (0..l).find(|&j| std::ptr::eq(changes[j], changes[l])) {
            let (done, rest) = plans.0.split_at_mut(l);
            rest[0].clone_from(&done[j]);
            stats[l] = stats[j].clone();
            exposed[l] = exposed[j];
            continue;
        }
        (stats[l], exposed[l]) = planner.plan(changes[l], &mut plans.0[l]);
    }
    let fills: [&[Fill]; LANES] = std::array::from_fn(|l| plans.0[l].as_slice());
    let (close, cash) = (&bars.close[..end], cfg.initial_cash);
    let inner_bars = match inner {
        Some(w) => {
            assert!(start <= w.start && w.start <= w.end && w.end <= end);
            w.start..w.end
        }
        None => end..end,
    };
    let span = Span {
        start,
        inner: inner_bars.clone(),
        downside,
    };
    let acc = match level {
        // SAFETY: the CPU has the features each function is compiled for.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { accumulate_avx512(close, &span, fills, cash) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { accumulate_avx2(close, &span, fills, cash) },
        _ => accumulate::<Portable, LANES>(close, &span, fills, cash),
    };
    const { assert!(LANES <= 8, "the inexact mask is a u8") };
    let mut inexact = 0u8;
    for l in 0..LANES {
        // Flat bars divide cash by itself and the drawdown shortcut needs a
        // positive peak: both hold while the equity stays positive and
        // finite. An equity at or below zero (or −∞) under a positive peak
        // stays its episode's low until the episode closes (only a NaN
        // could replace it, and that shows in the sum), and is a drawdown
        // of at least 1, which the pre-test never skips (so `max ≥ 1` flags
        // it, and the rare tiny positive equity whose drawdown rounds to
        // 1); +∞ shows in the peak, NaN in the sum.
        let finite = acc.peak[l].is_finite() && acc.sum[l].is_finite();
        if !(acc.start[l] > 0.0 && acc.max[l] < 1.0 && finite) {
            inexact |= 1 << l;
        }
    }
    let n = (end - start) as u64;
    for (l, stats) in stats.iter_mut().enumerate() {
        let last = if n > 0 { acc.prev[l] } else { acc.start[l] };
        stats.set_accumulated(
            acc.start[l],
            last,
            ReturnMoments::from_sums(n, acc.sum[l], acc.sum_sq[l], acc.downside_sq[l]),
            Drawdown::from_parts(acc.peak[l], acc.max[l]),
            exposed[l],
        );
    }
    let n_inner = inner_bars.len() as u64;
    let inner_sharpe = std::array::from_fn(|l| match inner {
        Some(_) => ReturnMoments::from_sums(n_inner, acc.inner_sum[l], acc.inner_sum_sq[l], 0.0)
            .sharpe(1.0),
        None => f64::NAN,
    });
    Simulated {
        stats,
        inner_sharpe,
        inexact,
    }
}

/// The bars [`accumulate`] reads: from `start` (to the end of the close
/// it is given), the inner window's within them, and whether the downside
/// sum is needed (the Sortino ratio).
struct Span {
    start: usize,
    inner: std::ops::Range<usize>,
    downside: bool,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn accumulate_avx512(
    close: &[f64],
    span: &Span,
    fills: [&[Fill]; LANES],
    cash: f64,
) -> Accumulators<LANES> {
    accumulate::<Avx512, LANES>(close, span, fills, cash)
}

/// Eight lanes as two halves of four in one AVX register each (measured
/// faster than both halves in lockstep: no spilled accumulators, and a
/// half whose lanes are all flat skips to its next fill).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn accumulate_avx2(
    close: &[f64],
    span: &Span,
    fills: [&[Fill]; LANES],
    cash: f64,
) -> Accumulators<LANES> {
    const HALF: usize = LANES / 2;
    let half = |h: usize| {
        let fills: [&[Fill]; HALF] = std::array::from_fn(|l| fills[h * HALF + l]);
        accumulate::<Avx4, HALF>(close, span, fills, cash)
    };
    let (low, high) = (half(0), half(1));
    let join = |a: [f64; HALF], b: [f64; HALF]| -> [f64; LANES] {
        std::array::from_fn(|l| if l < HALF { a[l] } else { b[l - HALF] })
    };
    Accumulators {
        start: join(low.start, high.start),
        prev: join(low.prev, high.prev),
        sum: join(low.sum, high.sum),
        sum_sq: join(low.sum_sq, high.sum_sq),
        downside_sq: join(low.downside_sq, high.downside_sq),
        peak: join(low.peak, high.peak),
        low: join(low.low, high.low),
        factor: join(low.factor, high.factor),
        max: join(low.max, high.max),
        inner_sum: join(low.inner_sum, high.inner_sum),
        inner_sum_sq: join(low.inner_sum_sq, high.inner_sum_sq),
    }
}

/// The window metrics of `W` lanes whose fills are `fills`, over the bars
/// of `close` from `span.start`, with the inner window's sums.
#[inline(always)]
fn accumulate<V: Vector<W>, const W: usize>(
    close: &[f64],
    span: &Span,
    fills: [&[Fill]; W],
    cash: f64,
) -> Accumulators<W> {
    let (start, end) = (span.start, close.len());
    let mut marks = Marks::new(fills, cash);
    // Before the window only the fills matter, up to the close before it
    // (its starting value).
    let mut start_equity = marks.cash;
    if start > 0 {
        while marks.next_event < start {
            marks.advance(marks.next_event);
        }
        let c = close[start - 1];
        for l in 0..W {
            start_equity[l] = marks.cash[l] + marks.units[l] * c;
        }
    }
    let mut acc = Accumulators::new(start_equity);
    // Before, in and after the inner window; a later call continues where
    // the one before stopped (its drawdown episode included).
    let inner = &span.inner;
    let pieces = [
        (start, inner.start, false),
        (inner.start, inner.end, true),
        (inner.end, end, false),
    ];
    for (from, to, inside) in pieces {
        if from >= to {
            continue;
        }
        match (span.downside, inside) {
            (true, true) => acc.window::<V, true, true>(close, from, to, &mut marks),
            (true, false) => acc.window::<V, true, false>(close, from, to, &mut marks),
            (false, true) => acc.window::<V, false, true>(close, from, to, &mut marks),
            (false, false) => acc.window::<V, false, false>(close, from, to, &mut marks),
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::simulate as scalar;
    use crate::metrics::WindowKind;

    /// The fills read off the changes are the general loop's: the same
    /// fills, trades and bars held, for both fill modes, every end, a
    /// change on the last bar, and lots that cannot be afforded from some
    /// fill on (the general loop takes over: its retries on every bar).
    #[test]
    fn fills_read_off_the_changes_are_the_general_loops() {
        use crate::engine::Fill as FillAt;
        let n = 300;
        let bars = crate::data::synth(n, 7);
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        let (mut fallbacks, mut cases) = (0, 0);
        for case in 0..400 {
            // Targets that move every few bars (sometimes on bar 0 and on
            // the last bar), long only or both sides.
            let every = 1 + next(12);
            let sides = if case % 2 == 0 { 2 } else { 3 };
            let mut positions = vec![0i8; n];
            let mut p = 0i8;
            for (t, slot) in positions.iter_mut().enumerate() {
                if t == 0 || t == n - 1 || next(every) == 0 {
                    p = next(sides) as i8 - i8::from(sides == 3);
                }
                *slot = p;
            }
            let mut changes = Changes::default();
            changes.set_from(&positions);
            let cfg = EngineConfig {
                fill: if case % 4 < 2 {
                    FillAt::NextOpen
                } else {
                    FillAt::Close
                },
                fee: [0.0, 0.001, 0.01][next(3) as usize],
                lot_size: [0.0, 1.0, 90.0, 150.0][next(4) as usize],
                ..EngineConfig::default()
            };
            let end = [0, 1, n - 1, n, 1 + next(n as u64 - 1) as usize][next(5) as usize];
            let window = Window {
                kind: WindowKind::Score,
                start: next(n as u64) as usize,
                end,
            };
            let planner = Planner {
                bars: &bars,
                cfg: &cfg,
                window: &window,
                end,
            };
            let mut want = (Vec::new(), planner.stats());
            let want_held = planner.by_bars(&changes, &mut want.0, &mut want.1);
            let mut got_fills = Vec::new();
            let (got_stats, got_held) = planner.plan(&changes, &mut got_fills);
            let got = (got_fills, got_stats);
            let mut quick = (Vec::new(), planner.stats());
            let read = planner.by_changes(&changes, &mut quick.0, &mut quick.1);
            fallbacks += usize::from(read.is_none());
            cases += 1;
            let as_bits = |f: &[Fill]| -> Vec<(usize, u64, u64)> {
                f.iter()
                    .map(|f| (f.bar, f.cash.to_bits(), f.units.to_bits()))
                    .collect()
            };
            assert_eq!(got_held, want_held, "case {case}");
            assert_eq!(as_bits(&got.0), as_bits(&want.0), "case {case}");
            assert_eq!(
                format!("{:?}", got.1),
                format!("{:?}", want.1),
                "case {case}"
            );
        }
        // Both paths ran.
        assert!(
            fallbacks > 10 && fallbacks < cases - 100,
            "{fallbacks} of {cases}"
        );
    }

    /// A short held through a gap that multiplies the price twelvefold
    /// goes below zero: that lane is flagged, the others are exact (lanes
    /// 2.. are the same targets: their fills are simulated once, copied).
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
        let bars = daily_bars(close);
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
        // Lanes 2.. share one `Changes`, as unused lanes do.
        let lanes: [&Changes; LANES] = std::array::from_fn(|l| &changes[l.min(2)]);
        let cfg = EngineConfig::default();
        let window = Window {
            kind: WindowKind::Score,
            start: 10,
            end: n,
        };
        for level in Level::available() {
            let mut plans = FillPlans::default();
            let Simulated { stats, inexact, .. } =
                simulate(&bars, &lanes, &cfg, &window, None, true, level, &mut plans);
            assert_eq!(inexact, 0b1, "{level:?}");
            for l in 1..LANES {
                let mut want = WindowStats::new(&window, cfg.initial_cash);
                scalar(&bars, positions[l], &cfg, n, &mut want);
                let (got, want) = (stats[l].finish(&bars, 252.0), want.finish(&bars, 252.0));
                assert_eq!(format!("{got:?}"), format!("{want:?}"), "lane {l}");
            }
        }
    }

    /// Daily bars that open at `close` and range a point around it.
    fn daily_bars(close: Vec<f64>) -> Bars {
        Bars {
            time: (0..close.len() as i64).map(|i| i * 86_400_000).collect(),
            open: close.clone(),
            high: close.iter().map(|c| c + 1.0).collect(),
            low: close.iter().map(|c| c - 1.0).collect(),
            close,
            volume: None,
            timezone: None,
            extra: Vec::new(),
            unread: Vec::new(),
            detail: None,
            frames: None,
        }
    }

    /// The drawdown taken once per episode is the scalar engine's, bit for
    /// bit, on paths made for it: the deepest episode first or last, a
    /// window that ends inside an episode, equal lows, and an episode open
    /// while a whole half of lanes is flat (skipped). Two lanes are also
    /// checked against drawdowns worked out by hand.
    #[test]
    fn drawdowns_by_episode_are_the_scalar_ones() {
        // 100 for 10 bars; down to 80 (bar 20), 81, 80 again (bar 22); up
        // to 120 (bar 40); down to 108 (bar 45); up to 130 (bar 59); down
        // to 91 (bar 79, the last).
        let close: Vec<f64> = (0..80)
            .map(|i| match i {
                0..=10 => 100.0,
                11..=20 => 100.0 - 2.0 * f64::from(i - 10),
                21 => 81.0,
                22 => 80.0,
                23..=40 => 80.0 + 40.0 * f64::from(i - 22) / 18.0,
                41..=45 => 120.0 - 2.4 * f64::from(i - 40),
                46..=59 => 108.0 + 22.0 * f64::from(i - 45) / 14.0,
                _ => 130.0 - 39.0 * f64::from(i - 59) / 20.0,
            })
            .collect();
        let n = close.len();
        let bars = daily_bars(close);
        // Long on bars `from..to` (the fill is at the next open).
        let long = |from: usize, to: usize| -> Vec<i8> {
            (0..n).map(|i| i8::from(from <= i && i < to)).collect()
        };
        let positions: [Vec<i8>; LANES] = [
            // Half one: all four flat on bars 16..30, inside the first
            // episode of the ones that held before.
            long(0, 15),
            long(0, 14),
            long(2, 15),
            long(0, 15)
                .iter()
                .zip(long(30, 80))
                .map(|(a, b)| a + b)
                .collect(),
            // Half two: the first episode deepest (it ends at bar 55), the
            // last deepest and unfinished (from bar 25), held throughout,
            // short then long.
            long(0, 55),
            long(25, 80),
            long(0, 80),
            (0..n).map(|i| if i < 30 { -1 } else { 1 }).collect(),
        ];
        let changes: [Changes; LANES] = std::array::from_fn(|l| {
            let mut c = Changes::default();
            c.set_from(&positions[l]);
            c
        });
        let lanes: [&Changes; LANES] = std::array::from_fn(|l| &changes[l]);
        let cfg = EngineConfig::default();
        for (start, end) in [(5, n), (5, 70), (0, 50), (12, 21)] {
            let window = Window {
                kind: WindowKind::Score,
                start,
                end,
            };
            // The score window inside the screen window: none, all of it,
            // a stretch in the middle (across drawdown episodes), its tail.
            let inners = [
                None,
                Some((start, end)),
                Some((start + 3, end - 2)),
                Some((end - 4, end)),
            ];
            for (level, downside, inner) in Level::available()
                .into_iter()
                .flat_map(|level| [false, true].map(|d| (level, d)))
                .flat_map(|(level, d)| inners.map(|i| (level, d, i)))
            {
                {
                    let inner = inner.map(|(start, end)| Window {
                        kind: WindowKind::Score,
                        start,
                        end,
                    });
                    let mut plans = FillPlans::default();
                    let Simulated {
                        stats,
                        inexact,
                        inner_sharpe,
                    } = simulate(
                        &bars,
                        &lanes,
                        &cfg,
                        &window,
                        inner.as_ref(),
                        downside,
                        level,
                        &mut plans,
                    );
                    assert_eq!(inexact, 0, "{level:?}");
                    for l in 0..LANES {
                        // The inner window's Sharpe is the scalar one's.
                        let sharpe = inner.map_or(f64::NAN, |w| {
                            let mut s = WindowStats::new(&w, cfg.initial_cash);
                            scalar(&bars, &positions[l], &cfg, w.end, &mut s);
                            s.per_period_sharpe()
                        });
                        assert_eq!(
                            inner_sharpe[l].to_bits(),
                            sharpe.to_bits(),
                            "{level:?}, lane {l}, inner {inner:?}"
                        );
                        let mut want = WindowStats::new(&window, cfg.initial_cash);
                        scalar(&bars, &positions[l], &cfg, end, &mut want);
                        let got = stats[l].finish(&bars, 252.0);
                        let want = want.finish(&bars, 252.0);
                        let label = format!("{level:?}, lane {l}, window {start}..{end}");
                        assert_eq!(
                            got.max_drawdown.to_bits(),
                            want.max_drawdown.to_bits(),
                            "{label}"
                        );
                        // Without the downside sums Sortino is left out.
                        if downside {
                            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{label}");
                        }
                        // By hand, over the whole window: 100 → 80 for the
                        // lane that left at bar 55, 130 → 91 for the one
                        // that came in at bar 25.
                        if (start, end) == (5, n) && l == 4 {
                            assert!((got.max_drawdown - 0.2).abs() < 1e-12, "{label}");
                        }
                        if (start, end) == (5, n) && l == 5 {
                            assert!((got.max_drawdown - 0.3).abs() < 1e-12, "{label}");
                        }
                    }
                }
            }
        }
    }
}
