//! The robustness stage: is the optimum real? The Deflated Sharpe Ratio of
//! the best (its trials: every combination the run screened) and the PBO
//! of the verified candidates of the best's iteration, both from exact
//! f64 backtests. The formulas live in `sieve_core::robust`.

use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sieve_core::robust::{dsr, pbo, window_returns};
use sieve_core::Result;
use sieve_screen::ObjectiveStats;

use crate::rundir::RunState;
use crate::Study;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Robustness {
    pub dsr: Option<DsrRecord>,
    pub pbo: Option<PboRecord>,
}

/// The Deflated Sharpe of the best and its inputs (per-period Sharpes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsrRecord {
    /// The best's Sharpe over the score window, not annualised.
    pub sharpe: f64,
    /// T: returns in the score window.
    pub observations: u64,
    pub skew: f64,
    /// Raw kurtosis (3 for a normal).
    pub kurtosis: f64,
    /// N: combinations screened over all iterations.
    pub trials: u64,
    /// V: variance of the screened combinations' Sharpes.
    pub sharpe_variance: Option<f64>,
    /// SR₀: the best Sharpe N trials of noise would show.
    pub expected_max_sharpe: Option<f64>,
    pub dsr: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PboRecord {
    pub blocks: usize,
    pub candidates: usize,
    pub splits: usize,
    pub pbo: f64,
    pub prob_oos_loss: f64,
    pub degradation_slope: Option<f64>,
    pub degradation_intercept: Option<f64>,
    /// Histogram of the splits' logits λ: `counts[i]` in
    /// [`edges[i]`, `edges[i + 1]`).
    pub logit_histogram: Histogram,
    /// (IS, OOS) Sharpe of each split's pick, for the degradation chart
    /// (at most 2,000, evenly spaced over the splits).
    pub picks: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub edges: Vec<f64>,
    pub counts: Vec<u64>,
}

/// The score-window returns of `params` (exact engine).
pub fn score_returns(study: &Study, params: &[f64]) -> Vec<f64> {
    let w = study.scoring.windows.score;
    study.with_evaluator([params], |eval| {
        let bt = eval.backtest(params);
        window_returns(
            &bt.equity,
            w.start,
            w.end,
            study.scoring.engine.initial_cash,
        )
    })
}

/// DSR of `best` (strategy-order parameters) over the run's trials.
pub fn deflated_sharpe(study: &Study, state: &RunState, best: &[f64]) -> DsrRecord {
    let shape = dsr::ReturnShape::of(&score_returns(study, best));
    let trials: u64 = state
        .iterations
        .iter()
        .filter_map(|i| i.combinations_evaluated)
        .sum();
    // V is known only when every iteration's backend computed it.
    let finished = state
        .iterations
        .iter()
        .filter(|i| i.combinations_evaluated.is_some());
    let mut stats = Some(ObjectiveStats::default());
    for it in finished {
        stats = stats.zip(it.sharpe_stats.as_ref()).map(|(mut s, m)| {
            s.combine(&ObjectiveStats::from(m));
            s
        });
    }
    let variance = stats.map(|s| s.variance()).filter(|v| v.is_finite());
    let sr0 = variance
        .map(|v| dsr::expected_max_sharpe(v, trials as f64))
        .filter(|v| v.is_finite());
    DsrRecord {
        sharpe: shape.sharpe,
        observations: shape.observations,
        skew: shape.skew,
        kurtosis: shape.kurtosis,
        trials,
        sharpe_variance: variance,
        expected_max_sharpe: sr0,
        dsr: sr0
            .map(|sr0| dsr::deflated_sharpe(&shape, sr0))
            .filter(|d| d.is_finite()),
    }
}

