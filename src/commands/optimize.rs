//! `sieve optimize`: the main loop (screen, verify, zoom in, repeat) in a
//! resumable run folder, then the best, its metrics and robustness verdict;
//! its config, folder and control setup is shared with `sieve walkforward`.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use sieve_run::best::Best;
use sieve_run::jobs;
use sieve_run::optimize::{self, Stop};
use sieve_run::progress::ProgressObserver;
use sieve_run::rundir::RunKind;
use sieve_run::settings::{Checked, ExecutorKind};

use crate::args::{Common, OptimizeArgs, RunFlags};
use crate::output::{human, table};
use crate::{status, Exit};

/// The config of a run: the user's file, or the built-in example adapted to
/// what the user gave (their data: windows as shares of the bars; another
/// strategy: that strategy's default grid).
pub(crate) fn config(common: &Common, run: &RunFlags) -> Result<Checked> {
    let flags = [
        (
            "sweep.backend",
            run.backend.as_deref().map(crate::inputs::toml_string),
        ),
        (
            "executor.kind",
            run.executor.as_deref().map(crate::inputs::toml_string),
        ),
        ("executor.shards", run.shards.map(|n| n.to_string())),
    ];
    let checked = match common.config.is_some() {
        true => crate::inputs::load_config(common, &flags)?,
        false => {
            let (config, note) = jobs::example_config(
                common.data.is_some(),
                common.strategy.as_deref(),
                &common.options,
                &crate::inputs::overrides(common, &flags),
            )?;
            eprintln!("no --config given: running the built-in example (examples/activation.toml; {note})");
            Checked::new(config)?
        }
    };
    if run.shards.is_some() && checked.settings.executor.kind == ExecutorKind::Local {
        anyhow::bail!(
            "--shards splits the screens sent to a cluster: give --executor slurm (or executor.kind = \"slurm\") with it"
        );
    }
    Ok(checked)
}

pub fn run(a: OptimizeArgs) -> Result<()> {
    let config = config(&a.common, &a.run)?;
    let study = crate::inputs::with_config(&a.common, config)?.into_study()?;
    // Held to the end: the run folder's lock.
    let run = prepare(&a.out, &study, RunKind::Optimize, a.common.verbose)?;
    let control = control(&a.run);
    eprintln!(
        "optimize: {} on {}, grid {} = {} combinations; run folder {}",
        study.strategy().name(),
        study.data_label(),
        study.space(),
        study.space().size(),
        a.out.display()
    );
    let mut term = ProgressObserver::new(true, a.common.verbose);
    let outcome = jobs::optimize(&study, &a.out, run.backend.as_ref(), &control, &mut term)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "stopped: {}", outcome.stop)?;
    let Some(best) = &outcome.best else {
        let status = match outcome.stop {
            Stop::Interrupted => status::INTERRUPTED,
            _ => status::NO_RESULT,
        };
        return Err(Exit {
            status,
            message: optimize::no_best(&study, &outcome.stop),
        }
        .into());
    };
    print_best(&mut out, &study, best)?;
    writeln!(
        out,
        "results: {}/best.json, {}/iter-NNN/verified.csv\nreport:  {}/report.html",
        a.out.display(),
        a.out.display(),
        a.out.display()
    )?;
    if outcome.stop == Stop::Interrupted {
        return Err(Exit {
            status: status::INTERRUPTED,
            message: outcome.stop.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The best parameters, a table of its main metrics per window, and the
/// robustness numbers with their verdict.
fn print_best(out: &mut impl Write, study: &sieve_run::Study, best: &Best) -> Result<()> {
    let params: Vec<String> = best
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", sieve_core::format::float(*v)))
        .collect();
    // Under `plateau`, which rule chose it.
    let rule = best
        .selection
        .as_ref()
        .map_or(String::new(), |s| format!(", chosen by {}", s.rule));
    writeln!(
        out,
        "best (iteration {}{rule}): {}",
        best.iteration,
        params.join(" ")
    )?;
    let mut header = vec!["metric".to_string()];
    header.extend(best.windows.keys().cloned());
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
        row.extend(best.windows.values().map(|w| human(w.get(m))));
        row
    })
    .collect();
    write!(out, "{}", table(&header, &rows))?;
    if !best.instruments.is_empty() {
        // Each instrument's objective per window: what the aggregate hides.
        let lines = sieve_run::best::instrument_lines(study, best);
        let mut header = vec!["instrument".to_string()];
        header.extend(best.windows.keys().cloned());
        header.extend(["score bars".to_string(), "score trades".to_string()]);
        let rows: Vec<Vec<String>> = best
            .instruments
            .iter()
            .zip(&lines)
            .map(|((name, windows), line)| {
                let mut row = vec![name.clone()];
                row.extend(windows.values().map(|w| human(w.get("objective"))));
                row.extend([line.score_bars.to_string(), human(line.trades)]);
                row
            })
            .collect();
        writeln!(
            out,
            "objective per instrument (the aggregate above is their {}):",
            best.aggregate.as_deref().unwrap_or("mean")
        )?;
        write!(out, "{}", table(&header, &rows))?;
        if let Some(flag) = sieve_run::best::dominated_mean(study, &lines) {
            writeln!(out, "warning: {flag}")?;
        }
    }
    if let Some(r) = &best.robustness {
        if let Some(d) = &r.dsr {
            let dsr = d
                .dsr
                .map_or("n/a (no trial variance from this backend)".into(), |v| {
                    format!("{v:.3}")
                });
            writeln!(
                out,
                "deflated Sharpe: {dsr} (per-bar Sharpe {} vs {} expected from the best of {} noise trials)",
                human(d.sharpe),
                d.expected_max_sharpe.map_or("?".into(), human),
                d.trials
            )?;
        }
        if let Some(p) = &r.pbo {
            writeln!(
                out,
                "overfitting: PBO {:.3} over {} distinct candidates{}, {} splits of {} blocks",
                p.pbo,
                p.candidates,
                match p.identical {
                    0 => String::new(),
                    n => format!(" ({n} more with the same returns count once)"),
                },
                p.splits,
                p.blocks
            )?;
        }
        if let Some(why) = &r.pbo_skipped {
            writeln!(out, "overfitting: no PBO: {why}")?;
        }
    }
    if let Some(verdict) = best.verdict() {
        writeln!(out, "verdict: {verdict}")?;
    }
    Ok(())
}

/// Checks the output folder (created, writable) and opens the backend.
pub(crate) fn prepare(
    out: &std::path::Path,
    study: &sieve_run::Study,
    kind: RunKind,
    verbose: bool,
) -> Result<jobs::PreparedRun> {
    let run = jobs::prepare_run(study, out, kind)?;
    let backend = &run.backend;
    if verbose {
        eprintln!("backend: {}", backend.describe());
        if backend.name() == "gpu" {
            eprintln!("{}", crate::inputs::gpu_kernel_note(study.strategy()));
        }
        let budget = study.settings().series_budget;
        let series =
            sieve_screen::SeriesPlan::of(study.strategy(), study.space(), study.market(), budget);
        eprintln!("{}", series.describe(budget));
    }
    Ok(run)
}

/// How the loop runs, from the flags; a signal stops it at a checkpoint.
pub(crate) fn control(run: &RunFlags) -> jobs::RunControl<'static> {
    jobs::RunControl {
        threads: run.threads,
        restart: run.restart,
        checkpoint_every: Duration::from_secs_f64(run.checkpoint_every),
        cancel: Some(&crate::INTERRUPT),
        runner: None,
        // Shard jobs run this very program.
        shard_program: std::env::current_exe().ok(),
    }
}
