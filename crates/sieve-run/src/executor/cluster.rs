//! A screen split into shard jobs that run elsewhere — a Slurm array, a
//! Python executor — and joined here exactly ([`crate::merge::join`]). What
//! differs between clusters is a [`ShardRunner`]: how shards are started
//! and how to see which are still queued or running. The rest is here:
//! the job's folder, which shards are done (their part files), which to
//! start again, the record of every submission (`state.json`, so a
//! controller run again finds the shards it sent), progress, and the join.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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

    fn attempts(&self, shard: u64) -> usize {
        self.submissions.iter().filter(|s| s.shard == shard).count()
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
        Cluster {
            runner,
            root: run_folder.join("cluster"),
            settings,
        }
    }
}

/// Which shards have written their part (its meta last: a part with its
/// meta is complete).
fn done_shards(job: &JobDir) -> BTreeSet<u64> {
    (0..job.job.shards)
        .filter(|&k| files::meta_path(&job.part(k)).exists())
        .collect()
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
/// without a gap): their top K together and their statistics' trees
/// appended — a checkpoint a screen in this process may continue from.
fn prefix_checkpoint(job: &JobDir, batch: &Batch, done: &BTreeSet<u64>) -> Result<Checkpoint> {
    let start = batch.positions().start;
    let n = (0..job.job.shards).take_while(|k| done.contains(k)).count() as u64;
    let empty = Checkpoint {
        next: start,
        top: Vec::new(),
        stats: Default::default(),
        sharpe: Default::default(),
    };
    if n == 0 {
        return Ok(empty);
    }
    let parts = read_parts(job, 0..n)?;
    let mut top: Vec<Scored> = Vec::new();
    let (mut stats, mut sharpe): (Vec<NodeMeta>, Vec<NodeMeta>) = (Vec::new(), Vec::new());
    for (path, m) in &parts {
        let rows = merge::read_part(path, m, batch)?;
        top.extend(rows.iter().map(|r| Scored {
            index: r.grid_index,
            score: r.score,
            trades: r.trades,
        }));
        stats.extend(&m.objective_tree);
        sharpe.extend(&m.sharpe_tree);
    }
    top.sort_by(Scored::rank_cmp);
    top.truncate(job.job.top);
    let (Some(stats), Some(sharpe)) = (files::tree_of(&stats), files::tree_of(&sharpe)) else {
        return Ok(empty);
    };
    let end = Shard::new(n - 1, job.job.shards)?.range(batch.len()).end;
    Ok(Checkpoint {
        next: start + end,
        top,
        stats,
        sharpe,
    })
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
        let mut state = JobState::load(&job)?;
        let kind = self.runner.kind().to_string();
        // A shard seen ended without its part once may be a file system
        // that shows the part late: it failed when seen so twice.
        let mut missing_once: BTreeSet<u64> = BTreeSet::new();
        let mut last_said = String::new();
        let mut quiet: u32 = 0;
        let mut last_prefix = u64::MAX;
        let mut shown = Checkpoint {
            next: plan.batch.positions().start,
            top: Vec::new(),
            stats: Default::default(),
            sharpe: Default::default(),
        };
        loop {
            // Which have not ended, asked before looking for parts: a shard
            // that ends in between is then found done, never lost.
            let latest: Vec<String> = state.latest().values().map(|s| s.id.clone()).collect();
            let active = match latest.is_empty() {
                true => HashMap::new(),
                false => self.runner.active(&job, &latest)?,
            };
            let done = done_shards(&job);
            if done.len() as u64 == shards {
                break;
            }
            let prefix = (0..shards).take_while(|k| done.contains(k)).count() as u64;
            if prefix != last_prefix {
                shown = prefix_checkpoint(&job, &plan.batch, &done)?;
                last_prefix = prefix;
            }
            if let ControlFlow::Break(stop) = on_batch(&shown)? {
                return Ok(Ended::Stopped(stop));
            }
            let latest = state.latest();
            let mut start = Vec::new();
            for k in (0..shards).filter(|k| !done.contains(k)) {
                match latest.get(&k) {
                    Some(s) if active.contains_key(&s.id) => {
                        missing_once.remove(&k);
                    }
                    Some(_) if !missing_once.contains(&k) => {
                        missing_once.insert(k);
                    }
                    Some(s) => {
                        if state.attempts(k) > self.settings.retries as usize {
                            return Err(Error::Invalid(format!(
                                "shard {k}/{shards} of {} failed {} time(s) ({kind} {}): {}; the run stops here (executor.retries = {}); run it again to go on",
                                job.dir.display(),
                                state.attempts(k),
                                s.id,
                                self.runner.failure(&job, &s.id),
                                self.settings.retries
                            )));
                        }
                        note(&format!(
                            "shard {k}/{shards} ({kind} {}) ended without its part: submitted again ({})",
                            s.id,
                            self.runner.failure(&job, &s.id)
                        ));
                        missing_once.remove(&k);
                        start.push(k);
                    }
                    None => start.push(k),
                }
            }
            if !start.is_empty() {
                let ids = self.runner.submit(&job, &start)?;
                let at = unix_now();
                state
                    .submissions
                    .extend(
                        start
                            .iter()
                            .zip(ids)
                            .map(|(&shard, id)| Submission { shard, id, at }),
                    );
                state.save(&job)?;
            }
            let queued = active.values().filter(|p| **p == Phase::Queued).count();
            let running = active.values().filter(|p| **p == Phase::Running).count();
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
            let wait = (0.05 * 2f64.powi(quiet.min(20) as i32)).min(self.settings.poll_s);
            // Waits, looking at the stop request meanwhile.
            let until = Instant::now() + Duration::from_secs_f64(wait);
            while Instant::now() < until {
                if plan
                    .stop
                    .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
            }
        }
        let parts = read_parts(&job, 0..shards)?;
        let joined = merge::join(parts, &plan.batch)?;
        let stats = joined.objective_tree.ok_or_else(|| {
            Error::Invalid(format!(
                "{}: the parts keep no statistics tree; were they written by another sieve?",
                job.dir.display()
            ))
        })?;
        let screen = Screen {
            top: joined
                .rows
                .iter()
                .map(|r| Scored {
                    index: r.grid_index,
                    score: r.score,
                    trades: r.trades,
                })
                .collect(),
            stats,
            sharpe: joined.sharpe_tree.unwrap_or_default(),
        };
        let mut meta = joined.meta;
        meta.data = study.data_label().to_string();
        let placement = placement(&job, &state, &kind, began.elapsed().as_secs_f64());
        note(&format!(
            "{kind}: {shards} shards done in {:.1} s ({} submission(s); longest queue {:.1} s, longest run {:.1} s)",
            placement.wall_s, placement.submissions, placement.queued_s, placement.ran_s
        ));
        Ok(Ended::Done(Swept {
            screen,
            meta,
            placement: Some(placement),
        }))
    }
}

/// Where a screen ran and how long its shards queued and ran (from the
/// submissions and the times each shard wrote).
fn placement(job: &JobDir, state: &JobState, kind: &str, wall_s: f64) -> Placement {
    let latest = state.latest();
    let (mut queued_s, mut ran_s) = (0.0f64, 0.0f64);
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
        queued_s: queued_s.max(0.0),
        ran_s,
        wall_s,
    }
}
