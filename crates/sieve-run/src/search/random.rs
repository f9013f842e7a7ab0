//! The seeded random sampler ([`Random`], `search.method = "random"`):
//! each iteration screens `batch` combinations drawn uniformly from the
//! study's grid — distinct, never one screened before, never one the
//! constraints exclude — until `evaluations` have been screened (rounded
//! up to whole batches) or the grid is used up.
//!
//! Proposals come from the history alone: iteration k's draws are seeded
//! by `seed` and k, and skip what the recorded iterations screened, so a
//! resumed run (or one whose budget was raised) proposes what an
//! uninterrupted one does. [`Draws`] is the batch being drawn, shared with
//! the evolutionary search.

// Grid indices and sets of them: FxHash (measured: SipHash's sets of a
// million indices were a tenth of an evolutionary generation's gap).
use rustc_hash::FxHashSet as HashSet;

use sieve_core::grid::ParamSpace;
use sieve_core::random::SplitMix64;
use sieve_core::{key, Error, Result};

use super::{History, Next, Proposal, Search};
use crate::settings::SearchSettings;

/// Uniform samples of the grid, `batch` per iteration.
#[derive(Debug, Clone, Copy)]
pub struct Random {
    pub seed: u64,
    pub evaluations: u64,
    pub batch: u64,
}

impl Random {
    pub fn new(s: &SearchSettings) -> Random {
        Random {
            seed: s.seed,
            evaluations: s.evaluations,
            batch: s.batch,
        }
    }
}

/// Grids up to this size are listed when drawing finds too few; above
/// it, drawing must find them.
const LISTED: u64 = 1 << 24;

/// Draws allowed beyond 64 per wanted combination: about a second of
/// constraint checks, enough for constraints that allow 1 combination in
/// a thousand.
const DRAWS: u64 = 1 << 24;

impl Search for Random {
    fn propose(&self, history: &History<'_>) -> Result<Next> {
        let Some(mut draws) = Draws::start(history, self.seed, self.evaluations, self.batch) else {
            return Ok(Next::Exhausted);
        };
        draws.uniform(draws.want);
        draws.finish(history, false)
    }

    fn budgeted(&self) -> bool {
        true
    }
}

/// One iteration's batch of a sampled search, being drawn: distinct grid
/// indices, none screened before, all allowed by the constraints.
pub(super) struct Draws<'a> {
    space: &'a ParamSpace,
    screened: HashSet<u64>,
    picked: HashSet<u64>,
    order: Vec<u64>,
    params: Vec<f64>,
    /// The batch's size: `batch`, or what is left of the grid.
    pub want: u64,
    /// Candidates tried so far (each a constraint check).
    pub tried: u64,
    pub rng: SplitMix64,
}

impl<'a> Draws<'a> {
    /// The next iteration's batch, or `None` when the budget is spent or
    /// the grid used up. Whole batches only, so that a budget raised later
    /// continues to the run a larger budget would have made.
    pub fn start(history: &History<'a>, seed: u64, evaluations: u64, batch: u64) -> Option<Self> {
        let space = history.study.space();
        let screened: HashSet<u64> = history
            .iterations
            .iter()
            .flat_map(|it| it.indices.iter().flatten().copied())
            .collect();
        let done = screened.len() as u64;
        let want = batch.min(space.size().saturating_sub(done));
        if done >= evaluations || want == 0 {
            return None;
        }
        let k = history.iterations.len() as u64 + 1;
        let room = want.min(1 << 20) as usize;
        Some(Draws {
            space,
            screened,
            picked: HashSet::with_capacity_and_hasher(room, Default::default()),
            order: Vec::with_capacity(room),
            params: space.params_of(0),
            want,
            tried: 0,
            rng: SplitMix64(seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03)),
        })
    }

    /// How many are drawn so far.
    pub fn len(&self) -> u64 {
        self.order.len() as u64
    }

    /// Adds `i` when it is new and allowed; whether it was.
    pub fn offer(&mut self, i: u64) -> bool {
        self.tried += 1;
        if self.screened.contains(&i) || self.picked.contains(&i) {
            return false;
        }
        self.space.params_at(i, &mut self.params);
        if !self.space.allowed(&self.params) {
            return false;
        }
        self.picked.insert(i);
        self.order.push(i);
        true
    }

    /// Uniform draws until `upto` are drawn, within a bound on draws (each
    /// is a grid point and a constraint check).
    pub fn uniform(&mut self, upto: u64) {
        let upto = upto.min(self.want);
        let bound = self.tried + 64 * upto + DRAWS;
        let size = self.space.size();
        while self.len() < upto && self.tried < bound {
            let i = self.rng.below(size);
            self.offer(i);
        }
    }

    /// The proposal: short of `want`, on a grid small enough, what is left
    /// is listed and shuffled; on a larger one, under 1/16 of a batch is
    /// an error (the constraints, or what is screened already, leave too
    /// little of it to sample; narrowing the grid is the cure). `biased`:
    /// drawn near earlier bests (see [`Proposal::biased`]).
    pub fn finish(mut self, history: &History<'_>, biased: bool) -> Result<Next> {
        let size = self.space.size();
        if self.len() < self.want && size <= LISTED {
            let mut rest: Vec<u64> = Vec::new();
            for i in 0..size {
                if !self.screened.contains(&i) && !self.picked.contains(&i) {
                    self.space.params_at(i, &mut self.params);
                    if self.space.allowed(&self.params) {
                        rest.push(i);
                    }
                }
            }
            // Fisher–Yates with the same generator: still deterministic.
            for j in (1..rest.len()).rev() {
                rest.swap(j, self.rng.below(j as u64 + 1) as usize);
            }
            let missing = (self.want - self.len()) as usize;
            self.order.extend(rest.into_iter().take(missing));
        }
        if size > LISTED && 16 * self.len() < self.want {
            return Err(Error::config(
                key::STRATEGY_CONSTRAINTS,
                format!(
                    "{} random combinations of the grid ({size} in all) found {} the constraints allow and not screened yet, for a batch of {}: they exclude nearly all of it; narrow [strategy.params] to what they allow",
                    self.tried,
                    self.len(),
                    self.want
                ),
            ));
        }
        if self.order.is_empty() {
            return Ok(Next::Exhausted);
        }
        self.order.sort_unstable();
        Ok(Next::Try(Proposal {
            axes: history.original.to_vec(),
            indices: Some(self.order),
            biased,
        }))
    }
}
