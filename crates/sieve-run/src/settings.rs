//! The run sections: how sweeps, verification, the optimize loop, the
//! robustness numbers and walk-forward run (`[sweep]`, `[verify]`,
//! `[optimize]`, `[robust]`, `[walkforward]`), read from a checked
//! [`Config`] into [`RunSettings`], with the config module's rules: unknown
//! keys and bad values are errors naming the key. The core crate checks the
//! sections it owns; these belong to the run layer and are read here.

use serde::Deserialize;
use sieve_core::config::Config;
use sieve_core::data::parse_time;
pub use sieve_core::robust::NeighbourAggregate;
use sieve_core::{Error, Result};
use sieve_screen::SERIES_BUDGET;

/// A config whose run sections are read and checked, once: what the front
/// ends load and a [`crate::Study`] is built from, so that no later step
/// reads the sections again.
#[derive(Debug, Clone)]
pub struct Checked {
    pub config: Config,
    pub settings: RunSettings,
}

impl Checked {
    /// Reads `config`'s run sections; a typo in one is an error here.
    pub fn new(config: Config) -> Result<Checked> {
        let settings = RunSettings::of(&config)?;
        Ok(Checked { config, settings })
    }
}

impl AsRef<Config> for Checked {
    fn as_ref(&self) -> &Config {
        &self.config
    }
}

/// Checked run settings, every default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    pub sweep_top: usize,
    pub backend: String,
    /// `sweep.series_memory_mb` in bytes: the shared series' budget.
    pub series_budget: u64,
    pub verify_top: usize,
    pub iterations: u32,
    pub time_budget_s: f64,
    pub refine_top: usize,
    /// `optimize.max_combinations`; `None` = the first iteration's size.
    pub max_combinations: Option<u64>,
    /// `optimize.min_improvement` and `optimize.min_relative_improvement`.
    pub min_improvement: MinImprovement,
    /// `robust.pbo_blocks`: S of the PBO's cross-validation.
    pub pbo_blocks: usize,
    /// `robust.select` and `robust.neighbour_aggregate`: how the loop picks
    /// its best among the verified candidates.
    pub select: Selection,
    /// `[walkforward]`, when present.
    pub walkforward: Option<WalkForward>,
    /// `[search]`.
    pub search: SearchSettings,
    /// `[executor]`: where the screens run (not part of the run's
    /// identity).
    pub executor: ExecutorSettings,
}

/// How the optimize loop picks its best among an iteration's verified
/// candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Selection {
    /// The highest score-window objective (`robust.select = "argmax"`).
    #[default]
    Argmax,
    /// The highest aggregate of the candidate's objective and its axis
    /// neighbours' (`"plateau"`), aggregated as given.
    Plateau(NeighbourAggregate),
}

impl Selection {
    /// As `best.json` and the report name it: `argmax`, `plateau (mean)`.
    pub fn name(self) -> &'static str {
        match self {
            Selection::Argmax => "argmax",
            Selection::Plateau(NeighbourAggregate::Mean) => "plateau (mean)",
            Selection::Plateau(NeighbourAggregate::Min) => "plateau (min)",
        }
    }
}

/// `[walkforward]`: rolling (or anchored) train/test folds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkForward {
    pub train: Span,
    pub test: Span,
    /// Default: the test length.
    pub step: Span,
    /// Every train window starts at `start`.
    pub anchored: bool,
    /// The first train window's start (unix ms); default the first bar.
    pub start: Option<i64>,
}

/// A length of time: calendar days, weeks, months or years, or bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    Bars(u64),
    Days(u32),
    Weeks(u32),
    Months(u32),
    Years(u32),
}

impl Span {
    pub fn is_bars(self) -> bool {
        matches!(self, Span::Bars(_))
    }

