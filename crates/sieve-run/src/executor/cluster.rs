//! A screen split into shard jobs that run elsewhere — a Slurm array, a
//! Python executor — and joined here exactly ([`crate::merge::join`]). What
//! differs between clusters is a [`ShardRunner`]: how shards are started
//! and how to see which are still queued or running. The rest is here:
//! the job's folder, which shards are done (their part files), which to
//! start again, the record of every submission (`state.json`, so a
//! controller run again finds the shards it sent), progress, and the join.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sieve_core::{Error, Result};
use sieve_screen::{Batch, Checkpoint, Scored, Screen};

use super::job::{shards_for, unix_now, JobDir, ShardTimes};
use super::SweepExecutor;
use crate::files::{self, NodeMeta};
use crate::merge;
use crate::outcome::Ended;
use crate::rundir::Placement;
use crate::settings::ExecutorSettings;
use crate::shard::Shard;
use crate::sweep::{OnBatch, SweepMeta, SweepPlan, Swept};
use crate::Study;

/// Where a shard that has not ended is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Queued,
    Running,
}

/// Starts shard jobs and says which have not ended.
pub trait ShardRunner: Send + Sync {
    /// Where the shards run, as the report names it ("slurm").
    fn kind(&self) -> &str;

    /// Starts shards `shards` of the job `job` (its `job.json` in its
    /// folder); returns one id per shard, in order, by which
    /// [`ShardRunner::active`] knows it.
    fn submit(&self, job: &JobDir, shards: &[u64]) -> Result<Vec<String>>;

    /// Of the job's shards submitted as `ids`, those still queued or
    /// running; an id not returned has ended, one way or another.
    fn active(&self, job: &JobDir, ids: &[String]) -> Result<HashMap<String, Phase>>;

    /// What to say of the submission `id` of a shard that ended without
    /// writing its part (where its log is, or the error it raised).
    fn failure(&self, job: &JobDir, id: &str) -> String;

    /// Whether `id` is a submission this runner can follow (a Python
    /// executor cannot follow the calls of an earlier process: those are
    /// submitted again, not counted as failed).
    fn knows(&self, _id: &str) -> bool {
        true
    }

    /// The screen stopped before its shards were done: interrupted or out
    /// of time, or `failed` (a shard failed for good, the cluster's
    /// commands kept failing). What to drop is the runner's: a Python
    /// executor's calls not started; Slurm's queued shards only where the
    /// run failed (else they go on, and a controller run again finds them).
    fn abandon(&self, _job: &JobDir, _failed: bool) {}
}

impl<T: ShardRunner + ?Sized> ShardRunner for &T {
    fn kind(&self) -> &str {
        (**self).kind()
    }

    fn submit(&self, job: &JobDir, shards: &[u64]) -> Result<Vec<String>> {
        (**self).submit(job, shards)
    }

    fn active(&self, job: &JobDir, ids: &[String]) -> Result<HashMap<String, Phase>> {
        (**self).active(job, ids)
    }

    fn failure(&self, job: &JobDir, id: &str) -> String {
        (**self).failure(job, id)
    }

    fn knows(&self, id: &str) -> bool {
        (**self).knows(id)
    }

    fn abandon(&self, job: &JobDir, failed: bool) {
        (**self).abandon(job, failed)
    }
}

/// `state.json` of a job: every submission, oldest first.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct JobState {
    pub submissions: Vec<Submission>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Submission {
    pub shard: u64,
    pub id: String,
    /// Seconds since the Unix epoch.
    pub at: f64,
    /// Seen to end without its part.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
}

impl JobState {
    fn path(job: &JobDir) -> PathBuf {
        job.dir.join("state.json")
    }

    pub fn load(job: &JobDir) -> Result<JobState> {
        let path = JobState::path(job);
        match path.exists() {
            true => files::read_json(&path),
            false => Ok(JobState::default()),
        }
    }

    fn save(&self, job: &JobDir) -> Result<()> {
        files::write_json(&JobState::path(job), self)
    }

    /// Each shard's latest submission.
    fn latest(&self) -> BTreeMap<u64, &Submission> {
        let mut out = BTreeMap::new();
        for s in &self.submissions {
            out.insert(s.shard, s);
        }
        out
    }

    /// Failures of `shard` among the submissions `ours` (this
    /// controller's: a controller run again starts its count afresh).
    fn failures(&self, shard: u64, ours: &HashSet<String>) -> usize {
        self.submissions
            .iter()
            .filter(|s| s.shard == shard && s.failed && ours.contains(&s.id))
            .count()
    }

