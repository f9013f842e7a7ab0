//! `best.json`: the selected best of an optimize run, typed. Written by the
//! loop, read by the report and the CLI summary.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use sieve_core::format::TimeStyle;
use sieve_core::metrics::Metrics;
use sieve_core::Result;

use crate::rundir::{BestRecord, IterationRecord, RunDir, RunState};

use crate::Study;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Best {
    pub strategy: String,
    pub objective: String,
    /// The iteration that found it.
    pub iteration: u32,
    pub grid_index: u64,
    pub screen_rank: u64,
    /// Every parameter, in strategy order.
    pub params: IndexMap<String, f64>,
    /// The verified objective on the score window.
    pub score: Option<f64>,
    /// `full`, `score` and (when configured) `holdout`.
    pub windows: IndexMap<String, WindowResult>,
    pub agreement: AgreementRecord,
    /// Iterations recorded in the run.
    pub iterations: usize,
    pub stop_reason: String,
    /// Whether the optimum is likely real (absent while not computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<crate::robust::Robustness>,
}

/// One window's span (first and last bar, inclusive) and metrics; a NaN
/// metric is written as null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowResult {
    pub start: String,
    pub end: String,
    /// `Metrics::NAMES` in order, then `objective`.
    #[serde(flatten)]
    pub metrics: IndexMap<String, Option<f64>>,
}

impl WindowResult {
    /// A metric by name (`objective` too); NaN when undefined or unknown.
    pub fn get(&self, name: &str) -> f64 {
        self.metrics
            .get(name)
            .copied()
            .flatten()
            .unwrap_or(f64::NAN)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreementRecord {
    pub spearman: Option<f64>,
    pub top_screen_ranks: Vec<u64>,
    pub best_from_bottom_tenth: bool,
}

impl Best {
    /// The parameter values in strategy order.
    pub fn param_values(&self) -> Vec<f64> {
        self.params.values().copied().collect()
    }
}

/// Every window's result for `params` of the study (one simulation).
pub fn window_results(study: &Study, params: &[f64]) -> IndexMap<String, WindowResult> {
    let all: Vec<_> = study.scoring.windows.all().collect();
    let style = TimeStyle::for_times(&study.bars.time);
    study.with_evaluator([params], |eval| {
        let (_, metrics) = eval.backtest_with_metrics(params, &all);
        all.iter()
            .zip(&metrics)
            .map(|(w, m)| {
                let mut values: IndexMap<String, Option<f64>> = Metrics::NAMES
                    .iter()
                    .zip(m.values())
                    .map(|(n, v)| (n.to_string(), finite_or_none(v)))
                    .collect();
                values.insert(
                    "objective".into(),
                    finite_or_none(eval.window_objective(w, m)),
                );
                let result = WindowResult {
                    start: style.format(study.bars.time[w.start]),
                    end: style.format(study.bars.time[w.end - 1]),
                    metrics: values,
                };
                (w.kind.to_string(), result)
            })
            .collect()
    })
}

/// JSON has no NaN or infinity: both are written as null.
fn finite_or_none(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The iteration and record of the run's best: the highest finite
/// verified objective (an earlier iteration keeps a tie).
fn best_record(state: &RunState) -> Option<(&IterationRecord, &BestRecord)> {
    let mut best: Option<(&IterationRecord, &BestRecord)> = None;
    for rec in &state.iterations {
        let Some(b) = &rec.best else { continue };
        let Some(score) = b.score else { continue };
        if best.is_none_or(|(_, cur)| cur.score.is_none_or(|c| score > c)) {
            best = Some((rec, b));
        }
    }
    best
}

/// `best.json`: the run's best with every window's metrics (holdout
/// included when configured) and the agreement; with `robust`, the
/// Deflated Sharpe and the PBO. `None` while no iteration has a best with
/// a finite objective: an undefined best is never presented.
pub(crate) fn best_json(
    study: &Study,
    dir: &RunDir,
    state: &RunState,
    reason: &str,
    robust: bool,
) -> Result<Option<Best>> {
    let Some((rec, b)) = best_record(state) else {
        return Ok(None);
    };
    let robustness = if robust {
        let verified = dir
            .root
            .join(format!("iter-{:03}", rec.iteration))
            .join("verified.csv");
        let mut candidates = crate::robust::finite_candidates(study, &verified)?;
        let pbo = crate::robust::overfitting(study, &mut candidates);
        Some(crate::robust::Robustness {
            dsr: Some(crate::robust::deflated_sharpe(study, state, &b.params)),
            pbo_skipped: pbo.as_ref().err().cloned(),
            pbo: pbo.ok(),
        })
    } else {
        None
    };
    Ok(Some(Best {
        strategy: study.strategy.name().to_string(),
        objective: study.scoring.objective.name().to_string(),
        iteration: rec.iteration,
        grid_index: b.grid_index,
        screen_rank: b.screen_rank,
        params: study
            .param_names()
            .iter()
            .zip(&b.params)
            .map(|(n, v)| (n.to_string(), *v))
            .collect(),
        score: b.score,
        windows: crate::best::window_results(study, &b.params),
        agreement: AgreementRecord {
            spearman: rec.spearman,
            top_screen_ranks: rec.top_screen_ranks.clone(),
            best_from_bottom_tenth: rec.best_from_bottom_tenth,
        },
        iterations: state.iterations.len(),
        stop_reason: reason.to_string(),
        robustness,
    }))
}
