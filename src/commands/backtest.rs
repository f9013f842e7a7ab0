//! `sieve backtest`: one parameter set through the exact engine; prints its
//! metrics (text or JSON) and, with --trades / --equity, writes those CSVs.

use std::io::Write;

use anyhow::Result;
use sieve_core::format::{self, float};
use sieve_run::backtest::{equity_csv, trades_csv};

use crate::args::BacktestArgs;

pub fn run(a: BacktestArgs) -> Result<()> {
    // The study checks the config and warns about unreliable settings.
    // A rule strategy's parameters are its `[strategy.params]` keys, so a
    // `--set` becomes that key's fixed value (it may have no grid at all).
    let config = sieve_run::backtest::load_config(&a.set, &mut |extra| {
        let flags: Vec<(&str, Option<String>)> = extra
            .iter()
            .filter_map(|o| o.split_once('='))
            .map(|(k, v)| (k, Some(v.to_string())))
            .collect();
        crate::inputs::load_config(&a.common, &flags)
    })?;
    let study = crate::inputs::with_config(&a.common, config)?.into_study()?;
    if study.config().rules.is_some() {
        for axis in study.space().axes.iter().filter(|x| x.values.len() > 1) {
            eprintln!(
                "note: {} is not --set; using {}, the first value of its grid",
                axis.name,
                float(axis.values[0])
            );
        }
    }
    for out in [&a.trades, &a.equity].into_iter().flatten() {
        sieve_run::files::check_output(
            out,
            &crate::inputs::input_paths(&a.common, study.config()),
        )?;
    }
    let done = sieve_run::backtest::backtest(&study, &a.set)?;
    // A stop asked for while the engine ran: no output, exit 130.
    sieve_core::cancel::check()?;
    for w in sieve_run::backtest::warnings(&study, &done) {
        eprintln!("warning: {w}");
    }
    let several = study.market().is_several();
    if several && (a.trades.is_some() || a.equity.is_some()) {
        anyhow::bail!(
            "--trades and --equity write one instrument's record; this config has {} instruments (data.paths): run the backtest with --data on one file",
            study.market().instruments.len()
        );
    }
    let time = &study.bars().time;
    if let Some(path) = &a.trades {
        let names: Vec<&str> = match &study.market().portfolio {
            Some(book) => book.members.iter().map(|m| m.name.as_str()).collect(),
            None => Vec::new(),
        };
        format::write_atomic(path, trades_csv(time, &done.runs[0].bt, &names).as_bytes())?;
    }
    if let Some(path) = &a.equity {
        format::write_atomic(path, equity_csv(time, &done.runs[0].bt).as_bytes())?;
    }
    let text = match a.json {
        true => format!("{}\n", serde_json::to_string_pretty(&done.json(&study))?),
        false => done.text(&study),
    };
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(())
}
