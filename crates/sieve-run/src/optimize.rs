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
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sieve_core::format::float;
use sieve_core::grid::{Axis, ParamSpace};
use sieve_core::{strategy, Error, Result};
use sieve_screen::{Checkpoint, ObjectiveStats, Scored, ScreenBackend};

use crate::best::{AgreementRecord, Best};
use crate::rundir::{AxisRecord, BestRecord, IterationRecord, RunDir, RunState, Stage};
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
}

/// Why the loop stopped. Every rule lives in [`optimize`]'s one loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    AllIterations(u32),
    /// The time budget ran out; `during` the sweep of that iteration.
    TimeBudget {
        seconds: f64,
        during: Option<u32>,
    },
    Stale,
    NothingToRefine,
    /// No combination of the first iteration had a finite objective.
    NoFiniteObjective,
    /// SIGINT/SIGTERM: the current step was checkpointed.
    Interrupted,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::AllIterations(n) => write!(f, "all {n} iterations done"),
            Stop::TimeBudget { seconds, during: Some(i) } => write!(
                f,
                "time budget of {} s reached during iteration {i}'s sweep (checkpointed; the same command continues it with a fresh budget)",
                float(*seconds)
            ),
            Stop::TimeBudget { seconds, during: None } => write!(
                f,
                "time budget of {} s reached (the same command continues with a fresh budget)",
                float(*seconds)
            ),
            Stop::Stale => {
                f.write_str("the best verified objective did not improve for two iterations")
            }
            Stop::NothingToRefine => f.write_str(
                "nothing can be refined further (the grid is as fine as it gets within optimize.max_combinations)",
            ),
            Stop::NoFiniteObjective => f.write_str("no combination had a finite objective"),
            Stop::Interrupted => f.write_str("interrupted; re-run the same command to resume"),
        }
    }
}

pub struct Outcome {
    pub state: RunState,
    /// `best.json`'s content; `None` while no iteration has a best with a
    /// finite objective.
    pub best: Option<Best>,
    pub stop: Stop,
    pub dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct SweepCheckpoint {
    grid_size: u64,
    next: u64,
    stats: StatsMeta,
    #[serde(default)]
    sharpe: Option<StatsMeta>,
    /// (grid index, score as written by `format::float`, trades).
    top: Vec<(u64, String, u64)>,
}

/// Opens the run folder: resumes a run of the same config and data, or
/// starts a new one.
fn open_run(study: &Study, opts: &OptimizeOptions<'_>, obs: &mut dyn Observer) -> Result<RunState> {
    let dir = RunDir::new(&opts.out)?;
    match dir.load_state()? {
        Some(s) if s.config_hash == study.config_hash && s.data_hash == study.data_hash => {
            let done = s
                .iterations
                .iter()
                .filter(|i| i.stage == Stage::Done)
                .count();
            obs.note(&format!(
                "resuming the run in {} ({done} iteration(s) complete)",
                opts.out.display()
            ));
            Ok(s)
        }
        Some(s) if !opts.restart => {
            let what = if s.config_hash != study.config_hash {
                "config"
            } else {
                "data"
            };
            Err(Error::Invalid(format!(
                "{} holds a run with a different {what}; use another --out, or --restart to discard it (optimize.iterations and optimize.time_budget_s may change freely)",
                opts.out.display()
            )))
        }
        existing => {
            if existing.is_some() {
                obs.note(&format!(
                    "--restart: discarding the earlier run in {}",
                    opts.out.display()
                ));
            }
            dir.clear()?;
            Ok(RunState {
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
            })
        }
    }
}

/// The shared clock and stop signals of one invocation.
struct Session<'a> {
    started: Instant,
    budget_s: f64,
    elapsed_before: f64,
    interrupt: Option<&'a AtomicBool>,
}

impl Session<'_> {
    /// The budget counts per invocation: a re-run gets all of it again.
    fn out_of_time(&self) -> bool {
        self.started.elapsed().as_secs_f64() >= self.budget_s
    }

    fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Seconds over every session of the run (recorded, not a stop rule).
    fn total_elapsed(&self) -> f64 {
        self.elapsed_before + self.started.elapsed().as_secs_f64()
    }
}

