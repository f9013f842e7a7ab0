//! `sieve synth`: write the deterministic synthetic series (a
//! regime-switching random walk), with any spacing between bars.

use anyhow::Result;
use sieve_core::data;

use crate::args::SynthArgs;

pub fn run(a: SynthArgs) -> Result<()> {
    if a.bars == 0 {
        anyhow::bail!("--bars must be at least 1");
    }
    sieve_run::files::check_output(&a.out, &[])?;
    if a.bar_seconds == 0 {
        anyhow::bail!("--bar-seconds must be at least 1");
    }
    let mut bars = data::synth(a.bars, a.seed);
    // The same prices at another spacing, from the same first bar.
    let (t0, step) = (bars.time[0], a.bar_seconds as i64 * 1000);
    for (i, t) in bars.time.iter_mut().enumerate() {
        *t = t0 + i as i64 * step;
    }
    if let Some(&last) = bars.time.last() {
        if last >= data::LATEST_MS {
            anyhow::bail!(
                "{} bars {} s apart from 2015 pass the year 2200, the latest time sieve reads; use fewer bars or a shorter --bar-seconds",
                a.bars,
                a.bar_seconds
            );
        }
    }
    data::write_bars(&bars, &a.out)?;
    eprintln!(
        "wrote {} bars (seed {}) to {}",
        a.bars,
        a.seed,
        a.out.display()
    );
    Ok(())
}