    fn mark_failed(&mut self, id: &str) {
        if let Some(s) = self.submissions.iter_mut().rev().find(|s| s.id == id) {
            s.failed = true;
        }
    }
}

/// Screens by sending shards to a [`ShardRunner`]; job folders go under
/// `<run folder>/cluster/`.
pub struct Cluster<R> {
    pub runner: R,
    pub root: PathBuf,
    pub settings: ExecutorSettings,
}

impl<R: ShardRunner> Cluster<R> {
    pub fn new(runner: R, run_folder: &Path, settings: ExecutorSettings) -> Self {
        // Absolute: shard jobs run in their job's folder.
        let run_folder =
            std::path::absolute(run_folder).unwrap_or_else(|_| run_folder.to_path_buf());
        Cluster {
            runner,
            root: run_folder.join("cluster"),
            settings,
        }
    }
}

/// Which shards have written their part (its meta last: a part with its
/// meta is complete). Read from a listing of the folder, which a shared
/// file system revalidates, where a cached "no such file" may linger.
fn done_shards(job: &JobDir) -> BTreeSet<u64> {
    let Ok(entries) = std::fs::read_dir(&job.dir) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let k = name
                .to_str()?
                .strip_prefix("part-")?
                .strip_suffix(".meta.json")?;
            k.parse::<u64>().ok()
        })
        .filter(|&k| k < job.job.shards)
        .collect()
}

/// A screen of nothing yet, from position `start`.
fn nothing_from(start: u64) -> Checkpoint {
    Checkpoint {
        next: start,
        top: Vec::new(),
        stats: Default::default(),
        sharpe: Default::default(),
    }
}

fn scored(rows: &[crate::files::SweepRow]) -> impl Iterator<Item = Scored> + '_ {
    rows.iter().map(|r| Scored {
        index: r.grid_index,
        score: r.score,
        trades: r.trades,
    })
}

fn read_parts(
    job: &JobDir,
    shards: impl Iterator<Item = u64>,
) -> Result<Vec<(PathBuf, SweepMeta)>> {
    shards
        .map(|k| {
            let part = job.part(k);
            merge::read_meta(&files::meta_path(&part)).map(|m| (part, m))
        })
        .collect()
}

/// The screen up to the end of the first shards that are done (0, 1, …
/// without a gap): their top K together and their statistics' nodes
/// appended — a checkpoint a screen in this process may continue from.
/// Grown part by part as shards finish (each part read once).
#[derive(Default)]
struct Prefix {
    /// Shards `0..shards` are in.
    shards: u64,
    top: Vec<Scored>,
    stats: Vec<NodeMeta>,
    sharpe: Vec<NodeMeta>,
}

impl Prefix {
    /// Takes in the shards done that follow the prefix; whether it grew.
    fn extend(&mut self, job: &JobDir, batch: &Batch, done: &BTreeSet<u64>) -> Result<bool> {
        let from = self.shards;
        while done.contains(&self.shards) {
            self.shards += 1;
        }
        for (path, m) in read_parts(job, from..self.shards)? {
            let rows = merge::read_part(&path, &m, batch)?;
            self.top.extend(scored(&rows));
            self.stats.extend(&m.objective_tree);
            self.sharpe.extend(&m.sharpe_tree);
        }
        self.top.sort_by(Scored::rank_cmp);
        self.top.truncate(job.job.top);
        Ok(self.shards > from)
    }

    /// The checkpoint at the prefix's end (`None`: nothing in it, or parts
    /// whose statistics do not join).
    fn checkpoint(&self, job: &JobDir, batch: &Batch) -> Result<Option<Checkpoint>> {
        let Some(last) = self.shards.checked_sub(1) else {
            return Ok(None);
        };
        let (Some(stats), Some(sharpe)) =
            (files::tree_of(&self.stats), files::tree_of(&self.sharpe))
        else {
            return Ok(None);
        };
        let end = Shard::new(last, job.job.shards)?.range(batch.len()).end;
        Ok(Some(Checkpoint {
            next: batch.positions().start + end,
            top: self.top.clone(),
            stats,
            sharpe,
        }))
    }
}