pub fn optimize(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    obs: &mut dyn Observer,
) -> Result<Outcome> {
    study.space.check_satisfiable()?;
    let dir = RunDir::new(&opts.out)?;
    let mut state = open_run(study, opts, obs)?;
    let session = Session {
        started: Instant::now(),
        budget_s: study.config.time_budget_s,
        elapsed_before: state.elapsed_s,
        interrupt: opts.interrupt,
    };
    state.status = "running".into();
    let config = &study.config;
    let original = study.space.axes.clone();
    let mut best_so_far: Option<f64> = None;
    let mut stale = 0;

    let mut iteration = 0;
    let stop = loop {
        iteration += 1;
        if iteration > config.iterations {
            break Stop::AllIterations(config.iterations);
        }
        let idx = (iteration - 1) as usize;
        if idx == state.iterations.len() {
            if session.interrupted() {
                break Stop::Interrupted;
            }
            // Every invocation does some work: the first iteration always
            // starts, and a sweep stops only after a batch.
            if iteration > 1 && session.out_of_time() {
                break Stop::TimeBudget {
                    seconds: config.time_budget_s,
                    during: None,
                };
            }
            match next_grid(study, &state, &original)? {
                Some(record) => state.iterations.push(record),
                None => break Stop::NothingToRefine,
            }
            state.elapsed_s = session.total_elapsed();
            dir.save_state(&state)?;
        }
        let space = ParamSpace::new(
            study.strategy,
            axes_of(study, &state.iterations[idx].grid)?,
            study.space.constraints.clone(),
        )?;
        let iter_study = Study {
            space,
            ..study.clone()
        };
        let iter_dir = dir.iter_dir(iteration)?;
        if state.iterations[idx].stage == Stage::Sweep {
            if let Some(stop) = sweep_stage(
                &iter_study,
                opts,
                &session,
                &iter_dir,
                iteration,
                &mut state.iterations[idx],
                obs,
            )? {
                state.elapsed_s = session.total_elapsed();
                dir.save_state(&state)?;
                break stop;
            }
            state.elapsed_s = session.total_elapsed();
            dir.save_state(&state)?;
        }
        let newly_done = state.iterations[idx].stage == Stage::Verify;
        if newly_done {
            verify_stage(
                study,
                opts,
                &iter_dir,
                iteration,
                &mut state.iterations[idx],
                obs,
            )?;
            state.elapsed_s = session.total_elapsed();
            dir.save_state(&state)?;
        }
        let rec = &state.iterations[idx];
        obs.note(&iteration_line(study, rec));
        // A partial run always has both best.json and report.html.
        if newly_done {
            let progress = format!("in progress: {iteration} iteration(s) done");
            write_results(study, &dir, &state, &progress, false)?;
        }
        // Stop rules, evaluated identically on a resumed run.
        let score = rec.best.as_ref().and_then(|b| b.score);
        if iteration == 1 && score.is_none() {
            break Stop::NoFiniteObjective;
        }
        // Strictly better: an equal best is no improvement.
        if score.is_some_and(|s| best_so_far.is_none_or(|b| s > b)) {
            best_so_far = score;
            stale = 0;
        } else {
            stale += 1;
            if stale >= 2 {
                break Stop::Stale;
            }
        }
    };
    // Later iterations recorded from an earlier, longer session are kept.
    state.status = match stop {
        Stop::Interrupted | Stop::TimeBudget { .. } => "stopped",
        _ => "done",
    }
    .into();
    state.stop_reason = Some(stop.to_string());
    state.elapsed_s = session.total_elapsed();
    dir.save_state(&state)?;
    // The robustness numbers take a second or two: once, at the end.
    let best = write_results(study, &dir, &state, &stop.to_string(), true)?;
    Ok(Outcome {
        state,
        best,
        stop,
        dir: opts.out.clone(),
    })
}

/// Writes `best.json` and `report.html` for the iterations done so far;
/// nothing while no iteration has a best with a finite objective.
fn write_results(
    study: &Study,
    dir: &RunDir,
    state: &RunState,
    reason: &str,
    robust: bool,
) -> Result<Option<Best>> {
    let Some(best) = best_json(study, dir, state, reason, robust)? else {
        return Ok(None);
    };
    files::write_json(&dir.best_path(), &best)?;
    // The report reads the state from run.json.
    dir.save_state(state)?;
    crate::report::write(study, &dir.root, &crate::report::HeatmapAxes::default())?;
    Ok(Some(best))
}

