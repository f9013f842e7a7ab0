//! The run folder of `sieve optimize`:
//!
//! ```text
//! DIR/run.json                 state, rewritten atomically after each step
//! DIR/iter-NNN/sweep.csv       (+ sweep.meta.json) the screen's top K
//! DIR/iter-NNN/sweep.checkpoint.json   a sweep in progress (removed when done)
//! DIR/iter-NNN/verified.csv    the exact verification
//! DIR/best.json                the best candidate, every window's metrics
//! DIR/report.html              the report
//! DIR/.sieve.lock              held (flock) by the command running in DIR
//! ```
//!
//! Every file is written to a temporary name and renamed: at any moment each
//! is either absent or complete.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sieve_core::{Error, Result};

use crate::files;

pub struct RunDir {
    pub root: PathBuf,
    /// Iterations whose `indices.bin` this process has written or read
    /// back: the others are (re)written on the next save, so a file left
    /// by a run that was killed before naming it is never taken as this
    /// run's.
    stored: std::sync::Mutex<std::collections::HashSet<u32>>,
}

/// `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub sieve_version: String,
    pub strategy: String,
    pub config_hash: String,
    pub data_hash: String,
    pub data: String,
    /// The data file (None: the built-in synthetic series, or several
    /// instruments).
    pub data_path: Option<PathBuf>,
    /// With several instruments (`data.paths`), each one's name and file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instruments: Vec<(String, PathBuf)>,
    /// The config that ran (TOML).
    pub config: String,
    pub status: RunStatus,
    pub stop_reason: Option<String>,
    /// Seconds spent over every session of this run.
    pub elapsed_s: f64,
    #[serde(
        serialize_with = "save_iterations",
        deserialize_with = "load_iterations"
    )]
    pub iterations: Vec<IterationRecord>,
}

/// Each iteration's proposal in `iter-NNN/indices.bin`: its grid indices,
/// ascending, as little-endian u64s (8 bytes each; `run.json` says how many).
const INDICES_FILE: &str = "indices.bin";

/// What `run.json` says of its iterations' stored proposals.
#[derive(Deserialize)]
struct StoredIndices {
    iterations: Vec<StoredIteration>,
}

#[derive(Deserialize)]
struct StoredIteration {
    #[serde(default)]
    indices_in: Option<u64>,
}

/// A proposal's `count` indices from `file`, checked: ascending, distinct,
/// inside the grid.
fn read_indices(file: &Path, count: u64, grid_size: u64) -> Result<Vec<u64>> {
    let bad = |message: String| Error::Data {
        path: file.to_path_buf(),
        message,
    };
    let bytes = match std::fs::read(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad(format!(
                "missing, though run.json says it holds {count} grid indices: the run folder is damaged; --restart discards the run and starts again"
            )))
        }
        r => r.map_err(|e| Error::io(file, e))?,
    };
    if bytes.len() as u64 != 8 * count {
        return Err(bad(format!(
            "run.json says it holds {count} grid indices ({} bytes) but it has {} bytes: the run folder is damaged; --restart discards the run and starts again",
            8 * count,
            bytes.len()
        )));
    }
    let list: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if list.windows(2).any(|w| w[0] >= w[1]) || list.last().is_some_and(|&i| i >= grid_size) {
        return Err(bad(format!(
            "its grid indices are not ascending within the grid of {grid_size}: the run folder is damaged; --restart discards the run and starts again"
        )));
    }
    Ok(list)
}

/// The iterations as `run.json` holds them: a later iteration on the first
/// one's grid (every iteration of a sampled search) says `"grid_of": 1`
/// rather than repeating its axes (a run of many iterations would grow
/// with their square).
fn save_iterations<S: serde::Serializer>(
    its: &[IterationRecord],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(its.len()))?;
    for (k, it) in its.iter().enumerate() {
        let mut file = IterationFile::from(it.clone());
        // The indices live beside it (`indices.bin`): run.json stays small.
        file.indices_in = file.indices.take().map(|v| v.len() as u64);
        if k > 0 && it.grid == its[0].grid {
            file.grid = Vec::new();
            file.grid_of = Some(its[0].iteration);
        }
        seq.serialize_element(&file)?;
    }
    seq.end()
}

