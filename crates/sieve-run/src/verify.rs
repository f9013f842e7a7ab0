//! `sieve verify`: every candidate through the exact f64 engine, in
//! parallel, scored on the score window; identical output whatever the
//! thread count (results are collected in input order, then sorted by the
//! one ranking order of sieve).

use std::path::Path;

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use std::fmt::Write as _;

use sieve_core::evaluate::Evaluator;
use sieve_core::format::push_float;
use sieve_core::format::write_atomic;
use sieve_core::metrics::{mean_metrics, rank_order, Metrics};
use sieve_core::Result;

use crate::candidates::Candidate;
use crate::outcome::{Ended, Stop};
use crate::Study;

#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub candidate: Candidate,
    /// Score-window metrics (with several instruments, each metric's mean
    /// over them and the trades summed).
    pub metrics: Metrics,
    /// The objective on the score window (NaN below `min_trades`); with
    /// several instruments, the aggregate of `scores`.
    pub score: f64,
    /// The objective over the full window (aggregated likewise).
    pub full_score: f64,
    /// The objective over the holdout (NaN without one).
    pub holdout_score: f64,
    /// Each instrument's score-window objective, in instrument order (empty
    /// with one instrument).
    pub scores: Vec<f64>,
}

/// How well the screen ranking predicted the verified one.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    pub candidates: usize,
    /// Spearman correlation of screen rank and verified rank.
    pub spearman: f64,
    /// Screen ranks of the verified top 10, best first.
    pub top_screen_ranks: Vec<u64>,
    /// The verified best came from the bottom tenth of the screen ranks:
    /// the sweep probably kept too few candidates.
    pub best_from_bottom_tenth: bool,
}

pub struct Verification {
    /// Best first.
    pub rows: Vec<Verified>,
    pub agreement: Agreement,
    /// The text of `verified.csv`.
    pub csv: String,
}

/// Verifies `candidates` on a pool of `threads` (0 = all cores). `tick` is
/// called once per candidate done, from any worker.
///
/// Setting `cancel` stops it (the candidates in flight finish, the rest are
/// skipped): `Stopped(Interrupted)`, nothing written, the same call redoes
/// it.
pub fn verify(
    study: &Study,
    candidates: Vec<Candidate>,
    threads: usize,
    cancel: Option<&AtomicBool>,
    tick: &(dyn Fn() + Sync),
) -> Result<Ended<Verification>> {
    let pool = sieve_screen::thread_pool(threads)?;
    let cancelled = || cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let verified = pool.install(|| {
        let sets = candidates.iter().map(|c| c.params.as_slice());
        study.with_evaluators(sets, |evals| {
            let rows: Option<Vec<Verified>> = candidates
                .par_iter()
                .map_init(Vec::new, |scratch, candidate| {
                    if cancelled() {
                        return None;
                    }
                    let v = verify_one(study, evals, candidate, scratch);
                    tick();
                    Some(v)
                })
                .collect();
            let mut rows = rows?;
            rows.par_sort_by(|a, b| {
                rank_order(
                    a.score,
                    a.candidate.grid_index,
                    b.score,
                    b.candidate.grid_index,
                )
            });
            let csv = csv_text(study, &rows);
            Some((rows, csv))
        })
    });
    let Some((rows, csv)) = verified else {
        return Ok(Ended::Stopped(Stop::Interrupted));
    };
    let agreement = agreement(&rows);
    Ok(Ended::Done(Verification {
        rows,
        agreement,
        csv,
    }))
}

