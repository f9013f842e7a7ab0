//! `sieve walkforward`: the optimize loop on rolling train windows, each
//! best judged on the test window that follows; prints the folds, the
//! stitched out-of-sample metrics and the walk-forward efficiency.

use std::io::Write;

use anyhow::Result;

use crate::args::WalkforwardArgs;
use crate::commands::optimize::{config, control, prepare};
use crate::output::{human, table};
use sieve_run::progress::ProgressObserver;
use sieve_run::rundir::RunKind;

pub fn run(a: WalkforwardArgs) -> Result<()> {
    let config = config(&a.common, &a.run)?;
    let study = crate::inputs::with_config(&a.common, config)?.into_study()?;
    sieve_run::walkforward::check(&study)?;
    // Held to the end: the folder's lock.
    let run = prepare(&a.out, &study, RunKind::WalkForward, a.common.verbose)?;
    let control = control(&a.run);
    let mut term = ProgressObserver::new(true, a.common.verbose);
    let o = match sieve_run::jobs::walkforward(
        &study,
        &a.out,
        run.backend.as_ref(),
        &control,
        &mut term,
    )? {
        sieve_run::jobs::Ended::Done(o) => o,
        // A fold stopped (a signal, or its time budget): checkpointed; the
        // same command continues it.
        sieve_run::jobs::Ended::Stopped(stop) => {
            return Err(sieve_core::Error::Interrupted(stop.to_string()).into())
        }
    };
    let mut out = std::io::stdout().lock();
    let mut header = vec!["fold".to_string()];
    header.extend(study.param_names().iter().map(|s| s.to_string()));
    header.extend(["train".to_string(), "test".to_string()]);
    let rows: Vec<Vec<String>> = o
        .results
        .iter()
        .zip(&o.folds)
        .map(|(r, f)| {
            let mut row = vec![format!("{}{}", r.fold, if f.partial { "*" } else { "" })];
            match &r.params {
                Some(p) => row.extend(p.iter().map(|v| sieve_core::format::float(*v))),
                None => row.extend(study.param_names().iter().map(|_| "-".to_string())),
            }
            row.extend([human(r.train_score), human(r.test_score)]);
            row
        })
        .collect();
    write!(out, "{}", table(&header, &rows))?;
    let s = &o.summary;
    let st = &s.stitched;
    let opt = |v: sieve_run::files::Num| human(v.0);
    writeln!(
        out,
        "stitched out-of-sample {}..{}: total_return {}, cagr {}, max_drawdown {}, sharpe {}, {} trades",
        st.start,
        st.end,
        opt(st.total_return),
        opt(st.cagr),
        opt(st.max_drawdown),
        opt(st.sharpe),
        st.trades
    )?;
    writeln!(
        out,
        "walk-forward efficiency {} (mean test / mean train {} over the {} folds with both finite); {:.0}% of folds with a positive test score",
        opt(s.efficiency),
        study.scoring().objective,
        s.efficiency_folds,
        100.0 * s.positive_share
    )?;
    for r in o.results.iter().filter(|r| !r.note.is_empty()) {
        writeln!(out, "fold {}: {}", r.fold, r.note)?;
    }
    writeln!(
        out,
        "results: {0}/walkforward.csv, {0}/walkforward.json, {0}/fold-NNN/\nreport:  {0}/report.html",
        a.out.display()
    )?;
    Ok(())
}
