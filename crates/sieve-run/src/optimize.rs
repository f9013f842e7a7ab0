//! `sieve optimize`: screen → verify → pick the best → zoom in → repeat,
//! resumable from its run folder after a crash.
//!
//! Each step records itself in `run.json` only after its files are complete,
//! so a re-run continues from the last completed step; a sweep in progress
//! also checkpoints its top K and next index, so a crash loses at most one
//! checkpoint interval of screening. Everything but timings is
//! deterministic: an interrupted and resumed run ends with the same files
//! as an uninterrupted one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sieve_core::format::float;
use sieve_core::grid::{Axis, ParamSpace};
use sieve_core::indicators::IndicatorSet;
use sieve_core::metrics::Metrics;
use sieve_core::{strategy, Error, Result};
use sieve_screen::{Checkpoint, ObjectiveStats, Scored, ScreenBackend};

use crate::rundir::{AxisRecord, BestRecord, IterationRecord, RunDir, RunState};
use crate::sweep::{self, StatsMeta, SweepPlan};
use crate::{candidates, files, verify, Study};

pub struct OptimizeOptions<'a> {
    pub out: PathBuf,
    pub backend: &'a dyn ScreenBackend,
    pub threads: usize,
    /// Start over even if the folder holds a run of another config or data.
    pub restart: bool,
    /// How often a sweep in progress writes its checkpoint.
    pub checkpoint_every: Duration,
}

/// What the loop tells the user as it goes.
pub trait Observer {
    /// A step starts: `stage` is "sweep" or "verify"; `total` its units.
    fn start(&mut self, iteration: u32, stage: &str, total: u64);
    fn progress(&mut self, done: u64);
    fn finish(&mut self);
    fn note(&mut self, message: &str);
}

