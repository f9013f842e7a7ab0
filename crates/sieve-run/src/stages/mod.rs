//! The optimize loop's stages, one file each: [`sweep`], [`verify`]. Each
//! is a [`StageRun`]: it runs when an iteration's record stands at its
//! stage, writes its files into the iteration's folder and advances the
//! record. The loop in `optimize` runs them in order and holds the stop
//! rules.

pub(crate) mod sweep;
pub(crate) mod verify;

use std::ops::ControlFlow;
use std::path::Path;

use sieve_core::Result;

use crate::control::{Observer, OptimizeOptions, Session, Stop};
use crate::rundir::{IterationRecord, Stage};
use crate::Study;

/// What a stage works on: one iteration of one run.
pub(crate) struct Step<'a, 'o> {
    /// The study of this iteration (its grid).
    pub study: &'a Study,
    /// The run's first grid (what a zoomed grid lies within).
    pub original: &'a [sieve_core::grid::Axis],
    pub opts: &'a OptimizeOptions<'o>,
    pub session: &'a Session<'o>,
    /// The iteration's folder (`iter-NNN`).
    pub dir: &'a Path,
    pub iteration: u32,
}

/// One step of an iteration.
pub(crate) trait StageRun {
    /// The stage an iteration's record stands at when this step runs next.
    fn stage(&self) -> Stage;

    /// Runs the step and advances `rec` past it; `Break(stop)` when a
    /// signal or the time budget stopped it part way (checkpointed; `rec`
    /// then still stands at this stage).
    fn run(
        &self,
        step: &Step<'_, '_>,
        rec: &mut IterationRecord,
        obs: &mut dyn Observer,
    ) -> Result<ControlFlow<Stop>>;
}

/// Every stage, in the order an iteration goes through them.
pub(crate) const ALL: [&dyn StageRun; 2] = [&sweep::Sweep, &verify::Verify];