impl<R: ShardRunner> SweepExecutor for Cluster<R> {
    fn screen(
        &self,
        study: &Study,
        plan: &SweepPlan<'_>,
        on_batch: &mut OnBatch<'_>,
        note: &mut dyn FnMut(&str),
    ) -> Result<Ended<Swept>> {
        study.space().check_satisfiable()?;
        if plan.shard != Shard::WHOLE {
            return Err(Error::Invalid(
                "a screen sent to a cluster is split there: give it the whole batch".into(),
            ));
        }
        let began = Instant::now();
        let shards = shards_for(&plan.batch, self.settings.shards);
        let job = JobDir::create(&self.root, study, &plan.batch, plan.top, shards)?;
        let waited = self.wait(&job, plan, on_batch, note);
        match &waited {
            Ok(ControlFlow::Continue(_)) => {}
            Ok(ControlFlow::Break(_)) => self.runner.abandon(&job, false),
            Err(_) => self.runner.abandon(&job, true),
        }
        let state = match waited? {
            ControlFlow::Continue(state) => state,
            ControlFlow::Break(stop) => return Ok(Ended::Stopped(stop)),
        };
        let kind = self.runner.kind().to_string();
        let parts = read_parts(&job, 0..shards)?;
        let joined = merge::join(parts, &plan.batch)?;
        let stats = joined.objective_tree.ok_or_else(|| {
            Error::Invalid(format!(
                "{}: the parts keep no statistics tree; were they written by another sieve?",
                job.dir.display()
            ))
        })?;
        let screen = Screen {
            top: scored(&joined.rows).collect(),
            stats,
            sharpe: joined.sharpe_tree.unwrap_or_default(),
        };
        // The progress at its end: the joined screen is its checkpoint.
        let end = Checkpoint {
            next: plan.batch.positions().end,
            top: screen.top.clone(),
            stats: screen.stats.clone(),
            sharpe: screen.sharpe.clone(),
        };
        if let ControlFlow::Break(stop) = on_batch(&end)? {
            return Ok(Ended::Stopped(stop));
        }
        let mut meta = joined.meta;
        meta.data = study.data_label().to_string();
        let placement = placement(&job, &state, &kind, began.elapsed().as_secs_f64());
        note(&format!(
            "{kind}: {shards} shards done in {:.1} s ({} submission(s); longest queue {:.1} s, longest run {:.1} s)",
            placement.wall_s, placement.submissions, placement.longest_queue_s, placement.longest_run_s
        ));
        Ok(Ended::Done(Swept {
            screen,
            meta,
            placement: Some(placement),
        }))
    }
}

/// Consecutive errors of the cluster's commands (`squeue` timing out, a
/// controller restarting) borne before the run stops.
const CLUSTER_ERRORS: u32 = 5;