/// PBO over `candidates` (grid index, parameters), those of `verified.csv`
/// with a finite score; `None` below two candidates.
pub fn overfitting(study: &Study, candidates: &mut [(u64, Vec<f64>)]) -> Option<PboRecord> {
    if candidates.len() < 2 {
        return None;
    }
    // Grid-index order: an in-sample tie goes to the lower index.
    candidates.sort_by_key(|c| c.0);
    let blocks = study.settings.pbo_blocks;
    let w = study.scoring.windows.score;
    if w.end - w.start < 2 * blocks {
        return None; // fewer than two returns per block
    }
    let cash = study.scoring.engine.initial_cash;
    let sums: Vec<Vec<pbo::BlockSums>> =
        study.with_evaluator(candidates.iter().map(|c| c.1.as_slice()), |eval| {
            candidates
                .par_iter()
                .map(|(_, p)| {
                    let bt = eval.backtest(p);
                    pbo::block_sums(&window_returns(&bt.equity, w.start, w.end, cash), blocks)
                })
                .collect()
        });
    let r = pbo::pbo(&sums, blocks);
    let step = r.picks.len().div_ceil(2000).max(1);
    Some(PboRecord {
        blocks: r.blocks,
        candidates: r.candidates,
        splits: r.splits,
        pbo: r.pbo,
        prob_oos_loss: r.prob_oos_loss,
        degradation_slope: r
            .degradation_slope
            .is_finite()
            .then_some(r.degradation_slope),
        degradation_intercept: r
            .degradation_intercept
            .is_finite()
            .then_some(r.degradation_intercept),
        logit_histogram: histogram(&r.logits, 20),
        picks: r
            .picks
            .iter()
            .step_by(step)
            .copied()
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .collect(),
    })
}

/// `bins` equal bins over the finite values' range.
fn histogram(values: &[f64], bins: usize) -> Histogram {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if finite.is_empty() {
        return Histogram {
            edges: Vec::new(),
            counts: Vec::new(),
        };
    }
    let width = if hi > lo {
        (hi - lo) / bins as f64
    } else {
        1.0
    };
    let edges: Vec<f64> = (0..=bins).map(|i| lo + i as f64 * width).collect();
    let mut counts = vec![0u64; bins];
    for v in finite {
        let i = (((v - lo) / width) as usize).min(bins - 1);
        counts[i] += 1;
    }
    Histogram { edges, counts }
}

/// The verified candidates of `verified.csv` with a finite score:
/// (grid index, parameters).
pub fn finite_candidates(study: &Study, path: &Path) -> Result<Vec<(u64, Vec<f64>)>> {
    let list = crate::candidates::read(path, study.strategy, None)?;
    let scores = crate::files::read_column(path, "score")?;
    Ok(list
        .into_iter()
        .zip(scores)
        .filter(|(_, s)| s.is_finite())
        .map(|(c, _)| (c.grid_index, c.params))
        .collect())
}

/// The plain-language verdict, with the numbers it rests on.
pub fn verdict(r: &Robustness, objective: &str, score: f64, holdout: Option<f64>) -> String {
    let mut numbers = Vec::new();
    let mut bad = 0;
    let mut good = 0;
    if let Some(p) = &r.pbo {
        numbers.push(format!("PBO {:.2}", p.pbo));
        if p.pbo > 0.5 {
            bad += 1;
        } else if p.pbo <= 0.2 {
            good += 1;
        }
    }
    if let Some(d) = r.dsr.as_ref().and_then(|d| d.dsr) {
        numbers.push(format!("DSR {d:.2}"));
        if d < 0.5 {
            bad += 1;
        } else if d >= 0.95 {
            good += 1;
        }
    }
    if let Some(h) = holdout {
        numbers.push(format!(
            "holdout {objective} {} vs {} in the score window",
            short(h),
            short(score)
        ));
        if h <= 0.0 && score > 0.0 {
            bad += 1;
        } else if h > 0.0 {
            good += 1;
        }
    }
    let word = if bad > 0 {
        "likely overfit"
    } else if good == numbers.len() && !numbers.is_empty() {
        "plausibly real"
    } else {
        "inconclusive"
    };
    if numbers.is_empty() {
        return "inconclusive: no robustness numbers could be computed".into();
    }
    format!("{word}: {}", numbers.join(", "))
}

fn short(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "NaN".into()
    }
}
