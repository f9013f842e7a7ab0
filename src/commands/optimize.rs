use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use sieve_core::config::Config;
use sieve_run::optimize::{self, Observer, OptimizeOptions};
use sieve_run::report::{self, HeatmapAxes};

use crate::args::OptimizeArgs;
use crate::output::{human, table};
use crate::progress::Progress;

/// The built-in example, used when no --config is given.
pub const EXAMPLE_CONFIG: &str = include_str!("../../examples/activation.toml");

struct Terminal {
    verbose: bool,
    bar: Option<Progress>,
}

impl Observer for Terminal {
    fn start(&mut self, iteration: u32, stage: &str, total: u64) {
        let unit = if stage == "sweep" { "comb" } else { "cand" };
        self.bar = Some(Progress::new(
            total,
            &format!("{iteration}:{stage}"),
            unit,
            self.verbose,
        ));
    }
    fn progress(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set(done);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
    fn note(&mut self, message: &str) {
        eprintln!("{message}");
    }
}

pub fn run(a: OptimizeArgs) -> Result<()> {
    let config = match &a.common.config {
        Some(_) => Config::load(
            a.common.config.as_deref(),
            &crate::inputs::overrides(&a.common),
        )?,
        None => {
            eprintln!("no --config given: running the built-in example (examples/activation.toml: the activation strategy on synthetic daily data)");
            Config::parse_with_overrides(EXAMPLE_CONFIG, &crate::inputs::overrides(&a.common))?
        }
    };
    let study = crate::inputs::with_config(&a.common, config)?.into_study()?;
    if a.out.exists() && !a.out.is_dir() {
        anyhow::bail!(
            "{}: exists and is not a folder; --out takes a run folder",
            a.out.display()
        );
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| anyhow::anyhow!("{}: cannot create the run folder ({e})", a.out.display()))?;
    sieve_run::files::check_writable_dir(&a.out)?;
    let backend =
        sieve_screen::backend_by_name(a.backend.as_deref().unwrap_or(&study.config.backend))?;
    if a.common.verbose {
        eprintln!("backend: {}", backend.describe());
    }
    let opts = OptimizeOptions {
        out: a.out.clone(),
        backend: backend.as_ref(),
        threads: a.threads,
        restart: a.restart,
        checkpoint_every: Duration::from_secs_f64(a.checkpoint_every.max(0.0)),
    };
    eprintln!(
        "optimize: {} on {}, grid {} = {} combinations; run folder {}",
        study.strategy.name(),
        study.data_label,
        study.space,
        study.space.size(),
        a.out.display()
    );
    let mut term = Terminal {
        verbose: a.common.verbose,
        bar: None,
    };
    let outcome = optimize::optimize(&study, &opts, &mut term)?;
    report::write(&study, &outcome.dir, &HeatmapAxes::default())?;

    let best = &outcome.best;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "stopped: {}",
        outcome.state.stop_reason.as_deref().unwrap_or("done")
    )?;
    let params: Vec<String> = best["params"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    format!(
                        "{k}={}",
                        v.as_f64()
                            .map_or_else(|| v.to_string(), sieve_core::format::float)
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    writeln!(
        out,
        "best (iteration {}): {}",
        best["iteration"],
        params.join(" ")
    )?;
    let windows: Vec<(String, serde_json::Value)> = best["windows"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut header = vec!["metric".to_string()];
    header.extend(windows.iter().map(|(k, _)| k.clone()));
    let rows: Vec<Vec<String>> = [
        "objective",
        "total_return",
        "cagr",
        "max_drawdown",
        "sharpe",
        "trades",
    ]
    .iter()
    .map(|m| {
        let mut row = vec![m.to_string()];
        row.extend(
            windows
                .iter()
                .map(|(_, w)| w[*m].as_f64().map_or("NaN".into(), human)),
        );
        row
    })
    .collect();
    write!(out, "{}", table(&header, &rows))?;
    writeln!(
        out,
        "results: {}/best.json, {}/iter-NNN/verified.csv\nreport:  {}/report.html",
        a.out.display(),
        a.out.display(),
        a.out.display()
    )?;
    Ok(())
}
