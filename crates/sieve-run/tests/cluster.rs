//! The optimize loop with its screens sent out as shard jobs (here: threads
//! that run `sieve shard-job`'s code, one per shard) gives the run of one
//! process byte for byte; a shard that fails is submitted again, up to
//! `executor.retries`, then the run stops naming it.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use sieve_core::config::Config;
use sieve_core::Result;
use sieve_run::executor::job::{run_shard, JobDir};
use sieve_run::executor::{JobState, Phase, ShardRunner};
use sieve_run::inputs::{EXAMPLE_BARS, EXAMPLE_SEED};
use sieve_run::jobs::{self, RunControl};
use sieve_run::progress::ProgressObserver;
use sieve_run::Study;

/// Runs each shard on a thread of this process; the first attempt of each
/// job's shards in `fails` ends without its part, as a job killed would.
#[derive(Default)]
struct Threads {
    fails: HashSet<u64>,
    /// Shards left queued for ever; once shard 0's part is there, `stop`
    /// is set (on the second look after it: the loop has then shown the
    /// screen up to shard 0's end).
    hold: HashSet<u64>,
    stop: Option<Arc<AtomicBool>>,
    looks_after_part: AtomicU32,
    running: Mutex<HashMap<String, JoinHandle<()>>>,
    submitted: Mutex<Vec<(std::path::PathBuf, u64)>>,
}

impl ShardRunner for Threads {
    fn kind(&self) -> &str {
        "threads"
    }

    fn submit(&self, job: &JobDir, shards: &[u64]) -> Result<Vec<String>> {
        let mut submitted = self.submitted.lock().unwrap();
        let mut running = self.running.lock().unwrap();
        let mut ids = Vec::new();
        for &k in shards {
            let first = !submitted.contains(&(job.dir.clone(), k));
            submitted.push((job.dir.clone(), k));
            let id = format!("{k}.{}", submitted.len());
            let (path, fail) = (job.job_path(), first && self.fails.contains(&k));
            let hold = self.hold.contains(&k);
            running.insert(
                id.clone(),
                std::thread::spawn(move || {
                    if hold {
                        std::thread::sleep(Duration::from_secs(3600));
                    } else if !fail {
                        run_shard(&path, k, 1, &Default::default(), None).unwrap();
                    }
                }),
            );
            ids.push(id);
        }
        Ok(ids)
    }

    fn active(&self, job: &JobDir, ids: &[String]) -> Result<HashMap<String, Phase>> {
        if let Some(stop) = &self.stop {
            let part = job.dir.join("part-0.meta.json");
            if part.exists() && self.looks_after_part.fetch_add(1, Ordering::Relaxed) >= 1 {
                stop.store(true, Ordering::Relaxed);
            }
        }
        let running = self.running.lock().unwrap();
        Ok(ids
            .iter()
            .filter(|id| running.get(*id).is_some_and(|h| !h.is_finished()))
            .map(|id| (id.clone(), Phase::Running))
            .collect())
    }

    fn failure(&self, _: &JobDir, id: &str) -> String {
        format!("thread {id} wrote nothing")
    }

    /// Only its own submissions (an earlier runner's threads are gone).
    fn knows(&self, id: &str) -> bool {
        self.running.lock().unwrap().contains_key(id)
    }
}

const GRID: &str = "[strategy]\nname = \"sma_cross\"\nconstraints = [\"fast < slow\"]\n[strategy.params]\nfast = { start = 2, stop = 80, step = 2 }\nslow = { start = 10, stop = 400, step = 10 }\n[score]\nscore_start = \"40%\"\nholdout_start = \"80%\"\n[sweep]\ntop = 60\n[verify]\ntop = 60\n[optimize]\niterations = 2\n[executor]\nshards = 3\npoll_s = 0.05\n";

/// The study of `config` on the built-in series (what a shard job loads
/// when the config names no data).
fn study(config: &str) -> Study {
    let config = Config::parse(config).unwrap();
    let bars = sieve_core::data::synth(EXAMPLE_BARS, EXAMPLE_SEED);
    Study::new(config, bars, "synthetic".into()).unwrap()
}

fn optimize(study: &Study, out: &Path, runner: Option<&dyn ShardRunner>) -> Result<()> {
    optimize_until(study, out, runner, None)
}

/// [`optimize`], stopping when `cancel` is set (checkpoints at every look).
fn optimize_until(
    study: &Study,
    out: &Path,
    runner: Option<&dyn ShardRunner>,
    cancel: Option<&AtomicBool>,
) -> Result<()> {
    let control = RunControl {
        threads: 2,
        restart: false,
        checkpoint_every: Duration::ZERO,
        cancel,
        runner,
        shard_program: None,
    };
    let backend = jobs::backend(study)?;
    let mut quiet = ProgressObserver::new(false, false);
    jobs::optimize(study, out, backend.as_ref(), &control, &mut quiet).map(|_| ())
}

/// best.json and every verified.csv of `a` equal `b`'s.
fn assert_same_run(a: &Path, b: &Path) {
    let read = |p: &Path| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert_eq!(read(&a.join("best.json")), read(&b.join("best.json")));
    let mut n = 0;
    for entry in std::fs::read_dir(a).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("verified.csv").exists() {
            let name = dir.file_name().unwrap();
            assert_eq!(
                read(&dir.join("verified.csv")),
                read(&b.join(name).join("verified.csv")),
                "{name:?}"
            );
            n += 1;
        }
    }
    assert!(n >= 2, "{n} iteration(s): the loop was not tested");
}

