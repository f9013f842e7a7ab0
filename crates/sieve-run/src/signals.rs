//! Backtests of signals of one's own (an entry and an exit per bar, from
//! pandas, TA-Lib or a model) through the exact engine: one row of
//! `verified.csv`'s numbers per set of signals.

use std::fmt::Write as _;

use rayon::prelude::*;
use sieve_core::engine::{Backtest, Sink};
use sieve_core::format::push_float;
use sieve_core::metrics::Metrics;
use sieve_core::metrics::Window;
use sieve_core::rules::{signal_targets, simulate_signals, SignalKeys};
use sieve_core::{Error, Result};

use crate::Study;

/// One set of signals: 0/1 per bar, as long as the data.
pub struct SignalColumn<'a> {
    pub name: String,
    pub entries: &'a [u8],
    pub exits: &'a [u8],
    /// Short entries and exits, both or neither.
    pub short: Option<(&'a [u8], &'a [u8])>,
    /// Trade management, per bar (none: the plain engine).
    pub keys: SignalKeys<'a>,
}

/// `column,score,full_score,holdout_score,<metrics…>`: each set's
/// objective over the score, full and holdout windows and its score-window
/// metrics, in the columns' order (sets are backtested in parallel); with
/// `records`, also each set's whole record (equity and position per bar,
/// every trade, as `sieve backtest --trades/--equity` writes them) from the
/// same simulation.
pub fn backtest_signals(
    study: &Study,
    columns: &[SignalColumn<'_>],
    records: bool,
) -> Result<(String, Vec<Backtest>)> {
    check_signals(study, columns)?;
    let scoring = study.scoring();
    let windows = scoring.windows;
    // Score first (its metrics are the row's), then full, then holdout.
    let all: Vec<_> = [Some(windows.score), Some(windows.full), windows.holdout]
        .into_iter()
        .flatten()
        .collect();
    let done: Vec<(String, Option<Backtest>)> = columns
        .par_iter()
        .map(|c| {
            let (record, metrics) = simulate(study, c, &all, records);
            let objectives: Vec<f64> = all
                .iter()
                .zip(&metrics)
                .map(|(w, m)| scoring.window_objective(w, m))
                .chain(std::iter::once(f64::NAN))
                .collect();
            let mut line = csv_field(&c.name);
            for v in objectives.iter().take(3).chain(&metrics[0].values()) {
                line.push(',');
                push_float(&mut line, *v);
            }
            line.push('\n');
            (line, record)
        })
        .collect();
    let mut out = String::from("column,score,full_score,holdout_score");
    for name in Metrics::NAMES {
        let _ = write!(out, ",{name}");
    }
    out.push('\n');
    let mut kept = Vec::new();
    for (line, record) in done {
        out.push_str(&line);
        kept.extend(record);
    }
    Ok((out, kept))
}

/// One set of signals through the engine: each of `windows`' metrics and,
/// with `record`, the whole record from the same simulation. Without trade
/// management the targets are decided first and run through the plain
/// engine; with it the managed engine and the state machine go bar by bar.
fn simulate(
    study: &Study,
    c: &SignalColumn<'_>,
    windows: &[Window],
    record: bool,
) -> (Option<Backtest>, Vec<Metrics>) {
    let (bars, scoring) = (study.bars(), study.scoring());
    let direction = scoring.direction;
    let long = (c.entries, c.exits);
    if c.keys.any() {
        let run = |end: usize, sink: &mut dyn Sink| {
            simulate_signals(
                bars,
                long,
                c.short,
                direction,
                &c.keys,
                &scoring.engine,
                end,
                sink,
            )
        };
        return match record {
            true => {
                let (bt, metrics) = scoring.backtest_of_run(bars, windows, run);
                (Some(bt), metrics)
            }
            false => (
                None,
                scoring.metrics_of_run(bars, windows, |end, stats| run(end, &mut &mut *stats)),
            ),
        };
    }
    let targets = signal_targets(&bars.close, long, c.short, direction);
    match record {
        true => {
            let (bt, metrics) = scoring.backtest_of_targets(bars, &targets, windows);
            (Some(bt), metrics)
        }
        false => (None, scoring.metrics_of_targets(bars, &targets, windows)),
    }
}

/// Refuses signals this study cannot run: several instruments, short
/// signals without shorts, a length that is not the data's.
fn check_signals(study: &Study, columns: &[SignalColumn<'_>]) -> Result<()> {
    if study.market().is_several() {
        return Err(Error::Invalid(
            "signals are backtested on one instrument; give one DataFrame or file".into(),
        ));
    }
    if study.scoring().direction == sieve_core::strategy::Direction::Long
        && columns.iter().any(|c| c.short.is_some())
    {
        return Err(Error::Invalid(
            "short signals are given but backtest.direction is \"long\": set it to \"long_short\" to trade them".into(),
        ));
    }
    let bars = study.bars();
    for c in columns {
        let lengths = [Some(c.entries.len()), Some(c.exits.len())]
            .into_iter()
            .chain(
                c.short
                    .iter()
                    .flat_map(|s| [Some(s.0.len()), Some(s.1.len())]),
            );
        for len in lengths.flatten() {
            if len != bars.len() {
                return Err(Error::Invalid(format!(
                    "signals '{}': {len} values where the data has {} bars",
                    c.name,
                    bars.len()
                )));
            }
        }
    }
    Ok(())
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    match s.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_string(),
    }
}
