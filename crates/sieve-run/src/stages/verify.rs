//! The verify stage: the sweep's top candidates through the exact engine
//! into `verified.csv`; records the best and the candidates the next grid
//! is built from.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::settings::Selection;
use sieve_core::format::{push_float, write_atomic};
use sieve_core::Result;

use crate::control::{Ended, Observer, Stop};
use crate::rundir::{BestRecord, IterationRecord, Stage, VerifyRecord};
use crate::verify::Verified;
use crate::{candidates, files, plateau, verify, Study};

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
    ) -> Result<ControlFlow<Stop>> {
        run(step, rec, obs)
    }
}

/// Verifies the sweep's top candidates into `verified.csv` and records the
/// best and the candidates the next grid is built from.
fn run(
    step: &Step<'_, '_>,
    rec: &mut IterationRecord,
    obs: &mut dyn Observer,
) -> Result<ControlFlow<Stop>> {
    let (study, opts, iter_dir, iteration) = (step.study, step.opts, step.dir, step.iteration);
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
    let result = match result {
        Ended::Done(result) => result,
        Ended::Stopped(stop) => return Ok(ControlFlow::Break(stop)),
    };
    // Under `plateau`, every candidate's neighbourhood, before anything is
    // written (stopped: the step is redone).
    let plateau = match config.select {
        Selection::Plateau(how) => {
            let done = std::sync::atomic::AtomicU64::new(0);
            let mut started = false;
            let hoods = plateau::neighbourhoods(
                study,
                step.original,
                &result.rows,
                how,
                opts.threads,
                opts.interrupt,
                &mut |n| {
                    obs.note(&format!(
                        "iteration {iteration}: verifying {n} neighbours of the {} candidates (robust.select = \"plateau\")",
                        result.rows.len()
                    ));
                    obs.start(iteration, Stage::Verify, n as u64);
                    started = true;
                },
                &|| {
                    done.fetch_add(1, Ordering::Relaxed);
                },
            )?;
            if started {
                obs.progress(done.into_inner());
                obs.finish();
            }
            match hoods {
                Ended::Done(hoods) => Some(hoods),
                Ended::Stopped(stop) => return Ok(ControlFlow::Break(stop)),
            }
        }
        Selection::Argmax => None,
    };
    verify::write_csv(&iter_dir.join("verified.csv"), &result)?;
    // The selection's order: the plateau ranking, or the verified one.
    let order: Vec<usize> = match &plateau {
        Some(hoods) => {
            let order = plateau::ranking(&result.rows, hoods);
            write_plateau_csv(
                &iter_dir.join("plateau.csv"),
                study,
                &result.rows,
                hoods,
                &order,
            )?;
            order
        }
        None => (0..result.rows.len()).collect(),
    };
    let record = |i: usize| {
        let r = &result.rows[i];
        let hood = plateau.as_ref().map(|h| h[i]);
        BestRecord {
            grid_index: r.candidate.grid_index,
            screen_rank: r.candidate.screen_rank,
            params: r.candidate.params.clone(),
            score: (!r.score.is_nan()).then_some(r.score),
            aggregate: hood.and_then(|h| (!h.aggregate.is_nan()).then_some(h.aggregate)),
            neighbours: hood.map(|h| h.neighbours),
        }
    };
    rec.stage = Stage::Done;
    rec.verify = Some(VerifyRecord {
        verify_s: started.elapsed().as_secs_f64(),
        candidates_verified: result.rows.len(),
        best: order.first().map(|&i| record(i)),
        spearman: files::finite(result.agreement.spearman),
        top_screen_ranks: result.agreement.top_screen_ranks.clone(),
        best_from_bottom_tenth: result.agreement.best_from_bottom_tenth,
        // Only candidates with a finite score say where the good region
        // is; the chosen one first (the next grid is anchored on it).
        refine_from: order
            .iter()
            .map(|&i| &result.rows[i])
            .filter(|r| r.score.is_finite())
            .take(config.refine_top)
            .map(|r| r.candidate.params.clone())
            .collect(),
        argmax: plateau
            .as_ref()
            .and_then(|_| (!result.rows.is_empty()).then(|| record(0))),
    });
    Ok(ControlFlow::Continue(()))
}

/// `plateau.csv`: the verified candidates in the plateau ranking, with
/// their objective, neighbours and aggregate.
fn write_plateau_csv(
    path: &Path,
    study: &Study,
    rows: &[Verified],
    hoods: &[plateau::Neighbourhood],
    order: &[usize],
) -> Result<()> {
    let mut out = String::from("rank,grid_index");
    for name in study.param_names() {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",score,neighbours,aggregate\n");
    for (rank, &i) in order.iter().enumerate() {
        let r = &rows[i];
        out.push_str(&format!("{},{}", rank + 1, r.candidate.grid_index));
        for v in &r.candidate.params {
            out.push(',');
            push_float(&mut out, *v);
        }
        out.push(',');
        push_float(&mut out, r.score);
        out.push_str(&format!(",{},", hoods[i].neighbours));
        push_float(&mut out, hoods[i].aggregate);
        out.push('\n');
    }
    write_atomic(path, out.as_bytes())
}
