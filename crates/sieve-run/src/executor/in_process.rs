//! The executor of one machine: the screen runs in this process.

use sieve_core::Result;

use super::SweepExecutor;
use crate::outcome::Ended;
use crate::sweep::{self, OnBatch, SweepPlan, Swept};
use crate::Study;

/// Screens in this process: the plan's backend on the plan's threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcess;

impl SweepExecutor for InProcess {
    fn screen(
        &self,
        study: &Study,
        plan: &SweepPlan<'_>,
        on_batch: &mut OnBatch<'_>,
        _note: &mut dyn FnMut(&str),
    ) -> Result<Ended<Swept>> {
        sweep::run(study, plan, on_batch)
    }
}
