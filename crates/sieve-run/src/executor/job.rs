//! A screen sent to other processes: its folder, its job file
//! (`job.json`) — everything a shard job needs to rebuild the study and
//! screen its shard — and the shard job itself ([`run_shard`]), which
//! writes `part-<k>.csv` and its meta there.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use sieve_core::config::Config;
use sieve_core::grid::ParamSpace;
use sieve_core::metrics::{Window, WindowKind, Windows};
use sieve_core::rules::ExternalFunctions;
use sieve_core::{Error, Result};
use sieve_screen::{Batch, CHUNK};

use crate::files::{self, AxisRecord};
use crate::outcome::Ended;
use crate::settings::Checked;
use crate::shard::Shard;
use crate::sweep::{self, SweepPlan};
use crate::Study;

/// `job.json`: one screen of one study, split into `shards`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobFile {
    pub sieve_version: String,
    /// The config as the controller read it (`[executor]` left out: it
    /// does not change what a shard finds).
    pub config: String,
    /// The data the config names, resolved: one file, with its detail
    /// bars, or several instruments' (none: the built-in series).
    pub data: Option<PathBuf>,
    pub detail: Option<PathBuf>,
    pub paths: Vec<PathBuf>,
    pub names: Option<Vec<String>>,
    /// `data.informative`'s files by name, resolved.
    #[serde(default)]
    pub informative: Vec<(String, PathBuf)>,
    /// The bars' SHA-256: a shard refuses data that changed.
    pub data_hash: String,
    /// The study's identity (a walk-forward fold's includes its windows).
    pub identity: String,
    /// The first instrument's windows and screen window (a fold's own).
    pub windows: WindowsRecord,
    /// The grid of this screen (an optimize iteration's zoomed one).
    pub grid: Vec<AxisRecord>,
    pub grid_size: u64,
    /// A search's proposal: its grid indices in `indices.bin`.
    pub indices: Option<IndicesRecord>,
    /// The positions of the batch screened (grid indices, or places in
    /// the list of indices).
    pub positions: (u64, u64),
    pub top: usize,
    pub shards: u64,
}

/// A list batch as the job keeps it: `indices.bin` (little-endian u64)
/// and its SHA-256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndicesRecord {
    pub len: u64,
    pub sha256: String,
}

/// Bars `start..end` of each window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WindowsRecord {
    pub full: (usize, usize),
    pub score: (usize, usize),
    pub holdout: Option<(usize, usize)>,
    /// The screen window (the full or the score window).
    pub screen: (WindowKind, usize, usize),
}

impl WindowsRecord {
    fn of(study: &Study) -> WindowsRecord {
        let scoring = &study.market().instruments[0].scoring;
        let w = &scoring.windows;
        let span = |w: &Window| (w.start, w.end);
        WindowsRecord {
            full: span(&w.full),
            score: span(&w.score),
            holdout: w.holdout.as_ref().map(span),
            screen: (
                scoring.screen.kind,
                scoring.screen.start,
                scoring.screen.end,
            ),
        }
    }

    fn windows(&self) -> (Windows, Window) {
        let window = |kind, (start, end): (usize, usize)| Window { kind, start, end };
        let windows = Windows {
            full: window(WindowKind::Full, self.full),
            score: window(WindowKind::Score, self.score),
            holdout: self.holdout.map(|h| window(WindowKind::Holdout, h)),
        };
        let (kind, start, end) = self.screen;
        (windows, window(kind, (start, end)))
    }
}

/// A job's folder: `job.json`, `indices.bin`, the parts, the logs.
#[derive(Debug, Clone)]
pub struct JobDir {
    pub dir: PathBuf,
    pub job: JobFile,
}

