//! What every long job of a run shares: its options, the observer it
//! reports to, why it stopped, and the clock and stop signal of one
//! invocation. The loops (optimize, walk-forward) and their stages depend
//! on this; it depends on none of them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sieve_core::Result;
use sieve_screen::ScreenBackend;

use crate::executor::SweepExecutor;
pub use crate::outcome::{Ended, Stop};
use crate::rundir::Stage;
use crate::Study;

pub struct OptimizeOptions<'a> {
    pub out: PathBuf,
    pub backend: &'a dyn ScreenBackend,
    /// Where each iteration's screen runs.
    pub executor: &'a dyn SweepExecutor,
    pub threads: usize,
    /// Start over even if the folder holds a run of another config or data.
    pub restart: bool,
    /// How often a sweep in progress writes its checkpoint.
    pub checkpoint_every: Duration,
    /// Set (by a SIGINT/SIGTERM handler) to stop at the next chunk batch,
    /// checkpointed and resumable.
    pub interrupt: Option<&'a AtomicBool>,
}

/// What the loop tells the user as it goes.
pub trait Observer {
    /// A step starts: `total` is its units (combinations or candidates).
    fn start(&mut self, iteration: u32, stage: Stage, total: u64);
    fn progress(&mut self, done: u64);
    fn finish(&mut self);
    fn note(&mut self, message: &str);

    /// A run folder's results are complete (`best.json`, `run.json`): what
    /// shows them (the report) is written here, so the loops never know of
    /// it. Nothing by default.
    fn results(&mut self, _study: &Study, _dir: &Path) -> Result<()> {
        Ok(())
    }
}

/// The shared clock and stop signals of one invocation.
pub(crate) struct Session<'a> {
    pub(crate) started: Instant,
    pub(crate) budget_s: f64,
    pub(crate) elapsed_before: f64,
    pub(crate) interrupt: Option<&'a AtomicBool>,
}

impl Session<'_> {
    /// The budget counts per invocation: a re-run gets all of it again.
    pub(crate) fn out_of_time(&self) -> bool {
        self.started.elapsed().as_secs_f64() >= self.budget_s
    }

    pub(crate) fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Seconds over every session of the run (recorded, not a stop rule).
    pub(crate) fn total_elapsed(&self) -> f64 {
        self.elapsed_before + self.started.elapsed().as_secs_f64()
    }
}
