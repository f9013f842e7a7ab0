//! `sieve shard-job`: one shard of a screen that `optimize` or
//! `walkforward` sent to a cluster, written into the job's folder.

use anyhow::{Context, Result};
use sieve_run::shard::Shard;

use crate::args::ShardJobArgs;

pub fn run(a: ShardJobArgs) -> Result<()> {
    let env = |name: &str| std::env::var(name).ok();
    let shard = match a.shard {
        Some(k) => k,
        None => Shard::task_index(env)?.context(
            "which shard? give --shard K (or run it as a Slurm array task or a Kubernetes indexed pod)",
        )?,
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