fn load_iterations<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<IterationRecord>, D::Error> {
    let files: Vec<IterationFile> = Vec::deserialize(d)?;
    let first = files.first().map(|f| f.grid.clone()).unwrap_or_default();
    Ok(files
        .into_iter()
        .map(|mut f| {
            if f.grid_of.take().is_some() {
                f.grid = first.clone();
            }
            IterationRecord::from(f)
        })
        .collect())
}

impl RunState {
    /// The combinations the run's iterations screened (or will: each
    /// iteration's proposal).
    pub fn evaluated(&self) -> u64 {
        self.iterations
            .iter()
            .map(|it| it.indices.as_ref().map_or(it.grid_size, |v| v.len() as u64))
            .sum()
    }
}

/// A run's status in `run.json`: `"running"` (started, or killed while
/// running), `"stopped"` (a signal or the time budget stopped it,
/// checkpointed: the same command continues it) or `"done"` (a stop rule
/// ended it; its results are final).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Stopped,
    Done,
}

/// One iteration in `run.json`: its grid, the step it stands at, and one
/// record per finished step. On disk each step's fields sit beside the
/// iteration's (null until the step is done), as `run.json` has always had
/// them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "IterationFile", from = "IterationFile")]
pub struct IterationRecord {
    pub iteration: u32,
    /// The grid: each swept parameter's values, in declaration order.
    pub grid: Vec<AxisRecord>,
    pub grid_size: u64,
    /// The grid indices the search proposed, ascending; `None`: the whole
    /// grid. Kept so that a resumed run screens exactly what was proposed.
    pub indices: Option<Vec<u64>>,
    /// Drawn near earlier bests (an evolutionary generation): its Sharpes
    /// stay out of the Deflated Sharpe's V.
    pub biased: bool,
    /// The next step to run.
    pub stage: Stage,
    /// What the sweep found, once it is done.
    pub sweep: Option<SweepRecord>,
    /// What the verification found, once it is done.
    pub verify: Option<VerifyRecord>,
}

/// The sweep step's record.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRecord {
    pub combinations_evaluated: u64,
    /// The per-period score-window Sharpe over the combinations screened.
    pub sharpe_stats: Option<crate::files::StatsMeta>,
    pub sweep_s: f64,
    /// A sampled batch's distinct indicator series (`None`: a whole grid).
    pub series: Option<u64>,
    /// Where the screen ran, if not in the controlling process.
    pub placement: Option<Placement>,
}

/// A screen sent to a cluster: where, in how many shards, and how long
/// they queued and ran (the longest of each), in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub executor: String,
    pub shards: u64,
    /// Shard jobs submitted (more than `shards` where some were retried).
    pub submissions: u64,
    /// The longest a shard waited in the queue (its job's start, on the
    /// node's clock, less its submission, on the controller's).
    pub longest_queue_s: f64,
    /// The longest a shard job ran.
    pub longest_run_s: f64,
    /// From the first submission of the shards to their parts joined.
    pub wall_s: f64,
}

/// An iteration as `run.json` holds it.
#[derive(Serialize, Deserialize)]
struct IterationFile {
    iteration: u32,
    #[serde(default)]
    grid: Vec<AxisRecord>,
    /// The iteration whose grid this one's is (its `grid` then empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    grid_of: Option<u32>,
    grid_size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    indices: Option<Vec<u64>>,
    /// How many indices the iteration's `indices.bin` holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    indices_in: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    biased: bool,
    stage: Stage,
    combinations_evaluated: Option<u64>,
    #[serde(default)]
    sharpe_stats: Option<crate::files::StatsMeta>,
    sweep_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    series: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    placement: Option<Placement>,
    verify_s: Option<f64>,
    candidates_verified: Option<usize>,
    best: Option<BestRecord>,
    spearman: Option<f64>,
    top_screen_ranks: Vec<u64>,
    best_from_bottom_tenth: bool,
    refine_from: Vec<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    argmax: Option<BestRecord>,
}

