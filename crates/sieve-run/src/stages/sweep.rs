//! The sweep stage: screen one iteration's grid into `sweep.csv`,
//! checkpointing as it goes so a crash, a budget or a signal loses at most
//! one checkpoint interval.

use std::ops::ControlFlow;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sieve_core::format::float;
use sieve_core::{Error, Result};
use sieve_screen::{Checkpoint, Scored};

use crate::control::{Ended, Observer, OptimizeOptions, Session, Stop};
use crate::files::{self, NodeMeta, StatsMeta};
use crate::rundir::{IterationRecord, Stage, SweepRecord};
use crate::sweep::{self, SweepPlan, Swept};
use crate::Study;

use super::{StageRun, Step};

/// Screens one iteration's grid into `sweep.csv`, checkpointing as it goes.
pub(crate) struct Sweep;

impl StageRun for Sweep {
    fn stage(&self) -> Stage {
        Stage::Sweep
    }

    fn run(
        &self,
        step: &Step<'_, '_>,
        rec: &mut IterationRecord,
        obs: &mut dyn Observer,
    ) -> Result<ControlFlow<Stop>> {
        let Step {
            study,
            opts,
            session,
            dir,
            iteration,
            ..
        } = *step;
        run(study, opts, session, dir, iteration, rec, obs)
    }
}

fn run(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    session: &Session<'_>,
    iter_dir: &Path,
    iteration: u32,
    rec: &mut IterationRecord,
    obs: &mut dyn Observer,
) -> Result<ControlFlow<Stop>> {
    let batch = rec.batch()?;
    let (first, end) = (batch.positions().start, batch.positions().end);
    // A sampled batch shares fewer indicator settings than a grid's block:
    // how many it reads says what its screen costs.
    let series = rec
        .indices
        .as_deref()
        .map(|list| distinct_series(study, list));
    if let (Some(n), Some(list)) = (series, &rec.indices) {
        obs.note(&format!(
            "iteration {iteration}: {} combinations read {n} distinct indicator series ({:.1} combinations per series)",
            list.len(),
            list.len() as f64 / n.max(1) as f64
        ));
    }
    let checkpoint_path = iter_dir.join("sweep.checkpoint.json");
    let resume = read_checkpoint(&checkpoint_path, study.space().size())?;
    if let Some(c) = &resume {
        obs.note(&format!(
            "iteration {iteration}: resuming the sweep at {} {}",
            match rec.indices {
                None => "grid index",
                Some(_) => "proposal position",
            },
            c.next
        ));
    }
    let plan = SweepPlan {
        backend: opts.backend,
        batch,
        shard: crate::shard::Shard::WHOLE,
        top: study.settings().sweep_top,
        threads: opts.threads,
        resume,
        stop: opts.interrupt,
    };
    if let Some(why) = sweep::fallback(study, &plan) {
        obs.note(&format!("note: {why}"));
    }
    obs.start(iteration, Stage::Sweep, end - first);
    let mut last_write = Instant::now();
    // The state after the last batch that ended before any stop request.
    // A batch that ends after one is not kept: what stops a run may have
    // cut its inputs short (an indicator written in Python skips its
    // calls once the run is stopping), so its scores are not trusted.
    let mut trusted: Option<Checkpoint> = plan.resume.clone();
    let obs = std::cell::RefCell::new(obs);
    let swept = opts.executor.screen(
        study,
        &plan,
        &mut |c| {
            obs.borrow_mut().progress(c.next - first);
            if session.interrupted() {
                if let Some(t) = &trusted {
                    write_checkpoint(&checkpoint_path, study.space().size(), t)?;
                }
                return Ok(ControlFlow::Break(Stop::Interrupted));
            }
            let unfinished = c.next < end;
            let stop = session.out_of_time().then_some(Stop::TimeBudget {
                seconds: study.settings().time_budget_s,
                during: Some(iteration),
            });
            if unfinished && (stop.is_some() || last_write.elapsed() >= opts.checkpoint_every) {
                write_checkpoint(&checkpoint_path, study.space().size(), c)?;
                last_write = Instant::now();
            }
            if let (Some(stop), true) = (stop, unfinished) {
                return Ok(ControlFlow::Break(stop));
            }
            trusted = Some(c.clone());
            Ok(ControlFlow::Continue(()))
        },
        &mut |message| obs.borrow_mut().note(message),
    );
    let obs = obs.into_inner();
    obs.finish();
    let Swept {
        screen,
        meta,
        placement,
    } = match swept? {
        Ended::Done(swept) => swept,
        Ended::Stopped(stop) => return Ok(ControlFlow::Break(stop)),
    };
    sweep::write(&iter_dir.join("sweep.csv"), study, &screen, &meta)?;
    rec.stage = Stage::Verify;
    rec.sweep = Some(SweepRecord {
        combinations_evaluated: meta.objective_stats.combinations_evaluated,
        sharpe_stats: meta.sharpe_stats,
        sweep_s: meta.timings.screen_s,
        series,
        placement,
    });
    let _ = std::fs::remove_file(&checkpoint_path);
    Ok(ControlFlow::Continue(()))
}

