//! Where an iteration's screen runs: the [`SweepExecutor`] seam. The
//! optimize loop's sweep stage hands every screen to one and never calls
//! [`sweep::run`] itself. [`InProcess`] screens here, on the plan's backend
//! and threads; an executor that sends shards elsewhere (a Slurm array of
//! `sieve sweep --shard` jobs merged by `merge`, a Python executor) is one
//! more file implementing the trait.

use sieve_core::Result;

use crate::outcome::Ended;
use crate::sweep::{self, OnBatch, SweepPlan, Swept};
use crate::Study;

/// Runs one screen of a study's grid (a plan's batch) to its end, or until
/// `on_batch` breaks. Whatever runs it, the result is the one
/// [`sweep::run`] gives in this process for the same plan: the top K and
/// the objective statistics are identical, byte for byte.
pub trait SweepExecutor: Sync {
    /// How `-v` and the records name it.
    fn name(&self) -> &str;

    /// Screens `plan`; `on_batch` sees the progress (checkpoints a resumed
    /// run may continue from) and may stop it.
    fn screen(
        &self,
        study: &Study,
        plan: &SweepPlan<'_>,
        on_batch: &mut OnBatch<'_>,
    ) -> Result<Ended<Swept>>;
}

/// Screens in this process: the plan's backend on the plan's threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcess;

impl SweepExecutor for InProcess {
    fn name(&self) -> &str {
        "in-process"
    }

    fn screen(
        &self,
        study: &Study,
        plan: &SweepPlan<'_>,
        on_batch: &mut OnBatch<'_>,
    ) -> Result<Ended<Swept>> {
        sweep::run(study, plan, on_batch)
    }
}