    fn parse(key: &str, v: &toml::Value) -> Result<Span> {
        let bad = || {
            Error::config(
                key,
                format!("expected a length such as \"4y\", \"6m\", \"2w\", \"30d\" or a bar count such as \"1000\"; got {v}"),
            )
        };
        let text = match v {
            toml::Value::String(s) => s.trim().to_string(),
            toml::Value::Integer(i) => i.to_string(),
            _ => return Err(bad()),
        };
        let (number, unit) = match text.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => (&text[..i], Some(c.to_ascii_lowercase())),
            _ => (text.as_str(), None),
        };
        let n: u64 = number.trim().parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(Error::config(key, "must be above 0"));
        }
        let small = || u32::try_from(n).map_err(|_| bad());
        Ok(match unit {
            None => Span::Bars(n),
            Some('d') => Span::Days(small()?),
            Some('w') => Span::Weeks(small()?),
            Some('m') => Span::Months(small()?),
            Some('y') => Span::Years(small()?),
            Some(_) => return Err(bad()),
        })
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Span::Bars(n) => write!(f, "{n} bars"),
            Span::Days(n) => write!(f, "{n}d"),
            Span::Weeks(n) => write!(f, "{n}w"),
            Span::Months(n) => write!(f, "{n}m"),
            Span::Years(n) => write!(f, "{n}y"),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    #[serde(default)]
    sweep: RawSweep,
    #[serde(default)]
    verify: RawVerify,
    #[serde(default)]
    optimize: RawOptimize,
    #[serde(default)]
    robust: RawRobust,
    walkforward: Option<RawWalkForward>,
    #[serde(default)]
    search: RawSearch,
    #[serde(default)]
    executor: RawExecutor,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawExecutor {
    kind: Option<String>,
    shards: Option<u64>,
    partition: Option<String>,
    time_limit: Option<String>,
    cpus_per_task: Option<u32>,
    sbatch_options: Option<Vec<String>>,
    retries: Option<u32>,
    poll_s: Option<f64>,
}

/// Where the optimize loop's screens run (`executor.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutorKind {
    /// In this process (`"local"`).
    #[default]
    Local,
    /// As a Slurm array of shard jobs (`"slurm"`).
    Slurm,
}

/// `[executor]`, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutorSettings {
    pub kind: ExecutorKind,
    /// Shards per screen (`executor.shards`).
    pub shards: u64,
    /// `sbatch --partition` (none: the cluster's default).
    pub partition: Option<String>,
    /// `sbatch --time` of each shard job (none: the partition's default).
    pub time_limit: Option<String>,
    /// `sbatch --cpus-per-task`: also the threads each shard screens on.
    pub cpus_per_task: Option<u32>,
    /// Further `sbatch` arguments, as written (`["--account=abc"]`).
    pub sbatch_options: Vec<String>,
    /// Times a shard that failed is submitted again before the run stops.
    pub retries: u32,
    /// Seconds between looks at the queue.
    pub poll_s: f64,
}

impl Default for ExecutorSettings {
    fn default() -> Self {
        ExecutorSettings {
            kind: ExecutorKind::Local,
            shards: 4,
            partition: None,
            time_limit: None,
            cpus_per_task: None,
            sbatch_options: Vec::new(),
            retries: 2,
            poll_s: 5.0,
        }
    }
}