/// The distinct indicator settings (shared series) the combinations
/// `indices` of the study's grid read.
pub(crate) fn distinct_series(study: &Study, indices: &[u64]) -> u64 {
    let space = study.space();
    let mut params = space.params_of(0);
    let (mut keys, mut seen) = (Vec::new(), rustc_hash::FxHashSet::default());
    for &i in indices {
        space.params_at(i, &mut params);
        keys.clear();
        study.strategy().indicators(&params, &mut keys);
        seen.extend(keys.iter().copied());
    }
    seen.len() as u64
}

#[derive(Serialize, Deserialize)]
struct SweepCheckpoint {
    grid_size: u64,
    next: u64,
    stats: StatsMeta,
    #[serde(default)]
    sharpe: Option<StatsMeta>,
    /// Both statistics chunk by chunk (absent from an older sieve's
    /// checkpoint, which is then not resumed).
    #[serde(default)]
    stats_tree: Vec<NodeMeta>,
    #[serde(default)]
    sharpe_tree: Vec<NodeMeta>,
    /// (grid index, score as written by `format::float`, trades).
    top: Vec<(u64, String, u64)>,
}

fn write_checkpoint(path: &Path, grid_size: u64, c: &Checkpoint) -> Result<()> {
    let mut top = c.top.clone();
    top.sort_unstable_by(Scored::rank_cmp);
    let cp = SweepCheckpoint {
        grid_size,
        next: c.next,
        stats: StatsMeta::from(&c.stats.total()),
        sharpe: Some(StatsMeta::from(&c.sharpe.total())),
        stats_tree: files::tree_meta(&c.stats),
        sharpe_tree: files::tree_meta(&c.sharpe),
        top: top
            .iter()
            .map(|s| (s.index, float(s.score), s.trades))
            .collect(),
    };
    files::write_json(path, &cp)
}

fn read_checkpoint(path: &Path, grid_size: u64) -> Result<Option<Checkpoint>> {
    if !path.exists() {
        return Ok(None);
    }
    let cp: SweepCheckpoint = files::read_json(path)?;
    if cp.grid_size != grid_size {
        return Ok(None);
    }
    // The statistics chunk by chunk; a checkpoint without them (an older
    // sieve's) is screened again from the iteration's start.
    let (Some(stats), Some(sharpe)) = (
        files::tree_of(&cp.stats_tree),
        files::tree_of(&cp.sharpe_tree),
    ) else {
        return Ok(None);
    };
    if stats.total().evaluated != cp.stats.combinations_evaluated {
        return Ok(None);
    }
    let top = cp
        .top
        .iter()
        .map(|(index, score, trades)| {
            let score = score.parse::<f64>().map_err(|_| Error::Data {
                path: path.to_path_buf(),
                message: format!("bad score \"{score}\""),
            })?;
            Ok(Scored {
                index: *index,
                score,
                trades: *trades,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Checkpoint {
        next: cp.next,
        top,
        stats,
        sharpe,
    }))
}