pub struct Outcome {
    pub state: RunState,
    pub best: serde_json::Value,
    pub dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct SweepCheckpoint {
    grid_size: u64,
    next: u64,
    stats: StatsMeta,
    /// (grid index, score as written by `format::float`, trades).
    top: Vec<(u64, String, u64)>,
}

pub fn optimize(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    obs: &mut dyn Observer,
) -> Result<Outcome> {
    let dir = RunDir::new(&opts.out)?;
    let session = Instant::now();
    let mut state = match dir.load_state()? {
        Some(s) if s.config_hash == study.config_hash && s.data_hash == study.data_hash => {
            let done = s.iterations.iter().filter(|i| i.stage == "done").count();
            obs.note(&format!(
                "resuming the run in {} ({done} iteration(s) complete)",
                opts.out.display()
            ));
            s
        }
        Some(s) if !opts.restart => {
            let what = if s.config_hash != study.config_hash {
                "config"
            } else {
                "data"
            };
            return Err(Error::Invalid(format!(
                "{} holds a run with a different {what}; use another --out, or --restart to discard it",
                opts.out.display()
            )));
        }
        existing => {
            if existing.is_some() {
                obs.note(&format!(
                    "--restart: discarding the earlier run in {}",
                    opts.out.display()
                ));
            }
            dir.clear()?;
            RunState {
                sieve_version: env!("CARGO_PKG_VERSION").to_string(),
                strategy: study.strategy.name().to_string(),
                config_hash: study.config_hash.clone(),
                data_hash: study.data_hash.clone(),
                data: study.data_label.clone(),
                data_path: study
                    .config
                    .data
                    .as_ref()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
                config: study.config.canonical_toml(),
                status: "running".into(),
                stop_reason: None,
                elapsed_s: 0.0,
                iterations: Vec::new(),
            }
        }
    };
    let elapsed_before = state.elapsed_s;
    let elapsed = |session: &Instant| elapsed_before + session.elapsed().as_secs_f64();
    let config = &study.config;
    let original = study.space.axes.clone();
    let mut best_so_far: Option<(f64, u32, u64)> = None;
    let mut stale = 0;
    let mut stop: Option<String> = None;

    for iteration in 1..=config.iterations {
        // The grid of this iteration: recorded, or built now.
        let idx = (iteration - 1) as usize;
        if idx == state.iterations.len() {
            if elapsed(&session) >= config.time_budget_s {
                stop = Some(format!("time budget of {} s reached", config.time_budget_s));
                break;
            }
            let axes = if iteration == 1 {
                Some(original.clone())
            } else {
                let prev = &state.iterations[idx - 1];
                let current = axes_of(study, &prev.grid)?;
                crate::refine::refine(study.strategy, &current, &original, &prev.refine_from)
            };
            let Some(axes) = axes else {
                stop = Some("no parameter can be refined further".into());
                break;
            };
            let space = ParamSpace::new(study.strategy, axes, study.space.constraints.clone())?;
            state.iterations.push(IterationRecord {
                iteration,
                grid: space
                    .axes
                    .iter()
                    .map(|a| AxisRecord {
                        name: a.name.clone(),
                        values: a.values.clone(),
                    })
                    .collect(),
                grid_size: space.size(),
                stage: "sweep".into(),
                combinations_evaluated: None,
                sweep_s: None,
                verify_s: None,
                candidates_verified: None,
                best: None,
                spearman: None,
                top_screen_ranks: Vec::new(),
                best_from_bottom_tenth: false,
                refine_from: Vec::new(),
            });
            state.elapsed_s = elapsed(&session);
            dir.save_state(&state)?;
        }
        let space = ParamSpace::new(
            study.strategy,
            axes_of(study, &state.iterations[idx].grid)?,
            study.space.constraints.clone(),
        )?;
        let iter_dir = dir.iter_dir(iteration)?;
        let sweep_csv = iter_dir.join("sweep.csv");
        let verified_csv = iter_dir.join("verified.csv");

        if state.iterations[idx].stage == "sweep" {
            let checkpoint_path = iter_dir.join("sweep.checkpoint.json");
            let resume = read_checkpoint(&checkpoint_path, space.size())?;
            if let Some(c) = &resume {
                obs.note(&format!(
                    "iteration {iteration}: resuming the sweep at grid index {}",
                    c.next
                ));
            }
            let iter_study = Study {
                space,
                ..study.clone()
            };
            let plan = SweepPlan {
                backend: opts.backend,
                shard: crate::shard::Shard::WHOLE,
                top: config.sweep_top,
                threads: opts.threads,
                resume,
            };
            obs.start(iteration, "sweep", iter_study.space.size());
            let mut last_write = Instant::now();
            let swept = sweep::run(&iter_study, &plan, &mut |c| {
                obs.progress(c.next);
                let out_of_time = elapsed(&session) >= config.time_budget_s;
                let unfinished = c.next < iter_study.space.size();
                if unfinished && (out_of_time || last_write.elapsed() >= opts.checkpoint_every) {
                    write_checkpoint(&checkpoint_path, iter_study.space.size(), c)?;
                    last_write = Instant::now();
                }
                if out_of_time && unfinished {
                    return Err(Error::Interrupted("time budget".into()));
                }
                Ok(())
            });
            obs.finish();
            let (screen, meta) = match swept {
                Err(Error::Interrupted(_)) => {
                    stop = Some(format!(
                        "time budget of {} s reached during iteration {iteration}'s sweep (checkpointed; it resumes if the budget is raised)",
                        config.time_budget_s
                    ));
                    state.elapsed_s = elapsed(&session);
                    dir.save_state(&state)?;
                    break;
                }
                other => other?,
            };
            sweep::write(&sweep_csv, &iter_study, &screen, &meta)?;
            let rec = &mut state.iterations[idx];
            rec.stage = "verify".into();
            rec.combinations_evaluated = Some(meta.objective_stats.combinations_evaluated);
            rec.sweep_s = Some(meta.timings.screen_s);
            state.elapsed_s = elapsed(&session);
            dir.save_state(&state)?;
            let _ = std::fs::remove_file(&checkpoint_path);
        }

        if state.iterations[idx].stage == "verify" {
            let started = Instant::now();
            let list = candidates::read(&sweep_csv, study.strategy, Some(config.verify_top))?;
            obs.start(iteration, "verify", list.len() as u64);
            let done = std::sync::atomic::AtomicU64::new(0);
            let result = verify::verify(study, list, opts.threads, &|| {
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            })?;
            obs.progress(done.into_inner());
            obs.finish();
            verify::write_csv(&verified_csv, &result)?;
            let rec = &mut state.iterations[idx];
            rec.stage = "done".into();
            rec.verify_s = Some(started.elapsed().as_secs_f64());
            rec.candidates_verified = Some(result.rows.len());
            rec.best = result.rows.first().map(|r| BestRecord {
                grid_index: r.candidate.grid_index,
                screen_rank: r.candidate.screen_rank,
                params: r.candidate.params.clone(),
                score: files::finite(r.score).or(if r.score.is_infinite() {
                    Some(f64::MAX.copysign(r.score))
                } else {
                    None
                }),
            });
            rec.spearman = files::finite(result.agreement.spearman);
            rec.top_screen_ranks = result.agreement.top_screen_ranks.clone();
            rec.best_from_bottom_tenth = result.agreement.best_from_bottom_tenth;
            rec.refine_from = result
                .rows
                .iter()
                .take(config.refine_top)
                .map(|r| r.candidate.params.clone())
                .collect();
            state.elapsed_s = elapsed(&session);
            dir.save_state(&state)?;
        }

        let rec = &state.iterations[idx];
        obs.note(&iteration_line(study, rec));
        // Stop rules, evaluated identically on a resumed run.
        let score = rec.best.as_ref().and_then(|b| b.score).unwrap_or(f64::NAN);
        // Strictly better: an equal best is no improvement.
        let improved = !score.is_nan() && best_so_far.is_none_or(|(b, _, _)| score > b);
        if improved {
            best_so_far = rec.best.as_ref().map(|b| (score, iteration, b.grid_index));
            stale = 0;
        } else {
            stale += 1;
            if stale >= 2 {
                stop =
                    Some("the best verified objective did not improve for two iterations".into());
                break;
            }
        }
        if iteration == config.iterations {
            stop = Some(format!("all {} iterations done", config.iterations));
        }
    }
    let reason = stop.unwrap_or_else(|| format!("all {} iterations done", config.iterations));
    // Later iterations recorded from an earlier, longer session are kept.
    let best = best_json(study, &state, &reason)?;
    files::write_json(&dir.best_path(), &best)?;
    state.status = "done".into();
    state.stop_reason = Some(reason);
    state.elapsed_s = elapsed(&session);
    dir.save_state(&state)?;
    Ok(Outcome {
        state,
        best,
        dir: opts.out.clone(),
    })
}

fn axes_of(study: &Study, grid: &[AxisRecord]) -> Result<Vec<Axis>> {
    grid.iter()
        .map(|a| {
            Ok(Axis {
                param: strategy::param_index(study.strategy, &a.name)?,
                name: a.name.clone(),
                values: a.values.clone(),
            })
        })
        .collect()
}

fn iteration_line(study: &Study, rec: &IterationRecord) -> String {
    match &rec.best {
        Some(b) => format!(
            "iteration {}: {} combinations screened, {} verified; best {} {} (screen rank {}); Spearman {}",
            rec.iteration,
            rec.combinations_evaluated.unwrap_or(0),
            rec.candidates_verified.unwrap_or(0),
            study.scoring.objective,
            b.score.map_or("NaN".to_string(), float),
            b.screen_rank,
            rec.spearman.map_or("NaN".to_string(), |s| format!("{s:.3}")),
        ),
        None => format!("iteration {}: no candidate passed the constraints", rec.iteration),
    }
}

fn write_checkpoint(path: &Path, grid_size: u64, c: &Checkpoint) -> Result<()> {
    let cp = SweepCheckpoint {
        grid_size,
        next: c.next,
        stats: StatsMeta::from(&c.stats),
        top: c
            .top
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
        stats: ObjectiveStats::from(&cp.stats),
    }))
}