impl From<IterationRecord> for IterationFile {
    fn from(r: IterationRecord) -> Self {
        let (sweep, verify) = (r.sweep, r.verify);
        let (combinations_evaluated, sharpe_stats, sweep_s, series, placement) = match sweep {
            Some(s) => (
                Some(s.combinations_evaluated),
                s.sharpe_stats,
                Some(s.sweep_s),
                s.series,
                s.placement,
            ),
            None => (None, None, None, None, None),
        };
        let v = verify.map(|v| {
            (
                Some(v.verify_s),
                Some(v.candidates_verified),
                v.best,
                v.spearman,
                v.top_screen_ranks,
                v.best_from_bottom_tenth,
                v.refine_from,
                v.argmax,
            )
        });
        let (
            verify_s,
            candidates_verified,
            best,
            spearman,
            top_screen_ranks,
            bottom,
            refine,
            argmax,
        ) = v.unwrap_or((None, None, None, None, Vec::new(), false, Vec::new(), None));
        IterationFile {
            iteration: r.iteration,
            grid: r.grid,
            grid_of: None,
            grid_size: r.grid_size,
            indices: r.indices,
            indices_in: None,
            biased: r.biased,
            stage: r.stage,
            combinations_evaluated,
            sharpe_stats,
            sweep_s,
            series,
            placement,
            verify_s,
            candidates_verified,
            best,
            spearman,
            top_screen_ranks,
            best_from_bottom_tenth: bottom,
            refine_from: refine,
            argmax,
        }
    }
}

impl From<IterationFile> for IterationRecord {
    fn from(f: IterationFile) -> Self {
        let sweep = match (f.combinations_evaluated, f.sweep_s) {
            (Some(combinations_evaluated), Some(sweep_s)) => Some(SweepRecord {
                combinations_evaluated,
                sharpe_stats: f.sharpe_stats,
                sweep_s,
                series: f.series,
                placement: f.placement,
            }),
            _ => None,
        };
        let verify = match (f.verify_s, f.candidates_verified) {
            (Some(verify_s), Some(candidates_verified)) => Some(VerifyRecord {
                verify_s,
                candidates_verified,
                best: f.best,
                spearman: f.spearman,
                top_screen_ranks: f.top_screen_ranks,
                best_from_bottom_tenth: f.best_from_bottom_tenth,
                refine_from: f.refine_from,
                argmax: f.argmax,
            }),
            _ => None,
        };
        IterationRecord {
            iteration: f.iteration,
            grid: f.grid,
            grid_size: f.grid_size,
            indices: f.indices,
            biased: f.biased,
            stage: f.stage,
            sweep,
            verify,
        }
    }
}

/// The verify step's record.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyRecord {
    pub verify_s: f64,
    pub candidates_verified: usize,
    pub best: Option<BestRecord>,
    pub spearman: Option<f64>,
    pub top_screen_ranks: Vec<u64>,
    pub best_from_bottom_tenth: bool,
    /// Parameter sets of the best `refine_top` verified candidates (the
    /// next grid is built from them), in the selection's order.
    pub refine_from: Vec<Vec<f64>>,
    /// With `robust.select = "plateau"`: the candidate with the highest
    /// objective, beside the chosen `best`.
    pub argmax: Option<BestRecord>,
}

impl IterationRecord {
    /// The combinations this iteration screens: its proposal's indices, or
    /// its whole grid.
    pub fn batch(&self) -> Result<sieve_screen::Batch> {
        match &self.indices {
            None => Ok(sieve_screen::Batch::whole(self.grid_size)),
            Some(list) => sieve_screen::Batch::of_indices(list.clone(), self.grid_size),
        }
    }

    /// The best verified candidate, once verified.
    pub fn best(&self) -> Option<&BestRecord> {
        self.verify.as_ref().and_then(|v| v.best.as_ref())
    }
}

/// Where an iteration stands: the step to run next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Sweep,
    Verify,
    Done,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Sweep => "sweep",
            Stage::Verify => "verify",
            Stage::Done => "done",
        }
    }
}

pub use crate::files::AxisRecord;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestRecord {
    pub grid_index: u64,
    pub screen_rank: u64,
    pub params: Vec<f64>,
    /// The verified objective (None when NaN; ±∞ written as "inf"/"-inf").
    #[serde(with = "crate::files::num_option")]
    pub score: Option<f64>,
    /// With `robust.select = "plateau"`: the aggregate of its
    /// neighbourhood, what the selection ranks by (None when undefined),
    /// and how many neighbours it has.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::files::num_option"
    )]
    pub aggregate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<usize>,
}

