//! The jobs a front end runs — sweep, optimize, walk-forward — and the
//! built-in example. The CLI and the Python package call these and nothing
//! lower for them, so the two run the same code: backend, threads, one
//! cancel token and an observer in; typed results out. The report is
//! written here, by an observer wrapped around the caller's, so the loops
//! never know of it.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sieve_core::config::{Config, EXAMPLE_STRATEGY};
use sieve_core::{Error, Result};
use sieve_screen::ScreenBackend;

pub use crate::control::Ended;
use crate::control::{Observer, OptimizeOptions, Stop};
use crate::executor::{Cluster, InProcess, ShardRunner, Slurm, SweepExecutor};
use crate::rundir::{check_run_folder, remove_cut_writes, RunKind, RunLock, Stage};
use crate::settings::ExecutorKind;
use crate::shard::Shard;
use crate::sweep::{SweepPlan, Swept};
use crate::{files, optimize, report, walkforward, Study};
use sieve_core::key;

/// The built-in example's config: what `sieve optimize` with no config and
/// `sieve.optimize(None, None, out=…)` run.
pub const EXAMPLE_CONFIG: &str = include_str!("../../../examples/activation.toml");

/// The built-in example adapted to what the user gave beside it: with
/// their data (`data_given`), windows as shares of it (unless `options`,
/// the user's own `section.key=value` overrides, set them); with another
/// `strategy`, that strategy's default grid. `overrides` (the options and
/// what the front end's flags became) are applied last. Returns the config
/// and a note that says what runs.
pub fn example_config(
    data_given: bool,
    strategy: Option<&str>,
    options: &[String],
    overrides: &[String],
) -> Result<(Config, String)> {
    let mut example: toml::Table = EXAMPLE_CONFIG
        .parse()
        .map_err(|e| Error::config("<example>", format!("{e}")))?;
    let mut note = String::from("the activation strategy on synthetic daily data");
    let given = |prefix: &str| options.iter().any(|o| o.trim_start().starts_with(prefix));
    if data_given && !given(key::SCORE_START) && !given(key::HOLDOUT_START) {
        if let Some(toml::Value::Table(score)) = example.get_mut("score") {
            score.insert("score_start".into(), "40%".into());
            score.insert("holdout_start".into(), "80%".into());
        }
        note = "windows as shares of your data: score from 40%, holdout from 80%".into();
    }
    if let Some(name) = strategy.filter(|n| *n != EXAMPLE_STRATEGY) {
        if let Some(toml::Value::Table(strategy)) = example.get_mut("strategy") {
            strategy.remove("params");
        }
        if given(key::STRATEGY_PARAMS) {
            note.push_str(&format!(
                "; {name} with the grid given by -O strategy.params.*"
            ));
        } else {
            note.push_str(&format!(
                "; {name} with its default grid (sieve strategies)"
            ));
        }
    }
    let config = Config::from_table_with_overrides(example, overrides)?;
    Ok((config, note))
}

/// Screens `shard` of the study's grid, keeping the best `top`; `note`
/// hears what the user should know first (a backend handing the screen
/// to the CPU), `progress` the combinations done so far (from the shard's
/// start). Setting `cancel` stops it after the batch in flight.
#[allow(clippy::too_many_arguments)]
pub fn sweep(
    study: &Study,
    backend: &dyn ScreenBackend,
    shard: Shard,
    top: usize,
    threads: usize,
    cancel: Option<&AtomicBool>,
    note: &mut dyn FnMut(&str),
    progress: &mut dyn FnMut(u64),
) -> Result<Ended<Swept>> {
    let start = shard.range(study.space().size()).start;
    let plan = SweepPlan {
        backend,
        batch: sieve_screen::Batch::whole(study.space().size()),
        shard,
        top,
        threads,
        resume: None,
        stop: cancel,
    };
    if let Some(why) = crate::sweep::fallback(study, &plan) {
        note(&format!("note: {why}"));
    }
    crate::sweep::run(study, &plan, &mut |c| {
        progress(c.next - start);
        Ok(match cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            true => ControlFlow::Break(Stop::Interrupted),
            false => ControlFlow::Continue(()),
        })
    })
}

/// How a front end runs a long job in a run folder: worker threads,
/// whether to discard a run of another config or data, how often a sweep
/// in progress checkpoints, and the one cancel token (set it, from a signal
/// handler or another thread, to stop at the next checkpoint).
#[derive(Clone)]
pub struct RunControl<'a> {
    pub threads: usize,
    pub restart: bool,
    pub checkpoint_every: Duration,
    pub cancel: Option<&'a AtomicBool>,
    /// Where shards go when the front end sends them itself (the Python
    /// package's `executor=`); `None`: as `[executor]` says.
    pub runner: Option<&'a dyn ShardRunner>,
    /// The `sieve` program a Slurm shard job runs (`sieve shard-job`): the
    /// CLI's own; `None` where the front end is not that program.
    pub shard_program: Option<std::path::PathBuf>,
}