/// `best.json`: the best verified candidate of every iteration, with every
/// window's metrics (holdout included when configured) and the agreement.
fn best_json(study: &Study, state: &RunState, reason: &str) -> Result<serde_json::Value> {
    let mut best: Option<(&IterationRecord, &BestRecord)> = None;
    for rec in &state.iterations {
        let Some(b) = &rec.best else { continue };
        let score = b.score.unwrap_or(f64::NAN);
        // Strictly better: on a tie the earlier iteration keeps the title.
        let better = match best {
            None => true,
            Some((_, cur)) => {
                let cur = cur.score.unwrap_or(f64::NAN);
                !score.is_nan() && (cur.is_nan() || score > cur)
            }
        };
        if better {
            best = Some((rec, b));
        }
    }
    let Some((rec, b)) = best else {
        return Err(Error::Invalid(
            "no iteration produced a candidate (do the constraints exclude every combination?)"
                .into(),
        ));
    };
    let indicators = IndicatorSet::build(
        &study.bars,
        strategy::indicators_for(study.strategy, &b.params),
    );
    let eval = sieve_core::evaluate::Evaluator {
        bars: &study.bars,
        strategy: study.strategy,
        indicators: &indicators,
        scoring: &study.scoring,
    };
    let all: Vec<_> = study.scoring.windows.all().collect();
    let (_, metrics) = eval.backtest_with_metrics(&b.params, &all);
    let mut windows = serde_json::Map::new();
    for (w, m) in all.iter().zip(&metrics) {
        let mut obj = serde_json::Map::new();
        obj.insert(
            "start".into(),
            sieve_core::format::time(study.bars.time[w.start]).into(),
        );
        obj.insert(
            "end".into(),
            sieve_core::format::time(study.bars.time[w.end - 1]).into(),
        );
        for (name, v) in Metrics::NAMES.iter().zip(m.values()) {
            obj.insert(name.to_string(), serde_json::json!(v));
        }
        obj.insert("objective".into(), serde_json::json!(eval.objective(m)));
        windows.insert(w.kind.to_string(), obj.into());
    }
    let params: serde_json::Map<String, serde_json::Value> = study
        .param_names()
        .iter()
        .zip(&b.params)
        .map(|(n, v)| (n.to_string(), serde_json::json!(v)))
        .collect();
    Ok(serde_json::json!({
        "strategy": study.strategy.name(),
        "objective": study.scoring.objective.name(),
        "iteration": rec.iteration,
        "grid_index": b.grid_index,
        "screen_rank": b.screen_rank,
        "params": params,
        "score": b.score,
        "windows": windows,
        "agreement": {
            "spearman": rec.spearman,
            "top_screen_ranks": rec.top_screen_ranks,
            "best_from_bottom_tenth": rec.best_from_bottom_tenth,
        },
        "iterations": state.iterations.len(),
        "stop_reason": reason,
    }))
}