/// One parameter set on every instrument: each instrument's score, full and
/// holdout objectives from one simulation, then aggregated.
fn verify_one(
    study: &Study,
    evals: &[Evaluator<'_>],
    candidate: &Candidate,
    scratch: &mut Vec<i8>,
) -> Verified {
    let params = &candidate.params;
    let n = evals.len();
    let (mut metrics, mut scores, mut full, mut holdout) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for eval in evals {
        let w = eval.scoring.windows;
        // One simulation scores every window: score first.
        let windows: Vec<_> = [Some(w.score), Some(w.full), w.holdout]
            .into_iter()
            .flatten()
            .collect();
        let m = eval.window_metrics(params, &windows, scratch);
        scores.push(eval.objective(&m[0]));
        full.push(eval.window_objective(&windows[1], &m[1]));
        holdout.push(
            m.get(2)
                .map_or(f64::NAN, |h| eval.window_objective(&windows[2], h)),
        );
        metrics.push(m[0]);
    }
    let aggregation = study.market().aggregation;
    Verified {
        candidate: candidate.clone(),
        metrics: mean_metrics(&metrics),
        score: aggregation.of(&scores),
        full_score: aggregation.of(&full),
        holdout_score: aggregation.of(&holdout),
        scores: if n > 1 { scores } else { Vec::new() },
    }
}

fn agreement(rows: &[Verified]) -> Agreement {
    let n = rows.len();
    let screen: Vec<f64> = rows
        .iter()
        .map(|r| r.candidate.screen_rank as f64)
        .collect();
    let screen_ranks = average_ranks(&screen);
    let verified_ranks: Vec<f64> = (1..=n).map(|r| r as f64).collect();
    let best_position = screen_ranks.first().copied().unwrap_or(f64::NAN);
    Agreement {
        candidates: n,
        spearman: pearson(&screen_ranks, &verified_ranks),
        top_screen_ranks: rows
            .iter()
            .take(10)
            .map(|r| r.candidate.screen_rank)
            .collect(),
        best_from_bottom_tenth: n >= 10 && best_position > 0.9 * n as f64,
    }
}

/// Ranks from 1, ties sharing their average rank.
fn average_ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = avg;
        }
        i = j + 1;
    }
    ranks
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    if a.len() < 2 {
        return f64::NAN;
    }
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    sab / (saa * sbb).sqrt()
}

/// `verified.csv`: `rank,grid_index,<params…>,screen_rank,score,<metrics…>`
/// (score = the verified objective; metrics over the score window).
pub fn write_csv(path: &Path, v: &Verification) -> Result<()> {
    write_atomic(path, v.csv.as_bytes())
}

/// The text of `verified.csv`, rows formatted in parallel (formatting 5,000
/// rows of floats is a measurable share of a whole verification).
fn csv_text(study: &Study, rows: &[Verified]) -> String {
    let mut out = String::from("rank,grid_index");
    for name in study.param_names() {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",screen_rank,score,full_score,holdout_score");
    if study.market().is_several() {
        for name in study.market().names() {
            out.push_str(",score_");
            out.push_str(name);
        }
    }
    for name in Metrics::NAMES {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    let lines: Vec<String> = rows
        .par_iter()
        .enumerate()
        .map(|(rank, r)| {
            let mut line = String::with_capacity(256);
            let _ = write!(line, "{},{}", rank + 1, r.candidate.grid_index);
            for &v in &r.candidate.params {
                line.push(',');
                push_float(&mut line, v);
            }
            let _ = write!(line, ",{},", r.candidate.screen_rank);
            push_float(&mut line, r.score);
            line.push(',');
            push_float(&mut line, r.full_score);
            line.push(',');
            push_float(&mut line, r.holdout_score);
            for &v in &r.scores {
                line.push(',');
                push_float(&mut line, v);
            }
            for (name, v) in Metrics::NAMES.iter().zip(r.metrics.values()) {
                line.push(',');
                // `trades` is a count: no ".0".
                if *name == "trades" {
                    let _ = write!(line, "{}", r.metrics.trades);
                } else {
                    push_float(&mut line, v);
                }
            }
            line.push('\n');
            line
        })
        .collect();
    out.extend(lines);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_by_hand() {
        assert_eq!(pearson(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 1.0);
        assert_eq!(pearson(&[3.0, 2.0, 1.0], &[1.0, 2.0, 3.0]), -1.0);
        // d = (1, −1, 0, 0): 1 − 6·2/(4·15) = 0.8
        let r = pearson(&average_ranks(&[2.0, 1.0, 3.0, 4.0]), &[1.0, 2.0, 3.0, 4.0]);
        assert!((r - 0.8).abs() < 1e-12);
        assert_eq!(average_ranks(&[5.0, 1.0, 5.0]), vec![2.5, 1.0, 2.5]);
    }
}