/// The screening backend the study's config names (`sweep.backend`).
pub fn backend(study: &Study) -> Result<Box<dyn ScreenBackend>> {
    sieve_screen::backend_by_name(&study.settings().backend)
}

/// A run folder ready for an optimize or walk-forward: locked for as long
/// as this lives, and the study's backend opened.
pub struct PreparedRun {
    pub lock: RunLock,
    pub backend: Box<dyn ScreenBackend>,
}

/// Creates (or checks) the run folder `out`, writable, takes its lock (a
/// second run on it fails at once, naming the holder) and opens the
/// study's backend: what an optimize or walk-forward needs before it
/// starts (done apart, so a front end can say what runs before it runs).
/// Keep the result for the whole command.
pub fn prepare_run(study: &Study, out: &Path, kind: RunKind) -> Result<PreparedRun> {
    // Judged before anything is written: a refused folder keeps no trace.
    check_run_folder(out, kind)?;
    files::create_folder(out)?;
    let lock = RunLock::acquire(out)?;
    // Again with the lock held: another run may have claimed it meanwhile.
    check_run_folder(out, kind)?;
    remove_cut_writes(out);
    // Probed under the lock: a second run never sees this run's probe.
    files::check_writable_dir(out)?;
    Ok(PreparedRun {
        lock,
        backend: backend(study)?,
    })
}

/// Where the study's screens run: the front end's runner, else
/// `[executor]` (in this process, or a Slurm array).
fn executor<'a>(
    study: &Study,
    out: &Path,
    control: &RunControl<'a>,
) -> Result<Box<dyn SweepExecutor + 'a>> {
    let settings = study.settings().executor.clone();
    Ok(match (control.runner, settings.kind) {
        (Some(runner), _) => Box::new(Cluster::new(runner, out, settings)),
        (None, ExecutorKind::Local) => Box::new(InProcess),
        (None, ExecutorKind::Slurm) => {
            let program = control.shard_program.clone().ok_or_else(|| {
                Error::config(
                    "executor.kind",
                    "\"slurm\" runs each shard as `sieve shard-job`, so it is for the sieve command (on a login node); from Python, pass executor= (a Dask cluster, say) instead",
                )
            })?;
            let slurm = Slurm {
                settings: settings.clone(),
                program,
            };
            Box::new(Cluster::new(slurm, out, settings))
        }
    })
}

fn options<'a>(
    out: &Path,
    backend: &'a dyn ScreenBackend,
    executor: &'a dyn SweepExecutor,
    control: &RunControl<'a>,
) -> OptimizeOptions<'a> {
    OptimizeOptions {
        out: out.to_path_buf(),
        backend,
        executor,
        threads: control.threads,
        restart: control.restart,
        checkpoint_every: control.checkpoint_every,
        interrupt: control.cancel,
    }
}

/// Runs (or resumes) the optimize loop in the run folder `out` (see
/// [`prepare_run`]), writing the report whenever the run's results change.
pub fn optimize(
    study: &Study,
    out: &Path,
    backend: &dyn ScreenBackend,
    control: &RunControl<'_>,
    obs: &mut dyn Observer,
) -> Result<optimize::Outcome> {
    let executor = executor(study, out, control)?;
    let opts = options(out, backend, executor.as_ref(), control);
    optimize::optimize(study, &opts, &mut Reporting(obs))
}

/// Runs (or resumes) a walk-forward in `out`: each fold's run folder with
/// its report, then the walk-forward's files and report.
pub fn walkforward(
    study: &Study,
    out: &Path,
    backend: &dyn ScreenBackend,
    control: &RunControl<'_>,
    obs: &mut dyn Observer,
) -> Result<Ended<walkforward::Outcome>> {
    let executor = executor(study, out, control)?;
    let opts = options(out, backend, executor.as_ref(), control);
    let ended = walkforward::walkforward(study, &opts, &mut Reporting(obs))?;
    if let Ended::Done(outcome) = &ended {
        report::walkforward::write(study, out, outcome)?;
    }
    Ok(ended)
}

/// The caller's observer, plus the report written whenever a run's
/// results are complete.
struct Reporting<'a>(&'a mut dyn Observer);

impl Observer for Reporting<'_> {
    fn start(&mut self, iteration: u32, stage: Stage, total: u64) {
        self.0.start(iteration, stage, total);
    }

    fn progress(&mut self, done: u64) {
        self.0.progress(done);
    }

    fn finish(&mut self) {
        self.0.finish();
    }

    fn note(&mut self, message: &str) {
        self.0.note(message);
    }

    fn results(&mut self, study: &Study, dir: &Path) -> Result<()> {
        self.0.results(study, dir)?;
        report::write(study, dir, &report::HeatmapAxes::default())
    }
}
