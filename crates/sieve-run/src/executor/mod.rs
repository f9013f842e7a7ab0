//! Where an iteration's screen runs: the [`SweepExecutor`] seam. The
//! optimize loop's sweep stage hands every screen to one and never calls
//! [`crate::sweep::run`] itself. [`InProcess`] screens here, on the plan's
//! backend and threads; [`Cluster`] splits it into shard jobs
//! (`sieve shard-job`, [`job::run_shard`]) that a [`ShardRunner`] starts
//! elsewhere — a Slurm array ([`Slurm`]), a Python executor — and joins
//! their parts exactly.

mod cluster;
mod in_process;
pub mod job;
mod slurm;

pub use cluster::{Cluster, JobState, Phase, ShardRunner, Submission};
pub use in_process::InProcess;
pub use slurm::Slurm;

use sieve_core::Result;

use crate::outcome::Ended;
use crate::sweep::{OnBatch, SweepPlan, Swept};
use crate::Study;

/// Runs one screen of a study's grid (a plan's batch) to its end, or until
/// `on_batch` breaks. Whatever runs it, the result is the one
/// [`crate::sweep::run`] gives in this process for the same plan: the top K and
/// the objective statistics are identical, byte for byte.
pub trait SweepExecutor: Sync {
    /// Screens `plan`; `on_batch` sees the progress (checkpoints a resumed
    /// run may continue from) and may stop it; `note` hears what the user
    /// should know as it goes (how shards sent elsewhere stand).
    fn screen(
        &self,
        study: &Study,
        plan: &SweepPlan<'_>,
        on_batch: &mut OnBatch<'_>,
        note: &mut dyn FnMut(&str),
    ) -> Result<Ended<Swept>>;
}
