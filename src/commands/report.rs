//! `sieve report`: (re)write a run folder's report.html, after checking that
//! the run's data has not changed since it ran.

use anyhow::{Context, Result};
use sieve_core::config::Config;
use sieve_core::data;
use sieve_run::report::{self, HeatmapAxes};
use sieve_run::rundir::{RunDir, RunKind, RunLock};

use crate::args::ReportArgs;

pub fn run(a: ReportArgs) -> Result<()> {
    if !a.dir.join(RunKind::Optimize.marker()).is_file() {
        anyhow::bail!(
            "{}: no run.json; is this a `sieve optimize` folder?",
            a.dir.display()
        );
    }
    // A run still going rewrites the report itself: wait for it to end.
    let _lock = RunLock::acquire(&a.dir)?;
    let dir = RunDir::new(&a.dir)?;
    let state = dir.load_state()?.with_context(|| {
        format!(
            "{}: no run.json; is this a `sieve optimize` folder?",
            a.dir.display()
        )
    })?;
    let config = Config::parse(&state.config)?;
    let data = match &state.data_path {
        Some(p) => vec![(
            String::new(),
            sieve_run::inputs::load_bars(p, &config)?.bars,
        )],
        None if !state.instruments.is_empty() => {
            let mut data = Vec::new();
            for (name, p) in &state.instruments {
                data.push((name.clone(), sieve_run::inputs::load_bars(p, &config)?.bars));
            }
            data
        }
        None => vec![(
            String::new(),
            data::synth(crate::inputs::EXAMPLE_BARS, crate::inputs::EXAMPLE_SEED),
        )],
    };
    let mut data = data;
    sieve_run::inputs::attach_informative(&config, &mut data, &config.load_options())?;
    let study = sieve_run::Study::of_instruments(config, data, state.data.clone())?;
    if study.data_hash() != state.data_hash {
        anyhow::bail!(
            "the data of this run has changed since it ran ({}); the report would not match it",
            state.data
        );
    }
    // A signal while loading or drawing leaves the report as it was.
    sieve_core::cancel::check()?;
    let html = report::render(&study, &a.dir, &HeatmapAxes { x: a.x, y: a.y })?;
    sieve_core::cancel::check()?;
    sieve_core::format::write_atomic(&dir.report_path(), html.as_bytes())?;
    eprintln!("wrote {}", dir.report_path().display());
    Ok(())
}
