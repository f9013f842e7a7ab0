//! The [`Search`] trait and what it reads and says: [`History`],
//! [`Proposal`], [`Next`].

use sieve_core::grid::Axis;
use sieve_core::Result;

use crate::rundir::{IterationRecord, RunDir};
use crate::Study;

/// What a search proposes from.
pub struct History<'a> {
    pub study: &'a Study,
    /// The run's first grid: what every proposal lies within.
    pub original: &'a [Axis],
    /// Every iteration so far, oldest first.
    pub iterations: &'a [IterationRecord],
    /// The run folder: each iteration's `sweep.csv` (its screened top K)
    /// and `verified.csv`.
    pub dir: &'a RunDir,
}

/// One iteration's combinations: a grid, and the indices of it to screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub axes: Vec<Axis>,
    /// Grid indices of `axes` to screen; `None`: every one.
    pub indices: Option<Vec<u64>>,
    /// Drawn near earlier bests rather than across the grid: the
    /// iteration's Sharpes stay out of the Deflated Sharpe's V.
    pub biased: bool,
}

/// What a search says next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Try(Proposal),
    /// Nothing left worth trying: the loop ends.
    Exhausted,
}

/// Proposes each iteration's combinations.
pub trait Search {
    /// The next proposal, from the history alone.
    fn propose(&self, history: &History<'_>) -> Result<Next>;

    /// Whether the search ends by its evaluation budget
    /// (`search.evaluations`) alone: then `optimize.iterations` and the
    /// stale rule do not stop it.
    fn budgeted(&self) -> bool {
        false
    }
}
