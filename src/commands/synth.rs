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
    let k = match &a.detail {
        Some(detail) => {
            if detail == &a.out {
                anyhow::bail!(
                    "--detail and --out name the same file; give the detail bars their own"
                );
            }
            sieve_run::files::check_output(detail, &[])?;
            if a.detail_per_bar < 2 || !a.bar_seconds.is_multiple_of(a.detail_per_bar) {
                anyhow::bail!(
                    "--detail-per-bar must be at least 2 and divide --bar-seconds ({}), got {}",
                    a.bar_seconds,
                    a.detail_per_bar
                );
            }
            a.detail_per_bar as usize
        }
        None => 1,
    };
    let mut bars = data::synth(a.bars * k, a.seed);
    // The same prices at another spacing, from the same first bar.
    let (t0, step) = (bars.time[0], (a.bar_seconds / k as u64) as i64 * 1000);
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
    if let Some(detail) = &a.detail {
        // The daily model's moves per detail bar, shrunk k times in log
        // terms (100 stays 100): k detail bars make a bar of about a day's
        // size over k times the bars, not a price that runs away.
        let shrink = |p: &mut f64| *p = 100.0 * (*p / 100.0).powf(1.0 / k as f64);
        for col in [
            &mut bars.open,
            &mut bars.high,
            &mut bars.low,
            &mut bars.close,
        ] {
            col.iter_mut().for_each(shrink);
        }
        data::write_bars(&bars, detail)?;
        eprintln!(
            "wrote {} detail bars ({} per bar) to {}",
            bars.len(),
            k,
            detail.display()
        );
        bars = data::coarsen(&bars, k);
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
