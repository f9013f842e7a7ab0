//! The screen, [`LANES`] combinations at a time.
//!
//! [`Evaluator::screen_lanes`] gives exactly what [`Evaluator::screen`] gives
//! for each parameter set — bit for bit — with the engine and the window
//! metrics of all lanes in one pass over the bars (see [`engine`]). Where a
//! lane cannot be exact, or the screen needs something the lanes do not
//! compute (a screen window other than the score window), that parameter set
//! goes through the scalar path instead.

mod engine;
mod simd;

/// Combinations per lane group: 8 f64 fill one AVX-512 register.
pub const LANES: usize = 8;

use crate::evaluate::{Evaluator, ScreenScore};
use crate::metrics::{Aggregation, Objective};

/// Scratch space of one worker: each lane's positions.
pub struct LaneScratch {
    kernel: engine::Kernel,
    positions: [Vec<i8>; LANES],
    /// Per lane, the objective on each instrument (several instruments).
    objectives: [Vec<f64>; LANES],
}

impl Default for LaneScratch {
    fn default() -> Self {
        LaneScratch {
            kernel: engine::Kernel::Best,
            positions: Default::default(),
            objectives: Default::default(),
        }
    }
}

impl LaneScratch {
    /// Scratch space that runs the portable lane code even where the CPU
    /// has wider vectors (to test that path on any machine).
    pub fn portable() -> Self {
        LaneScratch {
            kernel: engine::Kernel::Portable,
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
        if window != &self.scoring.windows.score {
            // The lanes accumulate one window; this screen reads two.
            for (p, o) in params.iter().zip(out.iter_mut()) {
                *o = self.screen(p, &mut scratch.positions[0]);
            }
            return;
        }
        for (p, positions) in params.iter().zip(scratch.positions.iter_mut()) {
            self.positions_until(p, window.end, positions);
        }
        // Unused lanes repeat the first one; their results are dropped.
        let lanes: [&[i8]; LANES] = std::array::from_fn(|l| {
            scratch.positions[if l < params.len() { l } else { 0 }].as_slice()
        });
        let downside = self.scoring.objective == Objective::Sortino;
        let (stats, inexact) = engine::simulate(
            self.bars,
            &lanes,
            &self.scoring.engine,
            window,
            downside,
            scratch.kernel,
        );
        for (l, (p, o)) in params.iter().zip(out.iter_mut()).enumerate() {
            *o = if inexact & (1 << l) != 0 {
                self.screen(p, &mut scratch.positions[l])
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
    let mut one = [ScreenScore {
        objective: 0.0,
        trades: 0,
        sharpe: 0.0,
    }; LANES];
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
