//! The screen, [`LANES`] combinations at a time.
//!
//! [`Evaluator::screen_lanes`] gives exactly what [`Evaluator::screen`] gives
//! for each parameter set — bit for bit — with the engine and the window
//! metrics of all lanes in one pass over the bars (see [`engine`]). Where a
//! lane cannot be exact, or the screen needs something the lanes do not
//! compute (a screen window other than the score window), that parameter set
//! goes through the scalar path instead.

mod engine;

/// Combinations screened together, and the vector code that runs them.
pub use crate::simd::{Level, LANES};

use crate::evaluate::{Evaluator, ScreenScore};
use crate::metrics::{Aggregation, Objective};
use crate::strategy::{Changes, LaneBuffers};

/// Scratch space of one worker: each lane's positions.
pub struct LaneScratch {
    level: Level,
    /// Lanes for every strategy, not only where they pay.
    always: bool,
    /// Each lane's targets.
    changes: [Changes; LANES],
    /// What finding the changes reuses (`positions` also serves the
    /// scalar path).
    buffers: LaneBuffers,
    /// Each lane's fills.
    plans: engine::FillPlans,
    /// Per lane, the objective on each instrument (several instruments).
    objectives: [Vec<f64>; LANES],
}

impl Default for LaneScratch {
    fn default() -> Self {
        LaneScratch {
            level: Level::best(),
            always: false,
            changes: Default::default(),
            buffers: LaneBuffers::default(),
            plans: engine::FillPlans::default(),
            objectives: Default::default(),
        }
    }
}

impl LaneScratch {
    /// Scratch space that screens every strategy in lanes (tests and
    /// benchmarks) with the vector code of `level`, which must be one of
    /// [`Level::available`].
    pub fn always(level: Level) -> Self {
        assert!(level <= Level::best(), "{level:?} on a CPU without it");
        LaneScratch {
            level,
            always: true,
            ..LaneScratch::default()
        }
    }
}

impl Evaluator<'_> {
    /// Screens up to [`LANES`] parameter sets; `out[i]` is exactly
    /// [`Evaluator::screen`] of `params[i]`.
    pub fn screen_lanes(
        &self,
        params: &[&[f64]],
        scratch: &mut LaneScratch,
        out: &mut [ScreenScore],
    ) {
        assert!(params.len() <= LANES && out.len() >= params.len());
        let window = &self.scoring.screen;
        if params.is_empty() {
            return;
        }
        // Measured on an AVX2 CPU: the portable lane code (SSE2 there) ran
        // sma_cross at half the scalar speed; the AVX2 code runs it at 2×.
        let pays =
            scratch.always || (self.strategy.lanes_pay(params) && scratch.level > Level::Portable);
        if window != &self.scoring.windows.score || !pays {
            // The lanes accumulate one window; this screen reads two. Or
            // the strategy is faster one combination at a time.
            for (p, o) in params.iter().zip(out.iter_mut()) {
                *o = self.screen(p, &mut scratch.buffers.positions);
            }
            return;
        }
        self.strategy.lane_changes(
            self.bars,
            self.indicators,
            params,
            self.scoring.direction,
            window.end,
            scratch.level,
            &mut scratch.buffers,
            &mut scratch.changes,
        );
        // Unused lanes repeat the first one; their results are dropped.
        let lanes: [&Changes; LANES] =
            std::array::from_fn(|l| &scratch.changes[if l < params.len() { l } else { 0 }]);
        let downside = self.scoring.objective == Objective::Sortino;
        let (stats, inexact) = engine::simulate(
            self.bars,
            &lanes,
            &self.scoring.engine,
            window,
            downside,
            scratch.level,
            &mut scratch.plans,
        );
        for (l, (p, o)) in params.iter().zip(out.iter_mut()).enumerate() {
            *o = if inexact & (1 << l) != 0 {
                self.screen(p, &mut scratch.buffers.positions)
            } else {
                let m = stats[l].finish(self.bars, self.scoring.periods_per_year);
                ScreenScore {
                    objective: self.objective(&m),
                    trades: m.trades,
                    sharpe: stats[l].per_period_sharpe(),
                }
            };
        }
    }
}

/// [`crate::evaluate::screen_all`] for up to [`LANES`] parameter sets:
/// `out[i]` is exactly its result for `params[i]`.
pub fn screen_all_lanes(
    evals: &[Evaluator<'_>],
    aggregation: &Aggregation,
    params: &[&[f64]],
    scratch: &mut LaneScratch,
    out: &mut [ScreenScore],
) {
    if let [eval] = evals {
        return eval.screen_lanes(params, scratch, out);
    }
    let n = params.len();
    for objectives in &mut scratch.objectives[..n] {
        objectives.clear();
    }
    let mut sums = [(0u64, 0.0f64); LANES];
    let mut one = [ScreenScore::default(); LANES];
    for eval in evals {
        eval.screen_lanes(params, scratch, &mut one[..n]);
        for (l, s) in one[..n].iter().enumerate() {
            scratch.objectives[l].push(s.objective);
            sums[l].0 += s.trades;
            sums[l].1 += s.sharpe;
        }
    }
    for (l, o) in out[..n].iter_mut().enumerate() {
        *o = ScreenScore {
            objective: aggregation.of(&scratch.objectives[l]),
            trades: sums[l].0,
            sharpe: sums[l].1 / evals.len() as f64,
        };
    }
}
