//! `sieve optimize`: screen → verify → pick the best → zoom in → repeat,
//! resumable from its run folder after a crash.
//!
//! Each step records itself in `run.json` only after its files are complete,
//! so a re-run continues from the last completed step; a sweep in progress
//! also checkpoints its top K and next index, so a crash loses at most one
//! checkpoint interval of screening. Everything but timings is
//! deterministic: an interrupted and resumed run ends with the same files
//! as an uninterrupted one.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Instant;

use crate::settings::{MinImprovement, Selection};
use sieve_core::grid::{Axis, ParamSpace};
use sieve_core::{Error, Result};

use crate::best::Best;
use crate::control::Session;
pub use crate::control::{Observer, OptimizeOptions, Stop};
use crate::rundir::{AxisRecord, IterationRecord, RunDir, RunState, RunStatus, Stage};
use crate::search::{History, Next, Search};
use crate::stages::Step;
use crate::{files, Study};

pub struct Outcome {
    pub state: RunState,
    /// `best.json`'s content; `None` while no iteration has a best with a
    /// finite objective.
    pub best: Option<Best>,
    pub stop: Stop,
    pub dir: PathBuf,
}

/// Opens the run folder: resumes a run of the same config and data, or
/// starts a new one.
fn open_run(study: &Study, opts: &OptimizeOptions<'_>, obs: &mut dyn Observer) -> Result<RunState> {
    let dir = RunDir::new(&opts.out)?;
    let loaded = match dir.load_state() {
        // A damaged run (a proposal's file cut short or lost): --restart
        // discards it, whatever its config.
        Err(e @ Error::Data { .. }) if opts.restart => match dir.load_record()? {
            Some(damaged) => {
                obs.note(&format!(
                    "--restart: discarding the damaged run in {} ({e})",
                    opts.out.display()
                ));
                dir.clear(&damaged)?;
                None
            }
            None => return Err(e),
        },
        loaded => loaded?,
    };
    match loaded {
        Some(s) if s.config_hash == study.config_hash() && s.data_hash == study.data_hash() => {
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
            let what = if s.config_hash != study.config_hash() {
                "config"
            } else {
                "data"
            };
            let changed = if what == "config" {
                match study.config().changed_keys(&s.config).as_slice() {
                    [] => String::new(),
                    keys => format!(" (changed: {})", keys.join(", ")),
                }
            } else {
                String::new()
            };
            Err(Error::Invalid(format!(
                "{} holds a run with a different {what}{changed}; use another --out, or --restart to discard it (optimize.iterations, optimize.time_budget_s and search.evaluations may change freely)",
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
            match &existing {
                Some(earlier) => dir.clear(earlier)?,
                None if !dir.is_empty_for_a_run()? => {
                    return Err(Error::Invalid(format!(
                        "{} is not empty and holds no sieve run (no run.json); give --out a new or empty folder",
                        opts.out.display()
                    )))
                }
                None => {}
            }
            let state = RunState {
                sieve_version: env!("CARGO_PKG_VERSION").to_string(),
                strategy: study.strategy().name().to_string(),
                config_hash: study.config_hash().to_string(),
                data_hash: study.data_hash().to_string(),
                data: study.data_label().to_string(),
                data_path: study
                    .config()
                    .data
                    .as_ref()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
                // Several instruments' files (a portfolio's, however
                // many), by name: what the report reloads.
                instruments: match study.market().is_several() || study.market().portfolio.is_some()
                {
                    true => study
                        .market()
                        .traded()
                        .iter()
                        .map(|i| i.name.as_str())
                        .zip(&study.config().paths)
                        .map(|(n, p)| {
                            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                            (n.to_string(), p)
                        })
                        .collect(),
                    false => Vec::new(),
                },
                config: study.config().canonical_toml(),
                status: RunStatus::Running,
                stop_reason: None,
                elapsed_s: 0.0,
                iterations: Vec::new(),
            };
            // Written first: a run stopped in its first step is still a
            // run folder.
            dir.save_state(&state)?;
            Ok(state)
        }
    }
}

/// The stale stop rule: two iterations in a row whose best does not beat
/// the best so far by more than `optimize.min_improvement` end the loop. A
/// last-bit gain (the same trades, another parameter set) is no
/// improvement.
#[derive(Debug, Default)]
struct StaleRule {
    best: Option<f64>,
    stale: u32,
}

impl StaleRule {
    /// Records an iteration's best verified objective; true when the loop
    /// should stop.
    fn is_stale(&mut self, score: Option<f64>, min: &MinImprovement) -> bool {
        if score.is_some_and(|s| min.improves(s, self.best)) {
            self.best = score;
            self.stale = 0;
        } else {
            self.stale += 1;
        }
        self.stale >= 2
    }
}

pub fn optimize(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    obs: &mut dyn Observer,
) -> Result<Outcome> {
    run_loop(study, opts, crate::search::of(study)?.as_ref(), obs)
}

/// The loop, with the search that proposes each iteration's combinations.
fn run_loop(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    search: &dyn Search,
    obs: &mut dyn Observer,
) -> Result<Outcome> {
    study.space().check_satisfiable()?;
    let dir = RunDir::new(&opts.out)?;
    let mut state = open_run(study, opts, obs)?;
    let session = Session {
        started: Instant::now(),
        budget_s: study.settings().time_budget_s,
        elapsed_before: state.elapsed_s,
        interrupt: opts.interrupt,
    };
    state.status = RunStatus::Running;
    let config = study.settings();
    let original = study.space().axes.clone();
    let mut progress = StaleRule::default();

    let mut iteration = 0;
    let stop = 'iterations: loop {
        iteration += 1;
        let idx = (iteration - 1) as usize;
        // Iterations an earlier, longer session recorded are gone through
        // (never recomputed); only new ones stop at `iterations`.
        if iteration > config.iterations && idx >= state.iterations.len() && !search.budgeted() {
            break Stop::AllIterations(state.iterations.len() as u32);
        }
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
            match next_iteration(search, study, &dir, &state, &original)? {
                Some(record) => state.iterations.push(record),
                None if search.budgeted() => {
                    let n = state.evaluated();
                    break match n >= config.search.evaluations {
                        true => Stop::Evaluations(n),
                        false => Stop::SpaceScreened(n),
                    };
                }
                None => break Stop::NothingToRefine,
            }
            state.elapsed_s = session.total_elapsed();
            dir.save_state(&state)?;
        }
        let space = ParamSpace::new(
            study.strategy().params(),
            study.axes_of(&state.iterations[idx].grid)?,
            study.space().constraints.clone(),
        )?;
        let iter_study = study.with_space(space);
        let iter_dir = dir.iter_dir(iteration)?;
        let step = Step {
            study: &iter_study,
            original: &original,
            opts,
            session: &session,
            dir: &iter_dir,
            iteration,
        };
        // Whether this invocation finished the iteration.
        let mut newly_done = false;
        for stage in crate::stages::ALL {
            if state.iterations[idx].stage != stage.stage() {
                continue;
            }
            let flow = stage.run(&step, &mut state.iterations[idx], obs)?;
            state.elapsed_s = session.total_elapsed();
            dir.save_state(&state)?;
            if let ControlFlow::Break(stop) = flow {
                break 'iterations stop;
            }
            newly_done = state.iterations[idx].stage == Stage::Done;
        }
        let rec = &state.iterations[idx];
        obs.note(&iteration_line(study, rec));
        if search.budgeted() {
            obs.note(&budget_line(study, &state));
        }
        // A partial run always has both best.json and report.html.
        if newly_done {
            let progress = format!("in progress: {iteration} iteration(s) done");
            write_results(study, &dir, &state, &progress, false, obs)?;
        }
        // Stop rules, evaluated identically on a resumed run. Progress is
        // measured by what the selection compares (the neighbourhood's
        // aggregate under `plateau`).
        // (A sampled search goes on: the next batch may hold one.)
        if iteration == 1 && !search.budgeted() && rec.best().and_then(|b| b.score).is_none() {
            break Stop::NoFiniteObjective;
        }
        let plateau = config.select != Selection::Argmax;
        let selected = rec.best().and_then(|b| b.selection_score(plateau));
        if !search.budgeted() && progress.is_stale(selected, &config.min_improvement) {
            break Stop::Stale { plateau };
        }
    };
    // Later iterations recorded from an earlier, longer session are kept.
    // The final results (robustness included) are written before the run
    // says "done": a kill in between leaves a run that resumes and rewrites
    // them, never a finished run with partial results.
    state.stop_reason = Some(stop.to_string());
    state.elapsed_s = session.total_elapsed();
    dir.save_state(&state)?;
    // The robustness numbers take a second or two: once, at the end — not
    // on the way out after a signal (the run's real end computes them).
    let robust = stop != Stop::Interrupted;
    let best = write_results(study, &dir, &state, &stop.to_string(), robust, obs)?;
    state.status = match stop {
        Stop::Interrupted | Stop::TimeBudget { .. } => RunStatus::Stopped,
        _ => RunStatus::Done,
    };
    dir.save_state(&state)?;
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
    obs: &mut dyn Observer,
) -> Result<Option<Best>> {
    let Some(best) = crate::best::best_json(study, dir, state, reason, robust)? else {
        return Ok(None);
    };
    files::write_json(&dir.best_path(), &best)?;
    // What shows the results (the report) reads the state from run.json.
    dir.save_state(state)?;
    obs.results(study, &dir.root)?;
    Ok(Some(best))
}

/// The record of the next iteration: the search's next proposal, or
/// `None` when it has nothing left to try.
fn next_iteration(
    search: &dyn Search,
    study: &Study,
    dir: &RunDir,
    state: &RunState,
    original: &[Axis],
) -> Result<Option<IterationRecord>> {
    let history = History {
        study,
        original,
        iterations: &state.iterations,
        dir,
    };
    let Next::Try(proposal) = search.propose(&history)? else {
        return Ok(None);
    };
    let space = ParamSpace::new(
        study.strategy().params(),
        proposal.axes,
        study.space().constraints.clone(),
    )?;
    let grid_size = space.size();
    // Checked here, so that a record never holds a batch a screen refuses.
    let indices = match proposal.indices {
        None => None,
        Some(list) => Some(sieve_screen::sorted_indices(list, grid_size)?),
    };
    Ok(Some(IterationRecord {
        iteration: state.iterations.len() as u32 + 1,
        grid: space
            .axes
            .iter()
            .map(|a| AxisRecord {
                name: a.name.clone(),
                values: a.values.clone(),
            })
            .collect(),
        grid_size,
        indices,
        biased: proposal.biased,
        stage: Stage::Sweep,
        sweep: None,
        verify: None,
    }))
}

/// Why no combination had a finite objective, in the user's terms.
/// Why a stopped run has no best yet, for the user (the loop stopped
/// before its first iteration finished).
pub fn no_best(study: &Study, stop: &Stop) -> String {
    match stop {
        Stop::Interrupted => stop.to_string(),
        Stop::TimeBudget { .. } => format!(
            "no iteration has finished yet, so there is no best; re-run the same command to continue (the budget counts per run of the command), or raise optimize.time_budget_s (now {} s)",
            study.settings().time_budget_s
        ),
        _ => no_finite_objective(study),
    }
}

pub fn no_finite_objective(study: &Study) -> String {
    let w = study.scoring().windows.score;
    let style = sieve_core::format::TimeStyle::for_times(&study.bars().time);
    let window = format!(
        "the score window {}..{}",
        style.format(study.bars().time[w.start]),
        style.format(study.bars().time[w.end - 1])
    );
    let min = study.scoring().min_trades;
    let objective = study.scoring().objective;
    let mut message = if min > 1 {
        format!(
            "no combination had ≥ {min} trades in {window} with a finite {objective}: there is no best to report (lower score.min_trades, widen the grid, or move the windows)"
        )
    } else {
        format!(
            "no combination had a finite {objective} in {window}: there is no best to report (widen the grid, try another objective, or move the windows)"
        )
    };
    let market = study.market();
    if market.is_several() && !market.aggregation.skip_undefined {
        message.push_str(&format!(
            "; with {} instruments the {} is undefined when it is on any one of them: check each with `sieve backtest --data FILE`, or set score.aggregate_skip_undefined = true",
            market.instruments.len(),
            market.aggregation.how
        ));
    }
    message
}

/// A sampled search's progress: evaluations against the budget, and the
/// best so far as `best.json` chooses it.
fn budget_line(study: &Study, state: &RunState) -> String {
    let config = study.settings();
    let plateau = config.select != Selection::Argmax;
    let best = crate::best::best_record(state, &config.min_improvement, plateau);
    let done = state.evaluated();
    format!(
        "search: {done} of {} evaluations{}",
        config.search.evaluations.max(done),
        match best.and_then(|(rec, b)| Some((rec.iteration, b.selection_score(plateau)?))) {
            Some((k, s)) => format!(
                "; {} so far {} {} (iteration {k})",
                if plateau { "chosen" } else { "best" },
                study.scoring().objective,
                crate::text::human(s)
            ),
            None => String::new(),
        }
    )
}

fn iteration_line(study: &Study, rec: &IterationRecord) -> String {
    match (rec.best(), &rec.verify) {
        (Some(b), Some(v)) => format!(
            "iteration {}: {} combinations screened, {} verified; {} {} {}{} (screen rank {}){}",
            rec.iteration,
            rec.sweep.as_ref().map_or(0, |s| s.combinations_evaluated),
            v.candidates_verified,
            match b.neighbours {
                Some(_) => "chosen",
                None => "best",
            },
            study.scoring().objective,
            b.score.map_or("NaN".to_string(), crate::text::human),
            // Under `plateau`, what the choice was made by.
            match b.neighbours {
                Some(n) => format!(
                    ", neighbourhood {} over {n} neighbours",
                    b.aggregate.map_or("NaN".to_string(), crate::text::human)
                ),
                None => String::new(),
            },
            b.screen_rank,
            // Where the screen is exact, ranks agree by construction.
            match study.screen_is_exact() {
                true => String::new(),
                false => format!(
                    "; Spearman {}",
                    v.spearman.map_or("NaN".to_string(), |s| format!("{s:.3}"))
                ),
            },
        ),
        _ => format!(
            "iteration {}: no candidate passed the constraints",
            rec.iteration
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Proposal;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Proposes two scattered lists of the first grid's indices (every
    /// `step`-th, from a different start), then nothing.
    struct Scattered {
        step: u64,
    }

    impl Search for Scattered {
        fn propose(&self, history: &History<'_>) -> Result<Next> {
            let done = history.iterations.len() as u64;
            if done == 2 {
                return Ok(Next::Exhausted);
            }
            let size = history.study.space().size();
            // Out of order with a repeat: the record keeps them sorted, once.
            let mut list: Vec<u64> = (done..size).step_by(self.step as usize).collect();
            list.reverse();
            list.push(done);
            Ok(Next::Try(Proposal {
                axes: history.original.to_vec(),
                indices: Some(list),
                biased: false,
            }))
        }
    }

    /// Stops the run (as Ctrl-C does) when iteration `at`'s sweep starts.
    struct StopAt<'a> {
        at: Option<u32>,
        flag: &'a AtomicBool,
    }

    impl Observer for StopAt<'_> {
        fn start(&mut self, iteration: u32, stage: Stage, _: u64) {
            if Some(iteration) == self.at && stage == Stage::Sweep {
                self.flag.store(true, Ordering::Relaxed);
            }
        }
        fn progress(&mut self, _: u64) {}
        fn finish(&mut self) {}
        fn note(&mut self, _: &str) {}
    }

    /// Counts the screens the loop hands it, run in this process.
    #[derive(Default)]
    struct Counting(std::sync::atomic::AtomicU32);

    impl crate::executor::SweepExecutor for Counting {
        fn screen(
            &self,
            study: &Study,
            plan: &crate::sweep::SweepPlan<'_>,
            on_batch: &mut crate::sweep::OnBatch<'_>,
            _note: &mut dyn FnMut(&str),
        ) -> Result<crate::outcome::Ended<crate::sweep::Swept>> {
            self.0.fetch_add(1, Ordering::Relaxed);
            crate::sweep::run(study, plan, on_batch)
        }
    }

    /// The outcome, and how many screens went through the executor.
    fn run(study: &Study, out: &std::path::Path, stop_at: Option<u32>) -> (Outcome, u32) {
        run_with(study, &Scattered { step: 7 }, out, stop_at)
    }

    fn run_with(
        study: &Study,
        search: &dyn Search,
        out: &std::path::Path,
        stop_at: Option<u32>,
    ) -> (Outcome, u32) {
        let flag = AtomicBool::new(false);
        let executor = Counting::default();
        let opts = OptimizeOptions {
            out: out.to_path_buf(),
            backend: &sieve_screen::CpuBackend,
            executor: &executor,
            threads: 2,
            restart: false,
            checkpoint_every: std::time::Duration::ZERO,
            interrupt: Some(&flag),
        };
        let mut obs = StopAt {
            at: stop_at,
            flag: &flag,
        };
        let outcome = run_loop(study, &opts, search, &mut obs).unwrap();
        (outcome, executor.0.into_inner())
    }

    /// A search's proposals are what each iteration screens (no other
    /// combination reaches `sweep.csv`, every allowed one is counted), they
    /// are kept in `run.json`, every screen goes through the executor, and
    /// a run stopped at the second proposal resumes to the uninterrupted
    /// run's files.
    #[test]
    fn a_search_proposal_is_screened_recorded_and_resumed() {
        let config = sieve_core::config::Config::parse(
            "[strategy]\nname = \"sma_cross\"\nconstraints = [\"fast < slow\"]\n[strategy.params]\nfast = { start = 2, stop = 30, step = 2 }\nslow = { start = 10, stop = 100, step = 5 }\n[score]\nscore_start = \"50%\"\n[sweep]\ntop = 40\n[verify]\ntop = 10\n",
        )
        .unwrap();
        let bars = sieve_core::data::synth(1200, 5);
        let study = Study::new(config, bars, "synthetic".into()).unwrap();
        let space = study.space();
        let tmp = tempfile::tempdir().unwrap();
        let (whole, screens) = run(&study, &tmp.path().join("whole"), None);
        assert_eq!(whole.stop, Stop::NothingToRefine);
        assert_eq!(screens, 2);
        assert_eq!(whole.state.iterations.len(), 2);
        for (k, rec) in whole.state.iterations.iter().enumerate() {
            let want: Vec<u64> = (k as u64..space.size()).step_by(7).collect();
            assert_eq!(rec.indices.as_ref(), Some(&want));
            let allowed = want
                .iter()
                .filter(|&&i| space.allowed(&space.params_of(i)))
                .count() as u64;
            let sweep = rec.sweep.as_ref().unwrap();
            assert_eq!(sweep.combinations_evaluated, allowed);
            let dir = whole.dir.join(format!("iter-{:03}", k + 1));
            let rows =
                crate::candidates::read(&dir.join("sweep.csv"), study.strategy(), None).unwrap();
            assert_eq!(rows.len() as u64, allowed.min(40));
            assert!(rows.iter().all(|r| want.contains(&r.grid_index)));
        }
        let json = std::fs::read_to_string(whole.dir.join("run.json")).unwrap();
        assert!(json.contains("\"indices_in\""), "{json}");
        assert!(!json.contains("\"indices\""), "{json}");

        let cut = tmp.path().join("cut");
        let (stopped, _) = run(&study, &cut, Some(2));
        assert_eq!(stopped.stop, Stop::Interrupted);
        let (resumed, screens) = run(&study, &cut, None);
        assert_eq!(resumed.stop, Stop::NothingToRefine);
        assert_eq!(screens, 1, "only the second iteration's screen is redone");
        for name in [
            "best.json",
            "iter-001/sweep.csv",
            "iter-002/sweep.csv",
            "iter-002/verified.csv",
        ] {
            let read = |d: &std::path::Path| std::fs::read_to_string(d.join(name)).unwrap();
            let mask = |t: String| {
                t.lines()
                    .filter(|l| !l.contains("_s\""))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert_eq!(mask(read(&whole.dir)), mask(read(&cut)), "{name}");
        }
    }

    /// The evolutionary search: its generations after the first are bred
    /// (marked biased, so V is the uniform first generation's alone),
    /// never repeat a combination, and a run stopped in generation 3
    /// resumes to the uninterrupted run's files.
    #[test]
    fn an_evolutionary_run_stopped_mid_generation_resumes_identically() {
        let config = sieve_core::config::Config::parse(
            "[strategy]\nname = \"sma_cross\"\nconstraints = [\"fast < slow\"]\n[strategy.params]\nfast = { start = 2, stop = 80, step = 1 }\nslow = { start = 10, stop = 200, step = 1 }\n[score]\nscore_start = \"50%\"\n[sweep]\ntop = 60\n[verify]\ntop = 10\n[search]\nmethod = \"evolve\"\nseed = 5\nevaluations = 1600\nbatch = 400\n",
        )
        .unwrap();
        let bars = sieve_core::data::synth(1200, 5);
        let study = Study::new(config, bars, "synthetic".into()).unwrap();
        let search = crate::search::of(&study).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let (whole, _) = run_with(&study, search.as_ref(), &tmp.path().join("whole"), None);
        assert!(
            matches!(whole.stop, Stop::Evaluations(1600)),
            "{:?}",
            whole.stop
        );
        let its = &whole.state.iterations;
        assert_eq!(its.len(), 4);
        let biased: Vec<bool> = its.iter().map(|i| i.biased).collect();
        assert_eq!(biased, [false, true, true, true]);
        let mut seen = std::collections::HashSet::new();
        for it in its {
            for &i in it.indices.as_ref().unwrap() {
                assert!(seen.insert(i), "{i} screened twice");
            }
        }
        // V is the first generation's: its Sharpe variance, not the
        // pooled one.
        let best: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(whole.dir.join("best.json")).unwrap())
                .unwrap();
        let first = sieve_screen::ObjectiveStats::from(
            its[0]
                .sweep
                .as_ref()
                .unwrap()
                .sharpe_stats
                .as_ref()
                .unwrap(),
        );
        let v = best["robustness"]["dsr"]["sharpe_variance"]
            .as_f64()
            .unwrap();
        assert_eq!(v, first.variance());
        assert_eq!(best["robustness"]["dsr"]["trials"], 1600);

        let cut = tmp.path().join("cut");
        let (stopped, _) = run_with(&study, search.as_ref(), &cut, Some(3));
        assert_eq!(stopped.stop, Stop::Interrupted);
        let (resumed, screens) = run_with(&study, search.as_ref(), &cut, None);
        assert!(matches!(resumed.stop, Stop::Evaluations(1600)));
        assert_eq!(
            screens, 2,
            "generations 3 and 4 are screened after the stop"
        );
        let mask = |t: String| {
            t.lines()
                .filter(|l| !l.contains("_s\""))
                .collect::<Vec<_>>()
                .join("\n")
        };
        for name in [
            "best.json",
            "run.json",
            "iter-003/sweep.csv",
            "iter-004/verified.csv",
        ] {
            let read = |d: &std::path::Path| mask(std::fs::read_to_string(d.join(name)).unwrap());
            assert_eq!(read(&whole.dir), read(&cut), "{name}");
        }
    }

    /// Two candidates with the same trades, 1.4e-14 apart (measured on a
    /// real run): not progress by default, progress with no minimum.
    #[test]
    fn a_last_bit_gain_is_not_progress() {
        let (a, b) = (8.425876340775469, 8.425876340775483);
        let mut rule = StaleRule::default();
        let default = MinImprovement::default();
        assert!(!rule.is_stale(Some(a), &default));
        assert!(!rule.is_stale(Some(b), &default));
        assert!(rule.is_stale(Some(b + 1e-15), &default));
        let none = MinImprovement {
            absolute: 0.0,
            relative: 0.0,
        };
        let mut rule = StaleRule::default();
        for s in [a, b, b + 2e-15] {
            assert!(!rule.is_stale(Some(s), &none));
        }
        // A real gain resets the count; no finite best counts as stale.
        let mut rule = StaleRule::default();
        assert!(!rule.is_stale(Some(-2.0), &default));
        assert!(!rule.is_stale(None, &default));
        assert!(!rule.is_stale(Some(-1.9), &default));
        assert!(!rule.is_stale(Some(-1.9), &default));
        assert!(rule.is_stale(None, &default));
    }
}