impl RawExecutor {
    fn check(self) -> Result<ExecutorSettings> {
        let d = ExecutorSettings::default();
        let kind = match self.kind.as_deref() {
            None | Some("local") => ExecutorKind::Local,
            Some("slurm") => ExecutorKind::Slurm,
            Some(other) => {
                return Err(Error::config(
                    "executor.kind",
                    format!("must be \"local\" or \"slurm\", got \"{other}\""),
                ))
            }
        };
        let shards = match self.shards.unwrap_or(d.shards) {
            n @ 1..=100_000 => n,
            n => {
                return Err(Error::config(
                    "executor.shards",
                    format!("must be from 1 to 100000, got {n}"),
                ))
            }
        };
        let poll_s = match self.poll_s.unwrap_or(d.poll_s) {
            s if s.is_finite() && (0.05..=3600.0).contains(&s) => s,
            s => {
                return Err(Error::config(
                    "executor.poll_s",
                    format!("must be from 0.05 to 3600 seconds, got {s}"),
                ))
            }
        };
        if self.cpus_per_task == Some(0) {
            return Err(Error::config(
                "executor.cpus_per_task",
                "must be at least 1",
            ));
        }
        let blank = |key: &str, v: Option<String>| match v {
            Some(s) if s.trim().is_empty() => Err(Error::config(key, "must not be empty")),
            v => Ok(v),
        };
        let options = self.sbatch_options.unwrap_or_default();
        // What sieve sets itself, to find its shards and their logs.
        const OURS: [&str; 12] = [
            "--array",
            "-a",
            "--output",
            "-o",
            "--job-name",
            "-J",
            "--chdir",
            "-D",
            "--wrap",
            "--parsable",
            "--clusters",
            "-M",
        ];
        if let Some(o) = options.iter().find(|o| {
            let flag = o.split('=').next().unwrap_or_default().trim();
            OURS.contains(&flag)
                || (flag.len() > 2 && OURS.contains(&&flag[..2]) && !flag.starts_with("--"))
        }) {
            return Err(Error::config(
                "executor.sbatch_options",
                format!("{o:?}: sieve sets the array, output, job name, folder and command of its shard jobs itself (it finds them by these)"),
            ));
        }
        Ok(ExecutorSettings {
            kind,
            shards,
            partition: blank("executor.partition", self.partition)?,
            time_limit: blank("executor.time_limit", self.time_limit)?,
            cpus_per_task: self.cpus_per_task,
            sbatch_options: options,
            retries: self.retries.unwrap_or(d.retries),
            poll_s,
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSearch {
    method: Option<String>,
    seed: Option<u64>,
    evaluations: Option<u64>,
    batch: Option<u64>,
}

/// How the optimize loop searches (`[search]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMethod {
    /// Every combination of the grid, then zoomed in (`"grid"`).
    #[default]
    Grid,
    /// Seeded uniform samples of the grid, `batch` per iteration, until
    /// `evaluations` (`"random"`).
    Random,
    /// A uniform first generation, then each bred from the best of the
    /// earlier ones (`"evolve"`).
    Evolve,
}

impl SearchMethod {
    /// As the config, `best.json` and the report name it.
    pub fn name(self) -> &'static str {
        match self {
            SearchMethod::Grid => "grid",
            SearchMethod::Random => "random",
            SearchMethod::Evolve => "evolve",
        }
    }
}

/// `[search]`, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSettings {
    pub method: SearchMethod,
    /// Seeds the samples (part of the run's identity).
    pub seed: u64,
    /// Combinations screened in all (not part of the run's identity: raise
    /// it to continue a run).
    pub evaluations: u64,
    /// Combinations screened per iteration.
    pub batch: u64,
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            method: SearchMethod::Grid,
            seed: 0,
            evaluations: 1_000_000,
            batch: 100_000,
        }
    }
}

/// The largest `search.batch`: the indices of a batch are kept in the
/// run's record.
const MAX_BATCH: u64 = 100_000_000;

