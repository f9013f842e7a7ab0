//! The verify stage: the sweep's top candidates through the exact engine
//! into `verified.csv`; records the best and the candidates the next grid
//! is built from.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use sieve_core::Result;

use crate::control::{Observer, OptimizeOptions, Stop};
use crate::rundir::{BestRecord, IterationRecord, Stage, VerifyRecord};
use crate::{candidates, files, verify, Study};

use super::{StageRun, Step};

/// Verifies the iteration's `sweep.csv` into `verified.csv`.
pub(crate) struct Verify;

impl StageRun for Verify {
    fn stage(&self) -> Stage {
        Stage::Verify
    }

    fn run(
        &self,
        step: &Step<'_, '_>,
        rec: &mut IterationRecord,
        obs: &mut dyn Observer,
    ) -> Result<Option<Stop>> {
        run(step.study, step.opts, step.dir, step.iteration, rec, obs)
    }
}

/// Verifies the sweep's top candidates into `verified.csv` and records the
/// best and the candidates the next grid is built from.
fn run(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    iter_dir: &Path,
    iteration: u32,
    rec: &mut IterationRecord,
    obs: &mut dyn Observer,
) -> Result<Option<Stop>> {
    let config = study.settings();
    let started = Instant::now();
    let list = candidates::read(
        &iter_dir.join("sweep.csv"),
        study.strategy(),
        Some(config.verify_top),
    )?;
    obs.start(iteration, Stage::Verify, list.len() as u64);
    let done = std::sync::atomic::AtomicU64::new(0);
    let result = verify::verify(study, list, opts.threads, opts.interrupt, &|| {
        done.fetch_add(1, Ordering::Relaxed);
    })?;
    obs.progress(done.into_inner());
    obs.finish();
    // Stopped: nothing written; the iteration stays at this step.
    let Some(result) = result else {
        return Ok(Some(Stop::Interrupted));
    };
    verify::write_csv(&iter_dir.join("verified.csv"), &result)?;
    rec.stage = Stage::Done;
    let best = result.rows.first().map(|r| BestRecord {
        grid_index: r.candidate.grid_index,
        screen_rank: r.candidate.screen_rank,
        params: r.candidate.params.clone(),
        score: (!r.score.is_nan()).then_some(r.score),
    });
    rec.verify = Some(VerifyRecord {
        verify_s: started.elapsed().as_secs_f64(),
        candidates_verified: result.rows.len(),
        best,
        spearman: files::finite(result.agreement.spearman),
        top_screen_ranks: result.agreement.top_screen_ranks.clone(),
        best_from_bottom_tenth: result.agreement.best_from_bottom_tenth,
        // Only candidates with a finite score say where the good region is.
        refine_from: result
            .rows
            .iter()
            .filter(|r| r.score.is_finite())
            .take(config.refine_top)
            .map(|r| r.candidate.params.clone())
            .collect(),
    });
    Ok(None)
}