impl BestRecord {
    /// What the selection compares: the neighbourhood's aggregate under
    /// `plateau`, else the objective.
    pub fn selection_score(&self, plateau: bool) -> Option<f64> {
        match plateau {
            true => self.aggregate,
            false => self.score,
        }
    }
}

impl RunDir {
    pub fn new(root: &Path) -> Result<RunDir> {
        std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?;
        Ok(RunDir {
            root: root.to_path_buf(),
            stored: Default::default(),
        })
    }

    pub fn state_path(&self) -> PathBuf {
        self.root.join("run.json")
    }

    pub fn iter_dir(&self, iteration: u32) -> Result<PathBuf> {
        let dir = self.root.join(format!("iter-{iteration:03}"));
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(dir)
    }

    pub fn best_path(&self) -> PathBuf {
        self.root.join("best.json")
    }

    pub fn report_path(&self) -> PathBuf {
        self.root.join("report.html")
    }

    pub fn load_state(&self) -> Result<Option<RunState>> {
        let path = self.state_path();
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let mut state: RunState = files::parse_json(&path, &text)?;
        // The proposals `run.json` names beside it (`"indices_in": n`),
        // read back; a run written before them lists its indices inline.
        let stored: StoredIndices = files::parse_json(&path, &text)?;
        for (it, s) in state.iterations.iter_mut().zip(stored.iterations) {
            if let Some(count) = s.indices_in {
                let file = self
                    .root
                    .join(format!("iter-{:03}", it.iteration))
                    .join(INDICES_FILE);
                it.indices = Some(read_indices(&file, count, it.grid_size)?);
                self.stored_set().insert(it.iteration);
            }
        }
        Ok(Some(state))
    }

    /// `run.json` alone, without the proposals stored beside it: enough to
    /// know which files a run wrote (to discard a damaged one).
    pub fn load_record(&self) -> Result<Option<RunState>> {
        let path = self.state_path();
        if !path.exists() {
            return Ok(None);
        }
        files::read_json(&path).map(Some)
    }

    fn stored_set(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<u32>> {
        self.stored.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `run.json`, each proposal's indices first in its iteration's
    /// `indices.bin` (once per process: a proposal never changes).
    pub fn save_state(&self, state: &RunState) -> Result<()> {
        for it in &state.iterations {
            if let Some(list) = &it.indices {
                if self.stored_set().contains(&it.iteration) {
                    continue;
                }
                let file = self.iter_dir(it.iteration)?.join(INDICES_FILE);
                let bytes: Vec<u8> = list.iter().flat_map(|i| i.to_le_bytes()).collect();
                sieve_core::format::write_atomic(&file, &bytes)?;
                self.stored_set().insert(it.iteration);
            }
        }
        files::write_json(&self.state_path(), state)
    }

    /// Removes what an earlier run wrote here (and nothing else).
    /// Removes what the run `state` wrote here (its files and its
    /// iterations' files, then their folders when empty) and nothing else.
    pub fn clear(&self, state: &RunState) -> Result<()> {
        let remove = |path: PathBuf| match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, e)),
            _ => Ok(()),
        };
        for it in &state.iterations {
            let dir = self.root.join(format!("iter-{:03}", it.iteration));
            for name in ITERATION_FILES {
                remove(dir.join(name))?;
            }
            // Left in place when it holds anything else.
            let _ = std::fs::remove_dir(&dir);
        }
        for name in ["best.json", "report.html", "run.json"] {
            remove(self.root.join(name))?;
        }
        Ok(())
    }

    /// Whether the folder holds nothing but what sieve puts there before a
    /// run starts (the lock, a DataFrame's `data.parquet`, a write that was
    /// cut short). Asked with the lock held, after [`check_run_folder`].
    pub fn is_empty_for_a_run(&self) -> Result<bool> {
        let entries = std::fs::read_dir(&self.root).map_err(|e| Error::io(&self.root, e))?;
        Ok(entries
            .flatten()
            .all(|e| is_claim_entry(&e.file_name().to_string_lossy())))
    }
}

/// What a run folder holds: one optimize run (`run.json`), or a walk-forward
/// (`walkforward.run.json` beside one optimize run folder per fold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Optimize,
    WalkForward,
}

