//! What the optimize loop tries next: the [`Search`] seam. Each iteration
//! screens one [`Proposal`] — a grid and, optionally, a list of its grid
//! indices — and verifies the best of it; the search sees every earlier
//! iteration (its proposal, the screen's record and top K in `sweep.csv`,
//! the verified results) and proposes the next. [`Zoom`] (the whole grid,
//! then zoomed in) is today's method; a random, evolutionary or Bayesian
//! method is one more file implementing the trait.
//!
//! A proposal is stored in the iteration's record (`run.json`) before it is
//! screened, so a resumed run screens exactly what was proposed; a search
//! must propose from the history alone (no hidden state), so that the same
//! history gives the same proposal.

mod zoom;

pub use zoom::Zoom;

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
}

/// The search a study asks for: the zoom-in (a `[search] method` key will
/// choose among several).
pub fn of(_study: &Study) -> Box<dyn Search> {
    Box::new(Zoom)
}
