use anyhow::Result;

use crate::args::MergeArgs;

pub fn run(a: MergeArgs) -> Result<()> {
    let meta = sieve_run::merge::merge(&a.parts, &a.out)?;
    eprintln!(
        "merged {} shards ({} combinations evaluated) into {}",
        a.parts.len(),
        meta.objective_stats.combinations_evaluated,
        a.out.display()
    );
    Ok(())
}