impl RunKind {
    /// The file that marks a folder as this kind's, written before anything
    /// else, so that a run stopped in its first step is still recognised.
    pub fn marker(self) -> &'static str {
        match self {
            RunKind::Optimize => "run.json",
            RunKind::WalkForward => "walkforward.run.json",
        }
    }

    fn what(self) -> &'static str {
        match self {
            RunKind::Optimize => "an optimize run",
            RunKind::WalkForward => "a walk-forward",
        }
    }
}

/// Checks, before anything is written there, that `dir` may hold a run of
/// `kind`: it does not exist, is empty, holds a run of that kind, or holds
/// only what sieve itself leaves before a run's first file (its lock, a
/// DataFrame's `data.parquet`, a temporary file cut short). Anything else is
/// somebody's folder: refused, and left exactly as it was.
pub fn check_run_folder(dir: &Path, kind: RunKind) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // Missing (created later), or not a folder (refused when created).
        Err(_) => return Ok(()),
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let has = |name: &str| names.iter().any(|n| n == name);
    for other in [RunKind::Optimize, RunKind::WalkForward] {
        if other != kind && has(other.marker()) && !has(kind.marker()) {
            return Err(Error::Invalid(format!(
                "{} holds {} ({}), not {}; give --out another folder",
                dir.display(),
                other.what(),
                other.marker(),
                kind.what()
            )));
        }
    }
    if has(kind.marker()) {
        return Ok(());
    }
    // Sieve's own leftovers count only where sieve has claimed the folder.
    let claimed = has(LOCK_FILE);
    let foreign: Vec<&String> = names
        .iter()
        .filter(|n| !(claimed && is_claim_entry(n)))
        .collect();
    match foreign.as_slice() {
        [] => Ok(()),
        [first, rest @ ..] => Err(Error::Invalid(format!(
            "{} is not empty and holds no sieve run (no {}; it holds {first}{}); give --out a new or empty folder",
            dir.display(),
            kind.marker(),
            match rest.len() {
                0 => String::new(),
                n => format!(" and {n} more"),
            }
        ))),
    }
}

