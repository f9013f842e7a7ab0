//! How a long job ends ([`Ended`]) and why a loop stopped ([`Stop`]):
//! typed outcomes every step returns, below everything that runs one.

use sieve_core::format::float;

/// How a long job ended: done, or stopped part way — by its cancel token
/// or its time budget — checkpointed where the job checkpoints.
#[derive(Debug)]
pub enum Ended<T> {
    Done(T),
    Stopped(Stop),
}

/// Why the loop stopped. Every rule lives in [`crate::optimize`]'s one
/// loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    AllIterations(u32),
    /// The time budget ran out; `during` the sweep of that iteration.
    TimeBudget {
        seconds: f64,
        during: Option<u32>,
    },
    /// The best did not improve; under `plateau`, its neighbourhood's
    /// aggregate is what was compared.
    Stale {
        plateau: bool,
    },
    NothingToRefine,
    /// A sampled search screened its `search.evaluations` (or the whole
    /// grid): this many in all.
    Evaluations(u64),
    /// A sampled search screened every combination the constraints allow.
    SpaceScreened(u64),
    /// No combination of the first iteration had a finite objective.
    NoFiniteObjective,
    /// SIGINT/SIGTERM: the current step was checkpointed.
    Interrupted,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::AllIterations(n) => write!(f, "all {n} iterations done"),
            Stop::TimeBudget { seconds, during: Some(i) } => write!(
                f,
                "time budget of {} s reached during iteration {i}'s sweep (checkpointed; the same command continues it with a fresh budget)",
                float(*seconds)
            ),
            Stop::TimeBudget { seconds, during: None } => write!(
                f,
                "time budget of {} s reached (the same command continues with a fresh budget)",
                float(*seconds)
            ),
            Stop::Stale { plateau: false } => {
                f.write_str("the best verified objective did not improve for two iterations")
            }
            Stop::Stale { plateau: true } => f.write_str(
                "the chosen candidate's neighbourhood (robust.select = \"plateau\") did not improve for two iterations",
            ),
            Stop::Evaluations(n) => write!(
                f,
                "search.evaluations reached: {n} combinations screened (raise it and run the same command to continue)"
            ),
            Stop::SpaceScreened(n) => write!(
                f,
                "every combination of the grid the constraints allow was screened ({n})"
            ),
            Stop::NothingToRefine => f.write_str(
                "nothing can be refined further (the grid is as fine as it gets within optimize.max_combinations)",
            ),
            Stop::NoFiniteObjective => f.write_str("no combination had a finite objective"),
            Stop::Interrupted => f.write_str("interrupted; re-run the same command to resume"),
        }
    }
}