impl JobDir {
    /// Writes (or finds) the folder of the screen of `batch` of `study`,
    /// split into `shards`, under `root`: named by the job's hash, so a
    /// controller that is run again finds the shards it sent before.
    pub fn create(
        root: &Path,
        study: &Study,
        batch: &Batch,
        top: usize,
        shards: u64,
    ) -> Result<JobDir> {
        let config = study.config();
        let mut table: toml::Table = config
            .canonical_toml()
            .parse()
            .map_err(|e| Error::Invalid(format!("the config as read does not parse: {e}")))?;
        table.remove("executor");
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let list = match batch {
            Batch::Range(_) => None,
            Batch::Indices(list, _) => Some(list.clone()),
        };
        let bytes: Option<Vec<u8>> = list
            .as_ref()
            .map(|list| list.iter().flat_map(|i| i.to_le_bytes()).collect());
        let positions = batch.positions();
        let job = JobFile {
            sieve_version: env!("CARGO_PKG_VERSION").to_string(),
            config: toml::to_string(&table)
                .map_err(|e| Error::Invalid(format!("the config does not write back: {e}")))?,
            data: config.data.as_deref().map(absolute),
            detail: config.detail.as_deref().map(absolute),
            paths: config.paths.iter().map(|p| absolute(p)).collect(),
            names: config.names.clone(),
            informative: (config.informative.iter())
                .map(|(n, p)| (n.clone(), absolute(p)))
                .collect(),
            data_hash: study.data_hash().to_string(),
            identity: study.config_hash().to_string(),
            windows: WindowsRecord::of(study),
            grid: sweep::grid_of(study),
            grid_size: study.space().size(),
            indices: list
                .as_ref()
                .zip(bytes.as_ref())
                .map(|(list, bytes)| IndicesRecord {
                    len: list.len() as u64,
                    sha256: sha256_hex(bytes),
                }),
            positions: (positions.start, positions.end),
            top,
            shards,
        };
        // Named by what decides the parts: not by data paths (the same
        // bars moved keep their hash) nor by `[executor]`.
        let mut named = job.clone();
        (named.config, named.data, named.detail, named.paths) =
            (String::new(), None, None, Vec::new());
        let text = serde_json::to_string(&named)
            .map_err(|e| Error::Invalid(format!("the job does not write: {e}")))?;
        let name = &crate::study::hash_text(&text)[..16];
        let dir = root.join(name);
        files::create_folder(&dir)?;
        if let Some(bytes) = &bytes {
            let path = dir.join("indices.bin");
            if !path.exists() {
                sieve_core::format::write_atomic(&path, bytes)?;
            }
        }
        files::write_json(&dir.join("job.json"), &job)?;
        Ok(JobDir { dir, job })
    }

    /// Reads the job in `dir` (its `job.json`).
    pub fn open(job_path: &Path) -> Result<JobDir> {
        let raw: serde_json::Value = files::read_json(job_path)?;
        let ours = env!("CARGO_PKG_VERSION");
        let version = raw.get("sieve_version").and_then(|v| v.as_str());
        if version != Some(ours) {
            return Err(Error::Invalid(format!(
                "{}: written by sieve {}, and this is sieve {ours}; run the shard jobs with the controller's sieve",
                job_path.display(),
                version.unwrap_or("(unknown)")
            )));
        }
        let job = serde_json::from_value(raw).map_err(|e| Error::Data {
            path: job_path.to_path_buf(),
            message: e.to_string(),
        })?;
        let dir = job_path.parent().unwrap_or(Path::new(".")).to_path_buf();
        Ok(JobDir { dir, job })
    }

    pub fn job_path(&self) -> PathBuf {
        self.dir.join("job.json")
    }

    /// Where shard `k` writes its top K (its meta beside it).
    pub fn part(&self, k: u64) -> PathBuf {
        self.dir.join(format!("part-{k}.csv"))
    }

    /// Where shard `k` says when it started and ended.
    pub fn times(&self, k: u64) -> PathBuf {
        self.dir.join(format!("part-{k}.times.json"))
    }

