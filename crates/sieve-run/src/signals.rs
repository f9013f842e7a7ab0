//! Backtests of signals of one's own (an entry and an exit per bar, from
//! pandas, TA-Lib or a model) through the exact engine: one row of
//! `verified.csv`'s numbers per set of signals.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::Serialize;
use sieve_core::engine::{Backtest, Sink};
use sieve_core::format::push_float;
use sieve_core::metrics::Metrics;
use sieve_core::metrics::Window;
use sieve_core::robust::{dsr, pbo, window_returns};
use sieve_core::rules::{signal_targets, simulate_signals, KeySeries, SignalKeys};
use sieve_core::{Error, Result};

use crate::robust::{self, Robustness};
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

/// What [`backtest_signals`] gives back.
pub struct SignalResults {
    /// `column,score,full_score,holdout_score,<metrics…>`: each set's
    /// objective over the score, full and holdout windows and its
    /// score-window metrics, in the columns' order.
    pub table: String,
    /// With `records`: each set's whole record (equity and position per
    /// bar, every trade, as `sieve backtest --trades/--equity` writes
    /// them), from the same simulation as its row.
    pub records: Vec<Backtest>,
    /// With `robust`: the set's robustness.
    pub robustness: Option<SetRobustness>,
    /// Likely slips in the trade-management values (a target in percent),
    /// one line per key.
    pub notes: Vec<String>,
}

/// The robustness of a set of signals: the Deflated Sharpe of its best
/// column (the highest score; the first on a tie) with every column a
/// trial, and the PBO with every column a candidate.
#[derive(Debug, Clone, Serialize)]
pub struct SetRobustness {
    /// The best column's name, score and holdout score.
    pub best: String,
    pub score: f64,
    pub holdout: Option<f64>,
    #[serde(flatten)]
    pub robustness: Robustness,
    pub verdict: String,
}

