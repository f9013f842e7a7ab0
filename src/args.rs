//! What the user typed (clap definitions). Help text lives here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "sieve",
    version,
    about = "Screen huge trading-strategy parameter grids fast, then verify the best exactly."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// The main job: screen, verify, zoom in, repeat; resumable; writes a report.
    /// Without --config it runs the built-in example (activation on synthetic data).
    /// Every config key: docs/config.md; every metric and the DSR/PBO: docs/metrics.md.
    Optimize(OptimizeArgs),
    /// (Re)write DIR/report.html for a run folder.
    Report(ReportArgs),
    /// Walk-forward: the optimize loop on rolling train windows, each best
    /// judged on the test window that follows; needs a [walkforward] section.
    Walkforward(WalkforwardArgs),
    /// Run one parameter set through the exact engine and print its metrics.
    Backtest(BacktestArgs),
    /// List the built-in strategies, their parameters, defaults and default
    /// grids; with --config, the config's strategy (a rule strategy's
    /// parameters, definitions and the indicator settings its grid computes).
    Strategies(StrategiesArgs),
    /// Write the deterministic synthetic daily series (regime-switching random walk).
    Synth(SynthArgs),
    /// Screen every combination of the grid (or one shard) and keep the best K.
    Sweep(SweepArgs),
    /// Join the shards of one sweep into exactly what an unsharded sweep writes.
    Merge(MergeArgs),
    /// Re-run candidates through the exact engine in parallel, ranked on the score window.
    Verify(VerifyArgs),
    /// Screen one shard of a screen that `optimize`/`walkforward` sent to a
    /// cluster (executor.kind = "slurm"); submitted by sieve, not by hand.
    ShardJob(ShardJobArgs),
    /// Print a Kubernetes Indexed Job that sweeps a grid in shards (one pod
    /// per shard, writing into a shared volume), then merge the parts.
    KubeManifest(KubeManifestArgs),
}

#[derive(Args)]
pub struct ShardJobArgs {
    /// The job file the controller wrote (`<run>/cluster/<job>/job.json`).
    #[arg(long, value_name = "FILE")]
    pub job: PathBuf,
    /// The shard (from 0). Without it, SLURM_ARRAY_TASK_ID or
    /// JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "K")]
    pub shard: Option<u64>,
    /// Worker threads (0 = SLURM_CPUS_PER_TASK, else all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

#[derive(Args)]
pub struct KubeManifestArgs {
    /// The sweep's config, as the pods see it (a path on the shared volume).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The data, as the pods see it (a path on the shared volume).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Shards (pods), each screening one slice of the grid.
    #[arg(long, value_name = "N")]
    pub shards: u64,
    /// Pods running at once (default: all).
    #[arg(long, value_name = "N")]
    pub parallelism: Option<u64>,
    /// Keep the best K in each shard (and in the merge).
    #[arg(long, value_name = "K", default_value_t = 5000)]
    pub top: usize,
    /// The container image with sieve on its PATH.
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// The PersistentVolumeClaim mounted at --mount in every pod.
    #[arg(long, value_name = "NAME")]
    pub claim: String,
    /// Where the volume is mounted; the parts go to MOUNT/NAME-part-K.csv.
    #[arg(long, value_name = "DIR", default_value = "/work")]
    pub mount: PathBuf,
    /// The Job's name.
    #[arg(long, value_name = "NAME", default_value = "sieve-sweep")]
    pub name: String,
    /// CPUs each pod requests (also its threads).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub cpus: u32,
}

#[derive(Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub common: Common,
    /// Output CSV (its meta goes beside it as NAME.meta.json).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Keep the best K; overrides `sweep.top` (default 5000).
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// Screen only the K-th (from 0) of N contiguous slices of the grid.
    /// Without it, read SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Number of shards when the index comes from JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "N")]
    pub shards: Option<u64>,
    /// Screening backend; overrides `sweep.backend`.
    #[arg(long, value_name = "cpu|gpu")]
    pub backend: Option<String>,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Also write the WGSL of the GPU kernel generated for a rule strategy
    /// (to inspect it; any backend).
    #[arg(long, value_name = "FILE")]
    pub emit_wgsl: Option<PathBuf>,
}