/// Every job's submissions, shard by shard.
fn submissions(out: &Path) -> Vec<HashMap<u64, usize>> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(out.join("cluster")).unwrap() {
        let path = entry.unwrap().path().join("job.json");
        let state = JobState::load(&JobDir::open(&path).unwrap()).unwrap();
        let mut n = HashMap::new();
        for s in state.submissions {
            *n.entry(s.shard).or_insert(0) += 1;
        }
        all.push(n);
    }
    all
}

#[test]
fn shards_on_another_executor_give_the_local_run_and_a_failed_shard_is_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let (local, sent, retried) = (
        tmp.path().join("local"),
        tmp.path().join("sent"),
        tmp.path().join("retried"),
    );
    let s = study(GRID);
    optimize(&s, &local, None).unwrap();
    optimize(&s, &sent, Some(&Threads::default())).unwrap();
    assert_same_run(&local, &sent);
    let jobs = submissions(&sent);
    assert!(jobs.len() >= 2, "one job per iteration");
    assert!(jobs
        .iter()
        .all(|j| j.len() == 3 && j.values().all(|&n| n == 1)));

    // Shard 1's first attempt of every job writes nothing: submitted again.
    let flaky = Threads {
        fails: [1].into(),
        ..Default::default()
    };
    optimize(&s, &retried, Some(&flaky)).unwrap();
    assert_same_run(&local, &retried);
    let jobs = submissions(&retried);
    assert!(jobs.iter().all(|j| j[&1] == 2 && j[&0] == 1 && j[&2] == 1));
    let report = std::fs::read_to_string(retried.join("report.html")).unwrap();
    assert!(report.contains("(3 shards on threads, 1 resubmitted; queued"));
}

#[test]
fn a_shard_that_keeps_failing_stops_the_run_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let s = study(&GRID.replace("shards = 3", "shards = 3\nretries = 0"));
    let broken = Threads {
        fails: [2].into(),
        ..Default::default()
    };
    let e = optimize(&s, tmp.path(), Some(&broken))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("shard 2/3") && e.contains("failed 1 time") && e.contains("wrote nothing"),
        "{e}"
    );
}

#[test]
fn a_search_sent_out_gives_the_local_search() {
    let tmp = tempfile::tempdir().unwrap();
    let config = GRID.replace(
        "[optimize]\niterations = 2\n",
        "[search]\nmethod = \"evolve\"\nbatch = 700\nevaluations = 1400\n",
    );
    let s = study(&config);
    let (local, sent) = (tmp.path().join("local"), tmp.path().join("sent"));
    optimize(&s, &local, None).unwrap();
    optimize(&s, &sent, Some(&Threads::default())).unwrap();
    assert_same_run(&local, &sent);
}

/// A screen stopped while its shards were out continues where its first
/// shards had got to — in this process, or with its shards sent again by
/// another runner (which cannot follow the first one's, and submits them
/// again without counting them as failed: `retries = 0` here) — and ends
/// as the run of one process.
#[test]
fn a_screen_stopped_with_shards_out_continues_here_or_on_another_runner() {
    let tmp = tempfile::tempdir().unwrap();
    let s = study(&GRID.replace("shards = 3", "shards = 3\nretries = 0"));
    let local = tmp.path().join("local");
    optimize(&s, &local, None).unwrap();
    for (name, continue_on) in [("here", None), ("elsewhere", Some(Threads::default()))] {
        let out = tmp.path().join(name);
        let stop = Arc::new(AtomicBool::new(false));
        let held = Threads {
            hold: [1, 2].into(),
            stop: Some(stop.clone()),
            ..Default::default()
        };
        optimize_until(&s, &out, Some(&held), Some(&stop)).unwrap();
        assert!(stop.load(Ordering::Relaxed), "the run was not stopped");
        // Stopped with shard 0 screened: the checkpoint is at its end.
        let checkpoint: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.join("iter-001/sweep.checkpoint.json")).unwrap(),
        )
        .unwrap();
        assert!(checkpoint["next"].as_u64().unwrap() > 0, "{checkpoint}");
        optimize_until(
            &s,
            &out,
            continue_on.as_ref().map(|r| r as &dyn ShardRunner),
            None,
        )
        .unwrap();
        assert_same_run(&local, &out);
    }
}

/// A study reading an informative instrument (`data.informative`): its
/// shards load the same file (the job names it) and the run equals the
/// local one.
#[test]
fn shards_read_the_informative_instruments_the_config_names() {
    let tmp = tempfile::tempdir().unwrap();
    let lead = tmp.path().join("lead.csv");
    sieve_core::data::write_bars(&sieve_core::data::synth(EXAMPLE_BARS, 9), &lead).unwrap();
    let text = format!(
        "[data]\ninformative = {{ lead = \"{}\" }}\n{}",
        lead.display(),
        GRID.replace(
            "name = \"sma_cross\"",
            "name = \"lead_filter\"\nentry = \"cross_above(sma(close, fast), sma(close, slow)) and informative(\\\"lead\\\", close > sma(close, 50))\"\nexit = \"cross_below(sma(close, fast), sma(close, slow))\"",
        )
    );
    let mut config = Config::parse(&text).unwrap();
    let data = sieve_run::inputs::load_data(&mut config, None).unwrap();
    let checked = sieve_run::settings::Checked::new(config).unwrap();
    let s = Study::of_checked(checked, data.instruments, data.label).unwrap();
    let (local, sent) = (tmp.path().join("local"), tmp.path().join("sent"));
    optimize(&s, &local, None).unwrap();
    optimize(&s, &sent, Some(&Threads::default())).unwrap();
    assert_same_run(&local, &sent);
}
