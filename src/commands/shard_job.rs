//! `sieve shard-job`: one shard of a screen that `optimize` or
//! `walkforward` sent to a cluster, written into the job's folder.

use anyhow::{Context, Result};

use crate::args::ShardJobArgs;

pub fn run(a: ShardJobArgs) -> Result<()> {
    let env = |name: &str| std::env::var(name).ok();
    // The task id itself: an array resubmitted for some shards only
    // (`--array=1,3`) numbers its tasks by shard, not from its minimum.
    let shard = match a.shard {
        Some(k) => k,
        None => {
            let (name, value) = ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"]
                .iter()
                .find_map(|n| env(n).map(|v| (*n, v)))
                .context("which shard? give --shard K (or run it as a Slurm array task or a Kubernetes indexed pod)")?;
            value
                .trim()
                .parse()
                .with_context(|| format!("{name}={value} is not a shard number"))?
        }
    };
    let threads = match a.threads {
        0 => env("SLURM_CPUS_PER_TASK")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        n => n,
    };
    let started = std::time::Instant::now();
    let part = sieve_run::executor::job::run_shard(
        &a.job,
        shard,
        threads,
        &Default::default(),
        Some(&crate::INTERRUPT),
    )?;
    eprintln!(
        "shard {shard}: wrote {} in {:.1} s",
        part.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