impl<R: ShardRunner> Cluster<R> {
    /// Submits what is missing and waits until every shard of `job` has
    /// written its part; returns the submissions, or why it stopped.
    fn wait(
        &self,
        job: &JobDir,
        plan: &SweepPlan<'_>,
        on_batch: &mut OnBatch<'_>,
        note: &mut dyn FnMut(&str),
    ) -> Result<ControlFlow<crate::outcome::Stop, JobState>> {
        let shards = job.job.shards;
        let mut state = JobState::load(job)?;
        let kind = self.runner.kind().to_string();
        // A shard seen ended without its part is failed only when it stays
        // so this long: a shared file system may show a part late.
        let grace = Duration::from_secs_f64((2.0 * self.settings.poll_s).max(2.0));
        let mut missing_since: HashMap<u64, Instant> = HashMap::new();
        let mut ours: HashSet<String> = HashSet::new();
        // What the progress shows: where this screen was resumed from
        // until the finished shards (0, 1, … without a gap) reach past it.
        let mut shown = plan
            .resume
            .clone()
            .unwrap_or_else(|| nothing_from(plan.batch.positions().start));
        let mut prefix = Prefix::default();
        let (mut last_said, mut quiet, mut errors) = (String::new(), 0u32, 0u32);
        loop {
            // Which have not ended, asked before looking for parts: a shard
            // that ends in between is then found done, never lost.
            let latest: Vec<String> = state.latest().values().map(|s| s.id.clone()).collect();
            let active = match latest.is_empty() {
                true => Ok(HashMap::new()),
                false => self.runner.active(job, &latest),
            };
            let active = match active {
                Ok(active) => active,
                Err(e) => {
                    errors += 1;
                    if errors >= CLUSTER_ERRORS {
                        return Err(e);
                    }
                    note(&format!("{kind}: {e} (trying again)"));
                    self.pause(plan, quiet);
                    continue;
                }
            };
            let done = done_shards(job);
            if done.len() as u64 == shards {
                return Ok(ControlFlow::Continue(state));
            }
            if prefix.extend(job, &plan.batch, &done)? {
                if let Some(c) = prefix.checkpoint(job, &plan.batch)? {
                    if c.next > shown.next {
                        shown = c;
                    }
                }
            }
            if let ControlFlow::Break(stop) = on_batch(&shown)? {
                return Ok(ControlFlow::Break(stop));
            }
            let latest: BTreeMap<u64, Submission> = state
                .latest()
                .into_iter()
                .map(|(k, s)| (k, s.clone()))
                .collect();
            let mut start = Vec::new();
            for k in (0..shards).filter(|k| !done.contains(k)) {
                let Some(s) = latest.get(&k) else {
                    start.push(k);
                    continue;
                };
                if active.contains_key(&s.id) {
                    missing_since.remove(&k);
                    continue;
                }
                if !self.runner.knows(&s.id) {
                    // Sent by an earlier controller, and not to be followed.
                    start.push(k);
                    continue;
                }
                let since = *missing_since.entry(k).or_insert_with(Instant::now);
                if since.elapsed() < grace || s.failed {
                    continue;
                }
                let (id, why) = (s.id.clone(), self.runner.failure(job, &s.id));
                state.mark_failed(&id);
                state.save(job)?;
                missing_since.remove(&k);
                let failures = state.failures(k, &ours);
                if failures > self.settings.retries as usize {
                    return Err(Error::Invalid(format!(
                        "shard {k}/{shards} of {} failed {failures} time(s) ({kind} {id}): {why}; the run stops here (executor.retries = {}); when the cause is fixed, the same command goes on (each run of it retries afresh)",
                        job.dir.display(),
                        self.settings.retries
                    )));
                }
                note(&format!(
                    "shard {k}/{shards} ({kind} {id}) ended without its part: submitted again ({why})"
                ));
                start.push(k);
            }
            if !start.is_empty() {
                match self.runner.submit(job, &start) {
                    Ok(ids) => {
                        let at = unix_now();
                        ours.extend(ids.iter().cloned());
                        state
                            .submissions
                            .extend(start.iter().zip(ids).map(|(&shard, id)| Submission {
                                shard,
                                id,
                                at,
                                failed: false,
                            }));
                        state.save(job)?;
                        errors = 0;
                    }
                    Err(e) => {
                        errors += 1;
                        if errors >= CLUSTER_ERRORS {
                            return Err(e);
                        }
                        note(&format!("{kind}: {e} (trying again)"));
                    }
                }
            }
            // Of the shards not done (one may end between the two looks).
            let phase_of = |phase: Phase| {
                (0..shards)
                    .filter(|k| !done.contains(k))
                    .filter_map(|k| latest.get(&k))
                    .filter(|s| active.get(&s.id) == Some(&phase))
                    .count()
            };
            let (queued, running) = (phase_of(Phase::Queued), phase_of(Phase::Running));
            let said = format!(
                "{kind}: {} of {shards} shards done, {running} running, {queued} queued{}",
                done.len(),
                match start.is_empty() {
                    true => String::new(),
                    false => format!(", {} submitted", start.len()),
                }
            );
            // Looks again soon after a change, then less and less often,
            // up to every `poll_s`: quick shards are not kept waiting.
            quiet = match said == last_said {
                true => quiet.saturating_add(1),
                false => 0,
            };
            if said != last_said {
                note(&said);
                last_said = said;
            }
            self.pause(plan, quiet);
        }
    }

    /// Waits before looking again (longer after `quiet` looks that saw no
    /// change, up to `poll_s`), returning early on a stop request.
    fn pause(&self, plan: &SweepPlan<'_>, quiet: u32) {
        let wait = (0.05 * 2f64.powi(quiet.min(20) as i32)).min(self.settings.poll_s);
        let until = Instant::now() + Duration::from_secs_f64(wait);
        while Instant::now() < until {
            if plan
                .stop
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
        }
    }
}

/// Where a screen ran and how long its shards queued and ran (from the
/// submissions and the times each shard wrote).
fn placement(job: &JobDir, state: &JobState, kind: &str, wall_s: f64) -> Placement {
    let latest = state.latest();
    let (mut queued_s, mut ran_s) = (0.0f64, 0.0f64);
    // From the first submission of the shards that wrote the parts (an
    // earlier controller's, where this one was run again).
    let first = latest.values().map(|s| s.at).fold(f64::INFINITY, f64::min);
    let wall_s = match first.is_finite() {
        true => wall_s.max(unix_now() - first),
        false => wall_s,
    };
    for k in 0..job.job.shards {
        let Ok(t) = files::read_json::<ShardTimes>(&job.times(k)) else {
            continue;
        };
        if let Some(s) = latest.get(&k) {
            queued_s = queued_s.max(t.started - s.at);
        }
        ran_s = ran_s.max(t.ended - t.started);
    }
    Placement {
        executor: kind.to_string(),
        shards: job.job.shards,
        submissions: state.submissions.len() as u64,
        longest_queue_s: queued_s.max(0.0),
        longest_run_s: ran_s,
        wall_s,
    }
}