impl RawSearch {
    fn check(self) -> Result<SearchSettings> {
        let defaults = SearchSettings::default();
        let method = match self.method.as_deref() {
            None | Some("grid") => SearchMethod::Grid,
            Some("random") => SearchMethod::Random,
            Some("evolve") => SearchMethod::Evolve,
            Some(other) => {
                return Err(Error::config(
                    "search.method",
                    format!("must be \"grid\", \"random\" or \"evolve\", got \"{other}\""),
                ))
            }
        };
        if method == SearchMethod::Grid {
            let set = [
                ("seed", self.seed.is_some()),
                ("evaluations", self.evaluations.is_some()),
                ("batch", self.batch.is_some()),
            ];
            if let Some((key, _)) = set.iter().find(|(_, s)| *s) {
                return Err(Error::config(
                    format!("search.{key}"),
                    "applies to a sampled search (search.method = \"random\" or \"evolve\"); the grid screens every combination",
                ));
            }
        }
        let at_least_one = |key: &str, v: Option<u64>, default: u64| match v {
            Some(0) => Err(Error::config(key, "must be at least 1")),
            v => Ok(v.unwrap_or(default)),
        };
        Ok(SearchSettings {
            method,
            seed: self.seed.unwrap_or(defaults.seed),
            evaluations: at_least_one(
                "search.evaluations",
                self.evaluations,
                defaults.evaluations,
            )?,
            batch: match at_least_one("search.batch", self.batch, defaults.batch)? {
                b if b > MAX_BATCH => {
                    return Err(Error::config(
                        "search.batch",
                        format!("must be at most {MAX_BATCH}, got {b}"),
                    ))
                }
                b => b,
            },
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    top: Option<usize>,
    backend: Option<String>,
    series_memory_mb: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawVerify {
    top: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOptimize {
    iterations: Option<u32>,
    time_budget_s: Option<f64>,
    refine_top: Option<usize>,
    max_combinations: Option<u64>,
    min_improvement: Option<f64>,
    min_relative_improvement: Option<f64>,
}

/// What counts as a better objective: more than the best so far by
/// max(`absolute`, `relative` × |best|), so a difference in the last bits
/// (two parameter sets with the same trades) is not an improvement. It
/// holds for objectives at or below 0 alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinImprovement {
    pub absolute: f64,
    pub relative: f64,
}

impl Default for MinImprovement {
    fn default() -> Self {
        MinImprovement {
            absolute: 1e-9,
            relative: 1e-9,
        }
    }
}

impl MinImprovement {
    /// Whether `score` improves on `best` (any finite score improves on none;
    /// anything above −∞ improves on −∞, which a plateau's aggregate can be).
    pub fn improves(&self, score: f64, best: Option<f64>) -> bool {
        match best {
            None => true,
            Some(b) if b == f64::NEG_INFINITY => score > b,
            Some(b) => score > b + self.absolute.max(self.relative * b.abs()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWalkForward {
    train: Option<toml::Value>,
    test: Option<toml::Value>,
    step: Option<toml::Value>,
    anchored: Option<bool>,
    start: Option<toml::Value>,
}

impl RawWalkForward {
    fn check(self) -> Result<WalkForward> {
        let need = |key: &str, v: Option<toml::Value>| -> Result<Span> {
            let full = format!("walkforward.{key}");
            let v =
                v.ok_or_else(|| Error::config(&full, "is required (e.g. \"4y\" or \"1000\")"))?;
            Span::parse(&full, &v)
        };
        let train = need("train", self.train)?;
        let test = need("test", self.test)?;
        let step = match self.step {
            Some(v) => Span::parse("walkforward.step", &v)?,
            None => test,
        };
        if train.is_bars() != test.is_bars() || test.is_bars() != step.is_bars() {
            return Err(Error::config(
                "walkforward",
                "train, test and step must all be calendar lengths (d, w, m, y) or all bar counts",
            ));
        }
        let start = match self.start {
            None => None,
            Some(v) => {
                let text = match v {
                    toml::Value::String(s) => s,
                    other => other.to_string(),
                };
                Some(parse_time(&text).map_err(|m| Error::config("walkforward.start", m))?)
            }
        };
        Ok(WalkForward {
            train,
            test,
            step,
            anchored: self.anchored.unwrap_or(false),
            start,
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRobust {
    pbo_blocks: Option<usize>,
    select: Option<String>,
    neighbour_aggregate: Option<String>,
}

impl RunSettings {
    /// The settings of `config` (its run sections), checked.
    pub fn of(config: &Config) -> Result<RunSettings> {
        let mut table = toml::Table::new();
        for key in [
            "sweep",
            "verify",
            "optimize",
            "robust",
            "walkforward",
            "search",
            "executor",
        ] {
            if let Some(v) = config.source.get(key) {
                table.insert(key.to_string(), v.clone());
            }
        }
        let raw: RawSettings = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| {
                let key = e.path().to_string();
                Error::config(key, e.into_inner().message().to_string())
            })?;
        let positive = |key: &str, v: Option<usize>, default: usize| -> Result<usize> {
            match v.unwrap_or(default) {
                0 => Err(Error::config(key, "must be at least 1")),
                n => Ok(n),
            }
        };
        let backend = raw.sweep.backend.unwrap_or_else(|| "cpu".to_string());
        if backend != "cpu" && backend != "gpu" {
            return Err(Error::config(
                "sweep.backend",
                format!("must be \"cpu\" or \"gpu\", got \"{backend}\""),
            ));
        }
        let o = raw.optimize;
        let time_budget_s = o.time_budget_s.unwrap_or(900.0);
        if time_budget_s.is_nan() || time_budget_s <= 0.0 {
            return Err(Error::config("optimize.time_budget_s", "must be above 0"));
        }

        let at_least_zero = |key: &str, v: Option<f64>, default: f64| match v.unwrap_or(default) {
            v if v.is_finite() && v >= 0.0 => Ok(v),
            v => Err(Error::config(key, format!("must be a number ≥ 0, got {v}"))),
        };
        let defaults = MinImprovement::default();
        let min_improvement = MinImprovement {
            absolute: at_least_zero(
                "optimize.min_improvement",
                o.min_improvement,
                defaults.absolute,
            )?,
            relative: at_least_zero(
                "optimize.min_relative_improvement",
                o.min_relative_improvement,
                defaults.relative,
            )?,
        };

        Ok(RunSettings {
            min_improvement,
            sweep_top: positive("sweep.top", raw.sweep.top, 5000)?,
            backend,
            series_budget: match raw.sweep.series_memory_mb {
                Some(0) => {
                    return Err(Error::config(
                        "sweep.series_memory_mb",
                        "must be at least 1",
                    ))
                }
                Some(mb) => mb.saturating_mul(1 << 20),
                None => SERIES_BUDGET,
            },
            verify_top: positive("verify.top", raw.verify.top, 5000)?,
            iterations: match o.iterations.unwrap_or(5) {
                0 => return Err(Error::config("optimize.iterations", "must be at least 1")),
                n => n,
            },
            time_budget_s,
            refine_top: positive("optimize.refine_top", o.refine_top, 50)?,
            walkforward: raw.walkforward.map(RawWalkForward::check).transpose()?,
            search: raw.search.check()?,
            executor: raw.executor.check()?,
            pbo_blocks: match raw.robust.pbo_blocks.unwrap_or(16) {
                s if s % 2 == 0 && (4..=20).contains(&s) => s,
                s => {
                    return Err(Error::config(
                        "robust.pbo_blocks",
                        format!("must be an even number from 4 to 20, got {s}"),
                    ))
                }
            },
            select: {
                let aggregate = match raw.robust.neighbour_aggregate.as_deref() {
                    None | Some("mean") => NeighbourAggregate::Mean,
                    Some("min") => NeighbourAggregate::Min,
                    Some(other) => {
                        return Err(Error::config(
                            "robust.neighbour_aggregate",
                            format!("must be \"mean\" or \"min\", got \"{other}\""),
                        ))
                    }
                };
                match raw.robust.select.as_deref() {
                    None | Some("argmax") => Selection::Argmax,
                    Some("plateau") => Selection::Plateau(aggregate),
                    Some(other) => {
                        return Err(Error::config(
                            "robust.select",
                            format!("must be \"argmax\" or \"plateau\", got \"{other}\""),
                        ))
                    }
                }
            },
            max_combinations: match o.max_combinations {
                Some(0) => {
                    return Err(Error::config(
                        "optimize.max_combinations",
                        "must be at least 1",
                    ))
                }
                m => m,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> Result<RunSettings> {
        RunSettings::of(&Config::parse(text)?)
    }

    /// A gain in the last bits is no improvement, for objectives above
    /// and below 0; a real gain is; anything improves on no best.
    #[test]
    fn min_improvement_ignores_rounding() {
        let m = settings("").unwrap().min_improvement;
        assert!(!m.improves(0.8 + 3e-15, Some(0.8)));
        assert!(m.improves(0.81, Some(0.8)));
        assert!(!m.improves(-0.5 + 3e-16, Some(-0.5)));
        assert!(m.improves(-0.4, Some(-0.5)));
        assert!(!m.improves(0.8, Some(0.8)));
        assert!(m.improves(-1e300, None));
        // A plateau's aggregate may be −∞: anything above it improves.
        assert!(m.improves(-1e300, Some(f64::NEG_INFINITY)));
        assert!(!m.improves(f64::NEG_INFINITY, Some(f64::NEG_INFINITY)));
        // Relative for large objectives: 1e12 + 1 is within 1e-9 of 1e12.
        assert!(!m.improves(1e12 + 1.0, Some(1e12)));
        let strict = settings("[optimize]\nmin_improvement = 0.1\nmin_relative_improvement = 0")
            .unwrap()
            .min_improvement;
        assert!(!strict.improves(0.85, Some(0.8)) && strict.improves(0.95, Some(0.8)));
        let e = settings("[optimize]\nmin_improvement = -1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("optimize.min_improvement") && e.contains("≥ 0"),
            "{e}"
        );
    }

    #[test]
    fn defaults() {
        let s = settings("").unwrap();
        assert_eq!((s.sweep_top, s.verify_top), (5000, 5000));
        assert_eq!(
            (s.iterations, s.time_budget_s, s.refine_top),
            (5, 900.0, 50)
        );
        assert_eq!((s.backend.as_str(), s.pbo_blocks), ("cpu", 16));
        assert_eq!((s.max_combinations, s.walkforward), (None, None));
        assert_eq!(s.executor, ExecutorSettings::default());
        assert_eq!(s.executor.kind, ExecutorKind::Local);
        let e = settings(
            "[executor]\nkind = \"slurm\"\nshards = 16\nsbatch_options = [\"--account=x\"]\n",
        )
        .unwrap()
        .executor;
        assert_eq!((e.kind, e.shards, e.retries), (ExecutorKind::Slurm, 16, 2));
        assert_eq!(e.sbatch_options, ["--account=x"]);
    }

    #[test]
    fn bad_values_and_unknown_keys_are_named() {
        for (text, key) in [
            ("[sweep]\ntop = 0\n", "sweep.top"),
            ("[verify]\ntop = 0\n", "verify.top"),
            ("[sweep]\nbackend = \"tpu\"\n", "sweep.backend"),
            ("[optimize]\niterations = 0\n", "optimize.iterations"),
            ("[optimize]\ntime_budget_s = -1\n", "optimize.time_budget_s"),
            ("[optimize]\nrefine = 5\n", "refine"),
            ("[robust]\npbo_blocks = 7\n", "robust.pbo_blocks"),
            ("[robust]\nselect = \"best\"\n", "robust.select"),
            (
                "[robust]\nneighbour_aggregate = \"median\"\n",
                "robust.neighbour_aggregate",
            ),
            ("[walkforward]\ntest = \"1y\"\n", "walkforward.train"),
            (
                "[walkforward]\ntrain = \"4q\"\ntest = \"1y\"\n",
                "walkforward.train",
            ),
            (
                "[walkforward]\ntrain = \"4y\"\ntest = \"100\"\n",
                "walkforward",
            ),
            ("[executor]\nkind = \"pbs\"\n", "executor.kind"),
            ("[executor]\nshards = 0\n", "executor.shards"),
            ("[executor]\npoll_s = 0\n", "executor.poll_s"),
            ("[executor]\ncpus_per_task = 0\n", "executor.cpus_per_task"),
            ("[executor]\npartition = \" \"\n", "executor.partition"),
            ("[executor]\nnodes = 3\n", "nodes"),
            (
                "[executor]\nsbatch_options = [\"--array=0-9\"]\n",
                "executor.sbatch_options",
            ),
            (
                "[executor]\nsbatch_options = [\"-ologs/x\"]\n",
                "executor.sbatch_options",
            ),
        ] {
            let e = settings(text).unwrap_err().to_string();
            assert!(e.contains(key), "{text:?} gave {e}");
        }
        let w = settings("[walkforward]\ntrain = \"4y\"\ntest = \"6m\"\nanchored = true\n")
            .unwrap()
            .walkforward
            .unwrap();
        assert_eq!(
            (w.train, w.test, w.step, w.anchored),
            (Span::Years(4), Span::Months(6), Span::Months(6), true)
        );
    }
}