/// The record of the next iteration's grid: the study's grid first, then
/// the previous iteration's zoomed in; `None` when nothing can be refined.
fn next_grid(
    study: &Study,
    state: &RunState,
    original: &[Axis],
) -> Result<Option<IterationRecord>> {
    let iteration = state.iterations.len() as u32 + 1;
    let axes = match state.iterations.last() {
        None => Some(original.to_vec()),
        Some(prev) => {
            let max = study
                .config
                .max_combinations
                .unwrap_or(state.iterations[0].grid_size);
            let current = axes_of(study, &prev.grid)?;
            crate::refine::refine(study.strategy, &current, original, &prev.refine_from, max)
        }
    };
    let Some(axes) = axes else { return Ok(None) };
    let space = ParamSpace::new(study.strategy, axes, study.space.constraints.clone())?;
    Ok(Some(IterationRecord {
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
        stage: Stage::Sweep,
        combinations_evaluated: None,
        sharpe_stats: None,
        sweep_s: None,
        verify_s: None,
        candidates_verified: None,
        best: None,
        spearman: None,
        top_screen_ranks: Vec::new(),
        best_from_bottom_tenth: false,
        refine_from: Vec::new(),
    }))
}

/// Screens one iteration's grid into `sweep.csv`, checkpointing as it goes;
/// `Some(stop)` when the budget or a signal stopped it (checkpointed).
fn sweep_stage(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    session: &Session<'_>,
    iter_dir: &Path,
    iteration: u32,
    rec: &mut IterationRecord,
    obs: &mut dyn Observer,
) -> Result<Option<Stop>> {
    let size = study.space.size();
    let checkpoint_path = iter_dir.join("sweep.checkpoint.json");
    let resume = read_checkpoint(&checkpoint_path, size)?;
    if let Some(c) = &resume {
        obs.note(&format!(
            "iteration {iteration}: resuming the sweep at grid index {}",
            c.next
        ));
    }
    let plan = SweepPlan {
        backend: opts.backend,
        shard: crate::shard::Shard::WHOLE,
        top: study.config.sweep_top,
        threads: opts.threads,
        resume,
    };
    obs.start(iteration, Stage::Sweep, size);
    let mut last_write = Instant::now();
    let mut stopped: Option<Stop> = None;
    let swept = sweep::run(study, &plan, &mut |c| {
        obs.progress(c.next);
        let unfinished = c.next < size;
        let stop = if session.interrupted() {
            Some(Stop::Interrupted)
        } else if session.out_of_time() {
            Some(Stop::TimeBudget {
                seconds: study.config.time_budget_s,
                during: Some(iteration),
            })
        } else {
            None
        };
        if unfinished && (stop.is_some() || last_write.elapsed() >= opts.checkpoint_every) {
            write_checkpoint(&checkpoint_path, size, c)?;
            last_write = Instant::now();
        }
        if let (Some(stop), true) = (stop, unfinished) {
            stopped = Some(stop);
            return Err(Error::Interrupted("stop".into()));
        }
        Ok(())
    });
    obs.finish();
    let (screen, meta) = match swept {
        Err(Error::Interrupted(_)) if stopped.is_some() => return Ok(stopped),
        other => other?,
    };
    sweep::write(&iter_dir.join("sweep.csv"), study, &screen, &meta)?;
    rec.stage = Stage::Verify;
    rec.combinations_evaluated = Some(meta.objective_stats.combinations_evaluated);
    rec.sharpe_stats = meta.sharpe_stats;
    rec.sweep_s = Some(meta.timings.screen_s);
    let _ = std::fs::remove_file(&checkpoint_path);
    Ok(None)
}