/// Removes the temporary files of writes that were cut short (a kill
/// between write and rename): sieve's, as the lock holder alone writes here.
pub fn remove_cut_writes(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if is_cut_write(&entry.file_name().to_string_lossy()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// An entry sieve makes in a folder it has claimed before a run's marker
/// exists: the lock, a DataFrame's bars (`data.parquet`, or `data/` with
/// several; `informative/` for informative instruments), a temporary file.
fn is_claim_entry(name: &str) -> bool {
    name == LOCK_FILE
        || name == "data.parquet"
        || name == "data"
        || name == "informative"
        || is_cut_write(name)
}

/// The files sieve writes at the top of a run folder (each under a
/// temporary name first), and its write probe.
const RUN_FOLDER_FILES: [&str; 8] = [
    "run.json",
    "best.json",
    "report.html",
    "data.parquet",
    "walkforward.run.json",
    "walkforward.csv",
    "walkforward.json",
    ".sieve-write-test",
];

/// `NAME.<pid>.tmp` for a NAME sieve writes: the temporary name of one of
/// its own files (a file of the user's that looks alike is not).
fn is_cut_write(name: &str) -> bool {
    name.strip_suffix(".tmp")
        .and_then(|stem| stem.rsplit_once('.'))
        .is_some_and(|(base, pid)| {
            RUN_FOLDER_FILES.contains(&base)
                && !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
        })
}

/// The files a run writes in each `iter-NNN` folder.
const ITERATION_FILES: [&str; 6] = [
    INDICES_FILE,
    "sweep.csv",
    "sweep.meta.json",
    "sweep.checkpoint.json",
    "verified.csv",
    "plateau.csv",
];

/// The lock file of a run folder.
pub const LOCK_FILE: &str = ".sieve.lock";

/// An exclusive lock on a run folder, held for the whole command and let go
/// when dropped (or when the process ends, however it ends). It is an
/// `flock` on its own open of `DIR/.sieve.lock`, so it excludes a second
/// process and a second thread of the same process alike. On a network file
/// system `flock` may be local to each machine (NFS before Linux 2.6.12,
/// some SMB mounts): two machines can then both hold it.
#[derive(Debug)]
pub struct RunLock {
    file: std::fs::File,
}

impl Drop for RunLock {
    /// Says no one holds it any more (emptied while still held), then lets
    /// go as the file closes. The file stays: removing it could let two
    /// runs lock two different files of the same name.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

impl RunLock {
    /// Takes the lock of `dir` (created if needed), or fails at once naming
    /// the holder.
    pub fn acquire(dir: &Path) -> Result<RunLock> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK_FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                // The holder writes its name just after taking the lock:
                // give it a moment when it has not yet.
                let mut holder = String::new();
                for _ in 0..20 {
                    holder = std::fs::read_to_string(&path).unwrap_or_default();
                    if !holder.trim().is_empty() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                return Err(Error::Invalid(format!(
                    "{} is in use by another sieve run ({}); wait for it to end, or use another folder",
                    dir.display(),
                    describe_holder(holder.trim())
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        // Who holds it, for the message of the one refused.
        use std::io::{Seek, Write};
        let me = std::thread::current();
        let holder = format!(
            "pid {} thread {}{}\n",
            std::process::id(),
            os_thread_id().unwrap_or_else(|| format!("{:?}", me.id())),
            me.name().map(|n| format!(" ({n})")).unwrap_or_default()
        );
        let written = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| file.write_all(holder.as_bytes()));
        written.map_err(|e| Error::io(&path, e))?;
        Ok(RunLock { file })
    }
}

/// The calling thread's id as the operating system (and Python's
/// `threading.get_native_id()`) knows it, where /proc tells it.
fn os_thread_id() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    let tid = link.file_name()?.to_str()?;
    tid.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| tid.to_string())
}

/// "pid 12 thread 15" as said to the one refused: the thread only
/// when it is this same process.
fn describe_holder(holder: &str) -> String {
    let mut words = holder.split_whitespace();
    let pid = match (words.next(), words.next()) {
        (Some("pid"), Some(pid)) => pid.to_string(),
        _ => return "holder unknown".to_string(),
    };
    if pid == std::process::id().to_string() {
        let thread: Vec<&str> = words.collect();
        format!("this process, pid {pid}, {}", thread.join(" "))
    } else {
        format!("pid {pid}")
    }
}

#[cfg(test)]
mod record_tests {
    use super::*;

    /// The lock excludes a second holder in the same process (another
    /// thread, or the same one), naming the holder; dropped, it is free.
    #[test]
    fn a_locked_folder_refuses_a_second_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path()).unwrap();
        // The OS's id of this thread, as `gettid` (and Python) tell it.
        let holder_tid = os_thread_id().unwrap();
        let path = dir.path().to_path_buf();
        let refused = std::thread::spawn(move || RunLock::acquire(&path).unwrap_err())
            .join()
            .unwrap()
            .to_string();
        let pid = std::process::id().to_string();
        assert!(
            refused.contains("in use by another sieve run")
                && refused.contains(&format!("this process, pid {pid}, thread {}", holder_tid)),
            "{refused}"
        );
        assert!(RunLock::acquire(dir.path()).is_err());
        drop(first);
        let again = RunLock::acquire(dir.path()).unwrap();
        drop(again);
        // Nothing says who held it once it is let go.
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert!(text.is_empty(), "{text}");
    }

    /// `run.json` of a run in progress as earlier versions wrote it (every
    /// step's fields present, null until the step is done) still reads: a
    /// run killed by an earlier version resumes.
    /// A proposal's indices go beside run.json and read back; a damaged
    /// file is an error naming it, never a different proposal.
    #[test]
    fn proposals_are_stored_beside_run_json_and_checked() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir::new(tmp.path()).unwrap();
        let it = |iteration: u32, indices: Option<Vec<u64>>| IterationRecord {
            iteration,
            grid: Vec::new(),
            grid_size: 1000,
            indices,
            biased: iteration > 1,
            stage: Stage::Sweep,
            sweep: None,
            verify: None,
        };
        let state = RunState {
            sieve_version: "x".into(),
            strategy: "s".into(),
            config_hash: "c".into(),
            data_hash: "d".into(),
            data: "synthetic".into(),
            data_path: None,
            instruments: Vec::new(),
            config: String::new(),
            status: RunStatus::Running,
            stop_reason: None,
            elapsed_s: 0.0,
            iterations: vec![
                it(1, Some(vec![3, 17, 999])),
                it(2, Some(vec![0, 4])),
                it(3, None),
            ],
        };
        dir.save_state(&state).unwrap();
        let json = std::fs::read_to_string(dir.state_path()).unwrap();
        assert!(
            json.contains("\"indices_in\": 3") && !json.contains("999"),
            "{json}"
        );
        assert_eq!(dir.load_state().unwrap().unwrap(), state);
        let file = tmp.path().join("iter-002/indices.bin");
        assert_eq!(std::fs::read(&file).unwrap().len(), 16);
        // Cut short, or out of order: refused, naming the file.
        std::fs::write(&file, 4u64.to_le_bytes()).unwrap();
        let err = dir.load_state().unwrap_err().to_string();
        assert!(
            err.contains("indices.bin") && err.contains("damaged"),
            "{err}"
        );
        let swapped: Vec<u8> = [4u64, 0].iter().flat_map(|i| i.to_le_bytes()).collect();
        std::fs::write(&file, swapped).unwrap();
        let err = dir.load_state().unwrap_err().to_string();
        assert!(err.contains("not ascending"), "{err}");
        std::fs::remove_file(&file).unwrap();
        let err = dir.load_state().unwrap_err().to_string();
        assert!(
            err.contains("indices.bin") && err.contains("missing"),
            "{err}"
        );
        // A file left by a run killed before run.json named it (same size,
        // other indices) is not taken for this run's: written anew.
        let fresh = tempfile::tempdir().unwrap();
        std::fs::create_dir(fresh.path().join("iter-002")).unwrap();
        let stale: Vec<u8> = [1u64, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
        std::fs::write(fresh.path().join("iter-002/indices.bin"), stale).unwrap();
        let other = RunDir::new(fresh.path()).unwrap();
        other.save_state(&state).unwrap();
        assert_eq!(other.load_state().unwrap().unwrap(), state);
    }

    #[test]
    fn iterations_written_with_nulls_read_back() {
        let pending = r#"{"iteration":2,"grid":[{"name":"fast","values":[2.0,4.0]}],"grid_size":2,
            "stage":"sweep","combinations_evaluated":null,"sharpe_stats":null,"sweep_s":null,
            "verify_s":null,"candidates_verified":null,"best":null,"spearman":null,
            "top_screen_ranks":[],"best_from_bottom_tenth":false,"refine_from":[]}"#;
        let rec: IterationRecord = serde_json::from_str(pending).unwrap();
        assert_eq!(
            (rec.stage, rec.sweep, rec.verify),
            (Stage::Sweep, None, None)
        );
        let swept = r#"{"iteration":2,"grid":[],"grid_size":2,"stage":"verify",
            "combinations_evaluated":2,"sharpe_stats":null,"sweep_s":0.5,
            "verify_s":null,"candidates_verified":null,"best":null,"spearman":null,
            "top_screen_ranks":[],"best_from_bottom_tenth":false,"refine_from":[]}"#;
        let rec: IterationRecord = serde_json::from_str(swept).unwrap();
        assert_eq!(
            rec.sweep,
            Some(SweepRecord {
                combinations_evaluated: 2,
                sharpe_stats: None,
                sweep_s: 0.5,
                series: None,
                placement: None,
            })
        );
        assert_eq!(rec.verify, None);
        // A finished iteration writes its fields where they always were.
        let done = r#"{"iteration":1,"grid":[],"grid_size":2,"stage":"done","combinations_evaluated":2,"sharpe_stats":null,"sweep_s":0.5,"verify_s":0.25,"candidates_verified":2,"best":{"grid_index":1,"screen_rank":1,"params":[4.0],"score":1.5},"spearman":null,"top_screen_ranks":[1,2],"best_from_bottom_tenth":false,"refine_from":[[4.0]]}"#;
        let rec: IterationRecord = serde_json::from_str(done).unwrap();
        assert_eq!(rec.best().map(|b| b.score), Some(Some(1.5)));
        assert_eq!(serde_json::to_string(&rec).unwrap(), done);
        // The status is one of the documented strings.
        for (status, text) in [
            (RunStatus::Running, "\"running\""),
            (RunStatus::Stopped, "\"stopped\""),
            (RunStatus::Done, "\"done\""),
        ] {
            assert_eq!(serde_json::to_string(&status).unwrap(), text);
        }
    }
}
