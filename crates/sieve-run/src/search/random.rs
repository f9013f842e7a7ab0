//! The seeded random sampler ([`Random`], `search.method = "random"`):
//! each iteration screens `batch` combinations drawn uniformly from the
//! study's grid — distinct, never one screened before, never one the
//! constraints exclude — until `evaluations` have been screened (rounded
//! up to whole batches) or the grid is used up.
//!
//! Proposals come from the history alone: iteration k's draws are seeded
//! by `seed` and k, and skip what the recorded iterations screened, so a
//! resumed run (or one whose budget was raised) proposes what an
//! uninterrupted one does.

use std::collections::HashSet;

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
        let space = history.study.space();
        let size = space.size();
        let screened: HashSet<u64> = history
            .iterations
            .iter()
            .flat_map(|it| it.indices.iter().flatten().copied())
            .collect();
        // Whole batches only, so that a budget raised later continues to
        // the run a larger budget would have made.
        let done = screened.len() as u64;
        let want = self.batch.min(size - done);
        if done >= self.evaluations || want == 0 {
            return Ok(Next::Exhausted);
        }
        let k = history.iterations.len() as u64 + 1;
        let mut rng = SplitMix64(self.seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let mut params = space.params_of(0);
        let mut allowed = |i: u64| {
            space.params_at(i, &mut params);
            space.allowed(&params)
        };
        let room = want.min(1 << 20) as usize;
        let mut picked: HashSet<u64> = HashSet::with_capacity(room);
        let mut order: Vec<u64> = Vec::with_capacity(room);
        // Draws until enough, within a bound on draws (each is a grid point
        // and a constraint check): then, on a grid small enough, what is
        // left is listed and shuffled.
        let bound = 64 * want + DRAWS;
        let mut draws = 0u64;
        while (order.len() as u64) < want && draws < bound {
            draws += 1;
            let i = rng.below(size);
            if screened.contains(&i) || picked.contains(&i) || !allowed(i) {
                continue;
            }
            picked.insert(i);
            order.push(i);
        }
        if (order.len() as u64) < want && size <= LISTED {
            let mut rest: Vec<u64> = (0..size)
                .filter(|i| !screened.contains(i) && !picked.contains(i) && allowed(*i))
                .collect();
            // Fisher–Yates with the same generator: still deterministic.
            for j in (1..rest.len()).rev() {
                rest.swap(j, rng.below(j as u64 + 1) as usize);
            }
            order.extend(rest.into_iter().take(want as usize - order.len()));
        }
        // Under 1/16 of a batch from all those draws: the constraints (or
        // what is screened already) leave too little of a large grid to
        // sample; narrowing the grid is the cure.
        if size > LISTED && 16 * (order.len() as u64) < want {
            return Err(Error::config(
                key::STRATEGY_CONSTRAINTS,
                format!(
                    "{draws} random combinations of the grid ({size} in all) found {} the constraints allow and not screened yet, for a batch of {want}: they exclude nearly all of it; narrow [strategy.params] to what they allow",
                    order.len()
                ),
            ));
        }
        if order.is_empty() {
            return Ok(Next::Exhausted);
        }
        order.sort_unstable();
        Ok(Next::Try(Proposal {
            axes: history.original.to_vec(),
            indices: Some(order),
        }))
    }

    fn budgeted(&self) -> bool {
        true
    }
}