/// Verifies the sweep's top candidates into `verified.csv` and records the
/// best and the candidates the next grid is built from.
fn verify_stage(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    iter_dir: &Path,
    iteration: u32,
    rec: &mut IterationRecord,
    obs: &mut dyn Observer,
) -> Result<()> {
    let config = &study.config;
    let started = Instant::now();
    let list = candidates::read(
        &iter_dir.join("sweep.csv"),
        study.strategy,
        Some(config.verify_top),
    )?;
    obs.start(iteration, Stage::Verify, list.len() as u64);
    let done = std::sync::atomic::AtomicU64::new(0);
    let result = verify::verify(study, list, opts.threads, &|| {
        done.fetch_add(1, Ordering::Relaxed);
    })?;
    obs.progress(done.into_inner());
    obs.finish();
    verify::write_csv(&iter_dir.join("verified.csv"), &result)?;
    rec.stage = Stage::Done;
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
    // Only candidates with a finite score say where the good region is.
    rec.refine_from = result
        .rows
        .iter()
        .filter(|r| r.score.is_finite())
        .take(config.refine_top)
        .map(|r| r.candidate.params.clone())
        .collect();
    Ok(())
}

/// Why no combination had a finite objective, in the user's terms.
pub fn no_finite_objective(study: &Study) -> String {
    let w = study.scoring.windows.score;
    let style = sieve_core::format::TimeStyle::for_times(&study.bars.time);
    let window = format!(
        "the score window {}..{}",
        style.format(study.bars.time[w.start]),
        style.format(study.bars.time[w.end - 1])
    );
    let min = study.scoring.min_trades;
    if min > 1 {
        format!(
            "no combination had ≥ {min} trades in {window} with a finite {}: there is no best to report (lower score.min_trades, widen the grid, or move the windows)",
            study.scoring.objective
        )
    } else {
        format!(
            "no combination had a finite {} in {window}: there is no best to report (widen the grid, try another objective, or move the windows)",
            study.scoring.objective
        )
    }
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
        sharpe: Some(StatsMeta::from(&c.sharpe)),
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
        sharpe: cp
            .sharpe
            .as_ref()
            .map(ObjectiveStats::from)
            .unwrap_or_default(),
    }))
}

/// The iteration and record of the run's best: the highest finite
/// verified objective (an earlier iteration keeps a tie).
fn best_record(state: &RunState) -> Option<(&IterationRecord, &BestRecord)> {
    let mut best: Option<(&IterationRecord, &BestRecord)> = None;
    for rec in &state.iterations {
        let Some(b) = &rec.best else { continue };
        let Some(score) = b.score else { continue };
        if best.is_none_or(|(_, cur)| cur.score.is_none_or(|c| score > c)) {
            best = Some((rec, b));
        }
    }
    best
}

/// `best.json`: the run's best with every window's metrics (holdout
/// included when configured) and the agreement; with `robust`, the
/// Deflated Sharpe and the PBO. `None` while no iteration has a best with
/// a finite objective: an undefined best is never presented.
fn best_json(
    study: &Study,
    dir: &RunDir,
    state: &RunState,
    reason: &str,
    robust: bool,
) -> Result<Option<Best>> {
    let Some((rec, b)) = best_record(state) else {
        return Ok(None);
    };
    let robustness = if robust {
        let verified = dir
            .root
            .join(format!("iter-{:03}", rec.iteration))
            .join("verified.csv");
        let mut candidates = crate::robust::finite_candidates(study, &verified)?;
        Some(crate::robust::Robustness {
            dsr: Some(crate::robust::deflated_sharpe(study, state, &b.params)),
            pbo: crate::robust::overfitting(study, &mut candidates),
        })
    } else {
        None
    };
    Ok(Some(Best {
        strategy: study.strategy.name().to_string(),
        objective: study.scoring.objective.name().to_string(),
        iteration: rec.iteration,
        grid_index: b.grid_index,
        screen_rank: b.screen_rank,
        params: study
            .param_names()
            .iter()
            .zip(&b.params)
            .map(|(n, v)| (n.to_string(), *v))
            .collect(),
        score: b.score,
        windows: crate::best::window_results(study, &b.params),
        agreement: AgreementRecord {
            spearman: rec.spearman,
            top_screen_ranks: rec.top_screen_ranks.clone(),
            best_from_bottom_tenth: rec.best_from_bottom_tenth,
        },
        iterations: state.iterations.len(),
        stop_reason: reason.to_string(),
        robustness,
    }))
}
