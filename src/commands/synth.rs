use anyhow::Result;
use sieve_core::data;

use crate::args::SynthArgs;

pub fn run(a: SynthArgs) -> Result<()> {
    if a.bars == 0 {
        anyhow::bail!("--bars must be at least 1");
    }
    sieve_run::files::check_output(&a.out, &[])?;
    let bars = data::synth(a.bars, a.seed);
    data::write_bars(&bars, &a.out)?;
    eprintln!(
        "wrote {} bars (seed {}) to {}",
        a.bars,
        a.seed,
        a.out.display()
    );
    Ok(())
}