#[derive(Args)]
pub struct MergeArgs {
    /// The shard files (each with its .meta.json beside it).
    #[arg(required = true, value_name = "PART.csv")]
    pub parts: Vec<PathBuf>,
    /// The merged CSV.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub common: Common,
    /// A sweep.csv, or any CSV whose columns include the strategy's parameters.
    #[arg(long, value_name = "FILE")]
    pub candidates: PathBuf,
    /// Output CSV (verified.csv format).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Verify the first N rows; overrides `verify.top` (default 5000).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// Inputs shared by every command that runs a strategy.
#[derive(Args, Clone, Default)]
pub struct Common {
    /// TOML config file (every key: docs/config.md); flags override it.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Price data (CSV, Parquet or Feather); overrides `data.path`. Without either, 4,000 synthetic daily bars.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Strategy name; overrides `strategy.name`.
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,
    /// Override any config key, e.g. `-O backtest.fee=0.001` (repeatable).
    #[arg(long = "option", short = 'O', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Say more (notices, timings) on stderr.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(Args)]
pub struct StrategiesArgs {
    /// Describe this config's strategy instead of listing the built-ins.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override any config key (as for the other commands).
    #[arg(long = "option", short = 'O', value_name = "KEY=VALUE")]
    pub options: Vec<String>,
}

#[derive(Args)]
pub struct BacktestArgs {
    #[command(flatten)]
    pub common: Common,
    /// A parameter value, e.g. `--set fast=10` (repeatable); defaults for the rest.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Write the trade list as CSV.
    #[arg(long, value_name = "FILE")]
    pub trades: Option<PathBuf>,
    /// Write the equity curve as CSV.
    #[arg(long, value_name = "FILE")]
    pub equity: Option<PathBuf>,
    /// Print the metrics as JSON (exact floats) instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct SynthArgs {
    /// Number of daily bars.
    #[arg(long, default_value_t = 4000)]
    pub bars: usize,
    /// Random seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Seconds between bars (86400: daily; 3600: hourly; 60: one-minute).
    #[arg(long, default_value_t = 86_400, value_name = "SECONDS")]
    pub bar_seconds: u64,
    /// Output file: CSV, or Parquet (`.parquet`) or Arrow/Feather (`.feather`, `.arrow`) by its extension.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Also write finer bars under them to this file (for `data.detail`):
    /// the series is made at the finer spacing and `--out` gets its bars
    /// merged `--detail-per-bar` at a time.
    #[arg(long, value_name = "FILE")]
    pub detail: Option<PathBuf>,
    /// Detail bars per bar (with `--detail`); must divide `--bar-seconds`.
    #[arg(long, default_value_t = 60, value_name = "K", requires = "detail")]
    pub detail_per_bar: u64,
}

#[derive(Args)]
pub struct OptimizeArgs {
    #[command(flatten)]
    pub common: Common,
    /// Run folder (created; resumed when it holds this run already).
    #[arg(long, value_name = "DIR", default_value = "sieve-run")]
    pub out: PathBuf,
    #[command(flatten)]
    pub run: RunFlags,
}

#[derive(Args)]
pub struct WalkforwardArgs {
    #[command(flatten)]
    pub common: Common,
    /// Output folder: fold-NNN/ run folders, walkforward.csv/.json, report.html.
    #[arg(long, value_name = "DIR", default_value = "sieve-walkforward")]
    pub out: PathBuf,
    #[command(flatten)]
    pub run: RunFlags,
}

/// How an optimize loop runs (shared by optimize and walkforward).
#[derive(Args)]
pub struct RunFlags {
    /// Screening backend; overrides `sweep.backend`.
    #[arg(long, value_name = "cpu|gpu")]
    pub backend: Option<String>,
    /// Worker threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Discard a run of another config or data in --out instead of refusing.
    #[arg(long)]
    pub restart: bool,
    /// Seconds between checkpoints of a sweep in progress.
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = seconds)]
    pub checkpoint_every: f64,
    /// Where each screen runs; overrides `executor.kind` (slurm: a job
    /// array of shards, see "Optimizing on a cluster" in the README).
    #[arg(long, value_name = "local|slurm")]
    pub executor: Option<String>,
    /// Shards per screen on a cluster; overrides `executor.shards`.
    #[arg(long, value_name = "N")]
    pub shards: Option<u64>,
}

#[derive(Args)]
pub struct ReportArgs {
    /// A `sieve optimize` run folder.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Heatmap x parameter (default: the most influential).
    #[arg(long, value_name = "PARAM")]
    pub x: Option<String>,
    /// Heatmap y parameter (default: the second most influential).
    #[arg(long, value_name = "PARAM")]
    pub y: Option<String>,
}

/// A number of seconds from 0 (every batch) to a year (`inf`, `nan`,
/// `1e300` and negatives are refused; `Duration` cannot hold them).
fn seconds(s: &str) -> Result<f64, String> {
    const YEAR: f64 = 365.25 * 86_400.0;
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=YEAR).contains(&v) => Ok(v),
        Ok(_) => Err(format!(
            "{} is not a number of seconds from 0 to a year",
            s.trim()
        )),
        Err(_) => Err(format!("\"{s}\" is not a number of seconds")),
    }
}