/// Backtests each set of signals (in parallel); see [`SignalResults`].
/// Once `stop` is set, the columns not yet begun are skipped and the call
/// ends `Interrupted`.
pub fn backtest_signals(
    study: &Study,
    columns: &[SignalColumn<'_>],
    records: bool,
    robust: bool,
    stop: Option<&AtomicBool>,
) -> Result<SignalResults> {
    let notes = check_signals(study, columns)?;
    let scoring = study.scoring();
    let windows = scoring.windows;
    // Score first (its metrics are the row's), then full, then holdout.
    let all: Vec<_> = [Some(windows.score), Some(windows.full), windows.holdout]
        .into_iter()
        .flatten()
        .collect();
    let score = windows.score;
    let blocks = study.settings().pbo_blocks;
    let cash = scoring.engine.initial_cash;
    let stopped = || stop.is_some_and(|s| s.load(Ordering::Relaxed));
    let done: Vec<Option<Done>> = columns
        .par_iter()
        .map(|c| {
            if stopped() {
                return None;
            }
            let (record, metrics) = simulate(study, c, &all, records || robust);
            let returns = match (&record, robust) {
                (Some(bt), true) => {
                    let returns = window_returns(&bt.equity, score.start, score.end, cash);
                    Some((
                        dsr::ReturnShape::of(&returns),
                        robust::block_fingerprint(&returns, blocks),
                    ))
                }
                _ => None,
            };
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
            Some(Done {
                line,
                record: record.filter(|_| records),
                returns,
                score: objectives[0],
                holdout: windows.holdout.map(|_| objectives[2]),
                figures: (metrics[0].sharpe, metrics[0].cagr),
            })
        })
        .collect();
    let Some(done) = done.into_iter().collect::<Option<Vec<Done>>>() else {
        return Err(Error::Interrupted("KeyboardInterrupt".into()));
    };
    let mut out = String::from("column,score,full_score,holdout_score");
    for name in Metrics::NAMES {
        let _ = write!(out, ",{name}");
    }
    out.push('\n');
    let robustness = robust.then(|| set_robustness(study, columns, &done, &stopped));
    // The PBO over many columns takes seconds, and looks at the stop.
    if stopped() {
        return Err(Error::Interrupted("KeyboardInterrupt".into()));
    }
    let mut kept = Vec::new();
    for d in done {
        out.push_str(&d.line);
        kept.extend(d.record);
    }
    Ok(SignalResults {
        notes,
        table: out,
        records: kept,
        robustness,
    })
}

/// One set's results.
struct Done {
    line: String,
    record: Option<Backtest>,
    /// With `robust`: its score-window returns' shape and PBO fingerprint.
    returns: Option<(dsr::ReturnShape, (u64, Vec<pbo::BlockSums>))>,
    score: f64,
    holdout: Option<f64>,
    /// The score window's annualised Sharpe and CAGR (the verdict's
    /// plausibility check).
    figures: (f64, f64),
}

/// The DSR of the best set among all as trials (V: the variance of their
/// per-period Sharpes over the score window) and the PBO over all sets.
fn set_robustness(
    study: &Study,
    columns: &[SignalColumn<'_>],
    done: &[Done],
    stopped: &(dyn Fn() -> bool + Sync),
) -> SetRobustness {
    let rank = |d: &Done| match d.score.is_nan() {
        true => f64::NEG_INFINITY,
        false => d.score,
    };
    // The first of the highest scores.
    let best = (0..done.len())
        .rev()
        .max_by(|&a, &b| rank(&done[a]).total_cmp(&rank(&done[b])))
        .unwrap_or(0);
    let shapes: Vec<&dsr::ReturnShape> = done
        .iter()
        .filter_map(|d| d.returns.as_ref().map(|r| &r.0))
        .collect();
    let sharpes = shapes.iter().map(|s| s.sharpe).filter(|s| s.is_finite());
    let mut stats = sieve_screen::ObjectiveStats::default();
    sharpes.for_each(|s| stats.push(s));
    let dsr = done
        .get(best)
        .and_then(|d| d.returns.as_ref())
        .map(|(shape, _)| robust::dsr_record(shape, done.len() as u64, Some(stats.variance())));
    let blocks = study.settings().pbo_blocks;
    let w = study.scoring().windows.score;
    // Sets with a finite score, in the columns' order (a tie goes to the
    // earlier column).
    let measured = || {
        done.iter()
            .filter(|d| d.score.is_finite())
            .filter_map(|d| d.returns.as_ref().map(|r| r.1.clone()))
            .collect()
    };
    let pbo = robust::pbo_fits(w.end - w.start, blocks)
        .and_then(|_| robust::pbo_record(measured(), blocks, None, stopped));
    let (pbo, pbo_skipped) = match pbo {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    let robustness = Robustness {
        dsr,
        pbo,
        pbo_skipped,
    };
    let (score, holdout) = done
        .get(best)
        .map_or((f64::NAN, None), |d| (d.score, d.holdout));
    SetRobustness {
        best: columns
            .get(best)
            .map_or_else(String::new, |c| c.name.clone()),
        score,
        holdout,
        verdict: robust::verdict_checked(
            robust::verdict(
                &robustness,
                study.scoring().objective.name(),
                score,
                holdout,
            ),
            done.get(best).filter(|_| w.end > w.start).and_then(|d| {
                let time = &study.bars().time;
                let from = time[w.start.saturating_sub(1)];
                let days = (time[w.end - 1] - from) as f64 / sieve_core::data::MS_PER_DAY as f64;
                robust::implausible(d.figures.0, d.figures.1, days)
            }),
        ),
        robustness,
    }
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
fn check_signals(study: &Study, columns: &[SignalColumn<'_>]) -> Result<Vec<String>> {
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
    check_keys(study, columns)
}

/// Each trade-management value given (NaN: unset on that bar) by the rule
/// the config's constants follow ([`sieve_core::rules::KeySpec::check`]);
/// the first refused value is an error naming the key, column and bar.
/// Returns a note per key holding a likely slip.
fn check_keys(study: &Study, columns: &[SignalColumn<'_>]) -> Result<Vec<String>> {
    let max_leverage = study.scoring().engine.max_leverage;
    let time = &study.bars().time;
    let mut notes = Vec::new();
    for spec in sieve_core::rules::KEYS {
        let mut noted = false;
        for c in columns {
            let Some((_, values)) = c.keys.entries().find(|(s, _)| s.name == spec.name) else {
                continue;
            };
            // One value for every bar is checked once, and said so.
            let (values, each) = match values {
                KeySeries::Each(v) => (std::slice::from_ref(v), true),
                KeySeries::Bars(b) => (*b, false),
            };
            for (t, &v) in values.iter().enumerate().filter(|(_, v)| !v.is_nan()) {
                spec.check(v, max_leverage).map_err(|m| {
                    let at = match each {
                        true => "every bar".to_string(),
                        false => format!("bar {t} ({})", sieve_core::format::time(time[t])),
                    };
                    Error::Invalid(format!("{}: column '{}', {at}: {m}", spec.name, c.name))
                })?;
                if !noted {
                    if let Some(typo) = spec.typo(v) {
                        notes.push(format!("{typo} (column '{}')", c.name));
                        noted = true;
                    }
                }
            }
        }
    }
    Ok(notes)
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    match s.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", s.replace('"', "\"\"")),
        false => s.to_string(),
    }
}