    /// The batch the job screens.
    pub fn batch(&self) -> Result<Batch> {
        let job = &self.job;
        let (start, end) = job.positions;
        let bad = |message: String| Error::Data {
            path: self.job_path(),
            message,
        };
        let Some(r) = &job.indices else {
            if start > end || end > job.grid_size {
                return Err(bad(format!(
                    "positions {start}..{end} of a grid of {}",
                    job.grid_size
                )));
            }
            return Ok(Batch::Range(start..end));
        };
        let path = self.dir.join("indices.bin");
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        if sha256_hex(&bytes) != r.sha256 || bytes.len() as u64 != r.len.saturating_mul(8) {
            return Err(Error::Data {
                path,
                message: "not the list of indices job.json describes (another SHA-256)".into(),
            });
        }
        let list: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect();
        // What a list batch holds: sorted, without repeats, in the grid.
        let sorted = list.windows(2).all(|w| w[0] < w[1]);
        if !sorted || list.last().is_some_and(|&i| i >= job.grid_size) {
            return Err(bad(
                "indices.bin is not sorted grid indices of the job's grid".into(),
            ));
        }
        if start > end || end > r.len {
            return Err(bad(format!(
                "positions {start}..{end} of a list of {}",
                r.len
            )));
        }
        Ok(Batch::Indices(list.into(), start..end))
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// How many shards a screen of `batch` is split into: at most `wanted`,
/// and no more than it has chunks (a shard's bounds fall between chunks).
pub fn shards_for(batch: &Batch, wanted: u64) -> u64 {
    wanted.min(batch.len().div_ceil(CHUNK)).max(1)
}

/// When a shard job started and ended (seconds since the Unix epoch), and
/// where: how long shards queued and ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardTimes {
    pub host: String,
    pub started: f64,
    pub ended: f64,
}

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Screens shard `k` of the job at `job_path` on `threads` threads and
/// writes its part into the job's folder (`functions`: rule functions
/// defined outside sieve, which the config may call). Returns the part's
/// path. Setting `stop` stops it, writing nothing.
pub fn run_shard(
    job_path: &Path,
    k: u64,
    threads: usize,
    functions: &ExternalFunctions,
    stop: Option<&AtomicBool>,
) -> Result<PathBuf> {
    let started = unix_now();
    let jd = JobDir::open(job_path)?;
    let job = &jd.job;
    let shard = Shard::new(k, job.shards)?;
    let mut config = Config::parse_with(&job.config, &[], functions)?;
    config.data = job.data.clone();
    config.detail = job.detail.clone();
    config.paths = job.paths.clone();
    config.names = job.names.clone();
    config.informative = job.informative.clone();
    let data = crate::inputs::load_data(&mut config, None)?;
    let study = Study::of_checked(Checked::new(config)?, data.instruments, data.label)?;
    if study.data_hash() != job.data_hash {
        return Err(Error::Invalid(format!(
            "{}: the data is not the bars the run started with (SHA-256 {} here, {} in the job); was a data file changed?",
            job_path.display(),
            &study.data_hash()[..12.min(study.data_hash().len())],
            &job.data_hash[..12.min(job.data_hash.len())]
        )));
    }
    let study = match study.market().instruments.len() {
        1 => {
            let (windows, screen) = job.windows.windows();
            study.with_windows(windows, screen, job.identity.clone())
        }
        _ if study.config_hash() == job.identity => study,
        _ => {
            return Err(Error::Invalid(format!(
                "{}: the config does not read as the run's (another identity)",
                job_path.display()
            )))
        }
    };
    let space = ParamSpace::new(
        study.strategy().params(),
        study.axes_of(&job.grid)?,
        study.space().constraints.clone(),
    )?;
    let study = study.with_space(space);
    if study.space().size() != job.grid_size {
        return Err(Error::Invalid(format!(
            "{}: the grid has {} combinations, the job says {}",
            job_path.display(),
            study.space().size(),
            job.grid_size
        )));
    }
    let backend = sieve_screen::backend_by_name(&study.settings().backend)?;
    let plan = SweepPlan {
        backend: backend.as_ref(),
        batch: jd.batch()?,
        shard,
        top: job.top,
        threads,
        resume: None,
        stop,
    };
    let swept = match sweep::run(&study, &plan, &mut |_| {
        Ok(std::ops::ControlFlow::Continue(()))
    })? {
        Ended::Done(swept) => swept,
        Ended::Stopped(stop) => return Err(Error::Interrupted(stop.to_string())),
    };
    let part = jd.part(k);
    sweep::write(&part, &study, &swept.screen, &swept.meta)?;
    let times = ShardTimes {
        host: hostname(),
        started,
        ended: unix_now(),
    };
    files::write_json(&jd.times(k), &times)?;
    Ok(part)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}
