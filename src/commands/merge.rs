//! `sieve merge`: join the shards of one sweep into exactly what an
//! unsharded sweep writes.

use anyhow::Result;

use crate::args::MergeArgs;

pub fn run(a: MergeArgs) -> Result<()> {
    let inputs: Vec<&std::path::Path> = a.parts.iter().map(|p| p.as_path()).collect();
    sieve_run::files::check_output(&a.out, &inputs)?;
    let meta = sieve_run::merge::merge(&a.parts, &a.out)?;
    eprintln!(
        "merged {} shards ({} combinations evaluated) into {}",
        a.parts.len(),
        meta.objective_stats.combinations_evaluated,
        a.out.display()
    );
    Ok(())
}
