//! `best.json`: the selected best of an optimize run, typed. Written by the
//! loop, read by the report and the CLI summary.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use sieve_core::format::TimeStyle;
use sieve_core::metrics::{mean_metrics, Metrics};
use sieve_core::Result;

use crate::files::Num;
use crate::rundir::{BestRecord, IterationRecord, RunDir, RunState};
use crate::settings::{MinImprovement, Selection};

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
    /// The verified objective on the score window (see [`Num`] for how
    /// infinities and NaN are written).
    pub score: Num,
    /// `full`, `score` and (when configured) `holdout`. With several
    /// instruments: each window's objective is the aggregate of theirs, its
    /// metrics their means (trades summed), its span the union of theirs.
    pub windows: IndexMap<String, WindowResult>,
    /// With several instruments, how their objectives combine
    /// (`score.aggregate`, with `", skipping undefined"` when set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<String>,
    /// With several instruments, each one's windows, by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub instruments: IndexMap<String, IndexMap<String, WindowResult>>,
    pub agreement: AgreementRecord,
    /// Iterations recorded in the run.
    pub iterations: usize,
    pub stop_reason: String,
    /// Whether the optimum is likely real (absent while not computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robustness: Option<crate::robust::Robustness>,
    /// With `robust.select = "plateau"`: the chosen candidate and the
    /// argmax one of its iteration, side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionRecord>,
    /// A sampled search (`search.method` other than `"grid"`): which, and
    /// how much of the grid it screened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchRecord>,
}

/// What a sampled search did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    pub method: String,
    pub seed: u64,
    /// Distinct combinations screened, over all iterations.
    pub evaluated: u64,
    /// Combinations of the grid (before its constraints).
    pub grid_size: u64,
}

/// The record of a sampled search (none for the grid).
fn search_record(study: &Study, state: &RunState) -> Option<SearchRecord> {
    let s = study.settings().search;
    (s.method != crate::settings::SearchMethod::Grid).then(|| SearchRecord {
        method: s.method.name().to_string(),
        seed: s.seed,
        evaluated: state.evaluated(),
        grid_size: study.space().size(),
    })
}

/// How the best was chosen, and what the plain maximum would have been.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionRecord {
    /// `plateau (mean)` or `plateau (min)`.
    pub rule: String,
    pub chosen: Choice,
    pub argmax: Choice,
    /// The objective along each swept parameter through the chosen point
    /// (the grid of the iteration that chose it).
    pub surface: Vec<SurfaceSlice>,
}

/// The score-window objective at each value of one parameter, the others
/// at the chosen candidate's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurfaceSlice {
    pub param: String,
    pub values: Vec<f64>,
    pub objectives: Vec<Num>,
}

/// A candidate of the selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub grid_index: u64,
    pub params: IndexMap<String, f64>,
    /// The score-window objective.
    pub objective: Num,
    /// The aggregate of its neighbourhood (what `plateau` ranks by).
    pub neighbourhood: Num,
    /// How many axis neighbours it has on its grid.
    pub neighbours: usize,
    /// The holdout objective, with a holdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout: Option<Num>,
}

/// One window's span (first and last bar, inclusive) and metrics; a NaN
/// metric is written as null, ±∞ as "inf" / "-inf".
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WindowResult {
    pub start: String,
    pub end: String,
    /// `Metrics::NAMES` in order, then `objective`.
    #[serde(flatten)]
    pub metrics: IndexMap<String, Num>,
}

impl Serialize for WindowResult {
    /// The span, then each metric; `trades`, a count, as a whole number.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(2 + self.metrics.len()))?;
        map.serialize_entry("start", &self.start)?;
        map.serialize_entry("end", &self.end)?;
        for (name, v) in &self.metrics {
            match count(name, v.0) {
                Some(n) => map.serialize_entry(name, &n)?,
                None => map.serialize_entry(name, v)?,
            }
        }
        map.end()
    }
}

/// `v` as a count when the metric `name` is one (`trades`) and `v` is
/// whole: JSON then says 25, not 25.0.
pub fn count(name: &str, v: f64) -> Option<u64> {
    (name == "trades" && v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(53)).then_some(v as u64)
}

impl WindowResult {
    /// A metric by name (`objective` too); NaN when undefined or unknown.
    pub fn get(&self, name: &str) -> f64 {
        self.metrics.get(name).map_or(f64::NAN, |v| v.0)
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

    /// The robustness verdict the CLI prints and Python returns (none when
    /// the run computed no robustness).
    pub fn verdict(&self) -> Option<String> {
        let r = self.robustness.as_ref()?;
        let score = self
            .windows
            .get("score")
            .map_or(f64::NAN, |w| w.get("objective"));
        let holdout = self.windows.get("holdout").map(|w| w.get("objective"));
        let verdict = crate::robust::verdict(r, &self.objective, score, holdout);
        Some(crate::robust::verdict_checked(verdict, self.implausible()))
    }

    /// The score window's figures, when beyond what markets give
    /// ([`crate::robust::implausible`]).
    fn implausible(&self) -> Option<String> {
        let w = self.windows.get("score")?;
        let at = |t: &str| sieve_core::data::parse_time(t).ok();
        let days = (at(&w.end)? - at(&w.start)?) as f64 / sieve_core::data::MS_PER_DAY as f64;
        crate::robust::implausible(w.get("sharpe"), w.get("cagr"), days)
    }
}

/// One window of one instrument: its first and last bar times, metrics
/// and objective.
struct Measured {
    kind: String,
    span: (i64, i64),
    metrics: Metrics,
    objective: f64,
}

impl Measured {
    fn result(&self, style: &TimeStyle) -> WindowResult {
        let mut values: IndexMap<String, Num> = Metrics::NAMES
            .iter()
            .zip(self.metrics.values())
            .map(|(n, v)| (n.to_string(), Num(v)))
            .collect();
        values.insert("objective".into(), Num(self.objective));
        WindowResult {
            start: style.format(self.span.0),
            end: style.format(self.span.1),
            metrics: values,
        }
    }
}

/// Every window of every instrument for `params` (one simulation each).
fn measure(study: &Study, params: &[f64]) -> Vec<Vec<Measured>> {
    study.with_evaluators([params], |evals| {
        evals
            .iter()
            .map(|eval| {
                let all: Vec<_> = eval.scoring.windows.all().collect();
                let (_, metrics) = eval.backtest_with_metrics(params, &all);
                all.iter()
                    .zip(&metrics)
                    .map(|(w, m)| Measured {
                        kind: w.kind.to_string(),
                        span: (eval.bars.time[w.start], eval.bars.time[w.end - 1]),
                        metrics: *m,
                        objective: eval.window_objective(w, m),
                    })
                    .collect()
            })
            .collect()
    })
}

/// Every window's result for `params` of the study: the instrument's, or
/// with several the aggregate (see [`Best::windows`]).
pub fn window_results(study: &Study, params: &[f64]) -> IndexMap<String, WindowResult> {
    aggregate_results(study, &measure(study, params))
}

/// Each instrument's windows for `params`, by name; empty with one.
pub fn instrument_results(
    study: &Study,
    params: &[f64],
) -> IndexMap<String, IndexMap<String, WindowResult>> {
    if !study.market().is_several() {
        return IndexMap::new();
    }
    let style = time_style(study);
    study
        .market()
        .names()
        .into_iter()
        .zip(measure(study, params))
        .map(|(name, windows)| {
            let results = windows
                .iter()
                .map(|m| (m.kind.clone(), m.result(&style)))
                .collect();
            (name.to_string(), results)
        })
        .collect()
}

/// One way of writing times across every instrument.
fn time_style(study: &Study) -> TimeStyle {
    let times: Vec<i64> = study
        .market()
        .instruments
        .iter()
        .flat_map(|i| i.bars.time.iter().copied())
        .collect();
    TimeStyle::for_times(&times)
}

fn aggregate_results(study: &Study, measured: &[Vec<Measured>]) -> IndexMap<String, WindowResult> {
    let style = time_style(study);
    let aggregation = study.market().aggregation;
    (0..measured[0].len())
        .map(|k| {
            let of: Vec<&Measured> = measured.iter().map(|windows| &windows[k]).collect();
            let metrics: Vec<Metrics> = of.iter().map(|m| m.metrics).collect();
            let objectives: Vec<f64> = of.iter().map(|m| m.objective).collect();
            let joined = Measured {
                kind: of[0].kind.clone(),
                span: (
                    of.iter().map(|m| m.span.0).min().unwrap_or_default(),
                    of.iter().map(|m| m.span.1).max().unwrap_or_default(),
                ),
                metrics: mean_metrics(&metrics),
                objective: aggregation.of(&objectives),
            };
            (joined.kind.clone(), joined.result(&style))
        })
        .collect()
}

/// One instrument's line of a several-instrument best: its score window's
/// bars, span in days, objective and trades, and its holdout objective.
#[derive(Debug, Clone, PartialEq)]
pub struct InstrumentLine {
    pub name: String,
    pub score_bars: usize,
    pub score_days: f64,
    pub score: f64,
    pub trades: f64,
    pub holdout: Option<f64>,
}

/// Each instrument's line of `best` (empty with one instrument).
pub fn instrument_lines(study: &Study, best: &Best) -> Vec<InstrumentLine> {
    study
        .market()
        .instruments
        .iter()
        .filter_map(|i| {
            let windows = best.instruments.get(&i.name)?;
            let score = windows.get("score");
            let w = i.scoring.windows.score;
            let days = match w.end > w.start {
                true => crate::study::days_spanned(&i.bars.time, w.start..w.end),
                false => 0.0,
            };
            Some(InstrumentLine {
                name: i.name.clone(),
                score_bars: w.end - w.start,
                score_days: days,
                score: score.map_or(f64::NAN, |w| w.get("objective")),
                trades: score.map_or(f64::NAN, |w| w.get("trades")),
                holdout: windows.get("holdout").map(|w| w.get("objective")),
            })
        })
        .collect()
}

/// A mean objective dominated by one short series: its score window spans
/// under half the days of the instruments' median, and its objective is
/// more than half of all the instruments' |objective| together (an
/// annualised ratio over a short span can outweigh every other).
pub fn dominated_mean(study: &Study, lines: &[InstrumentLine]) -> Option<String> {
    let how = study.market().aggregation.how;
    let shares = study.config().scoring().shares;
    dominated(how, shares, study.scoring().objective.name(), lines)
}

fn dominated(
    how: sieve_core::metrics::Aggregate,
    shares: sieve_core::evaluate::Shares,
    objective: &str,
    lines: &[InstrumentLine],
) -> Option<String> {
    if how != sieve_core::metrics::Aggregate::Mean || lines.len() < 2 {
        return None;
    }
    let total: f64 = lines
        .iter()
        .map(|l| l.score.abs())
        .filter(|v| v.is_finite())
        .sum();
    let mut days: Vec<f64> = lines.iter().map(|l| l.score_days).collect();
    days.sort_by(f64::total_cmp);
    let median = days[days.len() / 2];
    let l = lines.iter().find(|l| {
        l.score.is_finite() && l.score.abs() > 0.5 * total && l.score_days < 0.5 * median
    })?;
    let advice = match shares {
        sieve_core::evaluate::Shares::Combined => {
            "score.aggregate = \"median\", or score.shares = \"each\""
        }
        sieve_core::evaluate::Shares::Each => "score.aggregate = \"median\"",
    };
    Some(format!(
        "the mean {objective} is dominated by {}: its score window spans {:.1} days (the instruments' median {:.1}) and its {objective} {} is {:.0}% of all their |{objective}| together; consider {advice}",
        l.name,
        l.score_days,
        median,
        crate::text::human(l.score),
        100.0 * l.score.abs() / total,
    ))
}

/// The iteration and record of the run's best: the highest finite
/// verified objective (an earlier iteration keeps a tie, and a near-tie
/// within `optimize.min_improvement`).
pub(crate) fn best_record<'a>(
    state: &'a RunState,
    min: &MinImprovement,
    plateau: bool,
) -> Option<(&'a IterationRecord, &'a BestRecord)> {
    let mut best: Option<(&IterationRecord, &BestRecord)> = None;
    for rec in &state.iterations {
        let Some(b) = rec.best() else { continue };
        if b.score.is_none() {
            continue;
        }
        // Under `plateau`, compared by the neighbourhood's aggregate.
        let Some(score) = b.selection_score(plateau) else {
            continue;
        };
        if best.is_none_or(|(_, cur)| min.improves(score, cur.selection_score(plateau))) {
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
    let select = study.settings().select;
    let plateau = select != Selection::Argmax;
    let Some((rec, b)) = best_record(state, &study.settings().min_improvement, plateau) else {
        return Ok(None);
    };
    let robustness = if robust && study.market().is_several() {
        // Both rank one return series per candidate; several instruments
        // have several, and no agreed way to pool them.
        Some(crate::robust::Robustness {
            dsr: None,
            pbo: None,
            pbo_skipped: Some(
                "the Deflated Sharpe and the PBO are computed for one instrument; this run has several".into(),
            ),
        })
    } else if robust {
        let verified = dir
            .root
            .join(format!("iter-{:03}", rec.iteration))
            .join("verified.csv");
        let mut candidates = crate::robust::finite_candidates(study, &verified)?;
        // The space those candidates were verified on: its neighbours are
        // what the plateau rule reads.
        let space = sieve_core::grid::ParamSpace::new(
            study.strategy().params(),
            study.axes_of(&rec.grid)?,
            study.space().constraints.clone(),
        )?;
        let pbo = crate::robust::overfitting(study, &mut candidates, Some(&space));
        Some(crate::robust::Robustness {
            dsr: Some(crate::robust::deflated_sharpe(study, state, &b.params)),
            pbo_skipped: pbo.as_ref().err().cloned(),
            pbo: pbo.ok(),
        })
    } else {
        None
    };
    let windows = crate::best::window_results(study, &b.params);
    Ok(Some(Best {
        strategy: study.strategy().name().to_string(),
        objective: study.scoring().objective.name().to_string(),
        iteration: rec.iteration,
        grid_index: b.grid_index,
        screen_rank: b.screen_rank,
        params: study
            .param_names()
            .iter()
            .zip(&b.params)
            .map(|(n, v)| (n.to_string(), *v))
            .collect(),
        // The score window's objective as measured: run.json's record
        // holds an infinite one as ±f64::MAX.
        score: Num(windows
            .get("score")
            .map_or(f64::NAN, |w| w.get("objective"))),
        windows,
        instruments: crate::best::instrument_results(study, &b.params),
        aggregate: study.market().is_several().then(|| {
            let a = study.market().aggregation;
            match a.skip_undefined {
                true => format!("{}, skipping undefined", a.how),
                false => a.how.to_string(),
            }
        }),
        agreement: match &rec.verify {
            Some(v) => AgreementRecord {
                spearman: v.spearman,
                top_screen_ranks: v.top_screen_ranks.clone(),
                best_from_bottom_tenth: v.best_from_bottom_tenth,
            },
            None => AgreementRecord {
                spearman: None,
                top_screen_ranks: Vec::new(),
                best_from_bottom_tenth: false,
            },
        },
        iterations: state.iterations.len(),
        stop_reason: reason.to_string(),
        search: search_record(study, state),
        robustness,
        selection: match (plateau, rec.verify.as_ref().and_then(|v| v.argmax.as_ref())) {
            (true, Some(argmax)) => Some(SelectionRecord {
                rule: select.name().to_string(),
                chosen: choice(study, b),
                argmax: choice(study, argmax),
                surface: surface(study, &rec.grid, &b.params)?,
            }),
            _ => None,
        },
    }))
}

/// The objective along each swept axis of `grid` through `at` (the other
/// parameters held), every point backtested exactly; points the
/// constraints exclude are left out.
fn surface(
    study: &Study,
    grid: &[crate::rundir::AxisRecord],
    at: &[f64],
) -> Result<Vec<SurfaceSlice>> {
    let names = study.param_names();
    let constraints = &study.space().constraints;
    let mut slices: Vec<(String, Vec<Vec<f64>>)> = Vec::new();
    for axis in grid.iter().filter(|a| a.values.len() > 1) {
        let Some(k) = names.iter().position(|n| *n == axis.name) else {
            continue;
        };
        // In the parameter's order, whatever order a `values` list has.
        let mut values = axis.values.clone();
        values.sort_by(f64::total_cmp);
        let points = values
            .iter()
            .map(|&v| {
                let mut p = at.to_vec();
                p[k] = v;
                p
            })
            .filter(|p| constraints.iter().all(|c| c.holds(p)))
            .collect();
        slices.push((axis.name.clone(), points));
    }
    let candidates: Vec<crate::candidates::Candidate> = slices
        .iter()
        .flat_map(|(_, points)| points.iter())
        .map(|p| crate::candidates::Candidate {
            line: 0,
            grid_index: 0,
            screen_rank: 0,
            params: p.clone(),
        })
        .collect();
    let scored: std::collections::HashMap<Vec<u64>, f64> =
        match crate::verify::verify(study, candidates, 0, None, &|| {})? {
            crate::control::Ended::Done(done) => done
                .rows
                .into_iter()
                .map(|r| {
                    (
                        r.candidate.params.iter().map(|v| v.to_bits()).collect(),
                        r.score,
                    )
                })
                .collect(),
            crate::control::Ended::Stopped(_) => Default::default(),
        };
    Ok(slices
        .into_iter()
        .map(|(param, points)| {
            let k = names.iter().position(|n| *n == param).unwrap_or(0);
            SurfaceSlice {
                values: points.iter().map(|p| p[k]).collect(),
                objectives: points
                    .iter()
                    .map(|p| {
                        let key: Vec<u64> = p.iter().map(|v| v.to_bits()).collect();
                        Num(scored.get(&key).copied().unwrap_or(f64::NAN))
                    })
                    .collect(),
                param,
            }
        })
        .collect())
}

/// One candidate of the selection as `best.json` shows it: its parameters,
/// objective, neighbourhood and holdout objective.
fn choice(study: &Study, b: &BestRecord) -> Choice {
    let windows = window_results(study, &b.params);
    let objective = |w: &str| windows.get(w).map(|w| Num(w.get("objective")));
    Choice {
        grid_index: b.grid_index,
        params: study
            .param_names()
            .iter()
            .zip(&b.params)
            .map(|(n, v)| (n.to_string(), *v))
            .collect(),
        objective: objective("score").unwrap_or(Num(f64::NAN)),
        neighbourhood: Num(b.aggregate.unwrap_or(f64::NAN)),
        neighbours: b.neighbours.unwrap_or(0),
        holdout: objective("holdout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rundir::{IterationRecord, RunStatus, Stage, VerifyRecord};

    fn iteration(iteration: u32, score: Option<f64>) -> IterationRecord {
        IterationRecord {
            iteration,
            grid: Vec::new(),
            grid_size: 1,
            indices: None,
            biased: false,
            stage: Stage::Done,
            sweep: None,
            verify: Some(VerifyRecord {
                verify_s: 0.0,
                candidates_verified: 1,
                argmax: None,
                best: Some(BestRecord {
                    grid_index: u64::from(iteration),
                    screen_rank: 1,
                    params: vec![f64::from(iteration)],
                    score,
                    aggregate: None,
                    neighbours: None,
                }),
                spearman: None,
                top_screen_ranks: Vec::new(),
                best_from_bottom_tenth: false,
                refine_from: Vec::new(),
            }),
        }
    }

    fn state(scores: &[Option<f64>]) -> RunState {
        RunState {
            sieve_version: String::new(),
            strategy: String::new(),
            config_hash: String::new(),
            data_hash: String::new(),
            data: String::new(),
            data_path: None,
            instruments: Vec::new(),
            config: String::new(),
            status: RunStatus::Done,
            stop_reason: None,
            elapsed_s: 0.0,
            iterations: (1..).zip(scores).map(|(i, s)| iteration(i, *s)).collect(),
        }
    }

    #[test]
    fn under_plateau_the_aggregate_decides_and_a_cliff_is_beaten() {
        // Iteration 1: the higher objective but a cliff beside it (−∞);
        // iteration 2: a lower objective on a ridge.
        let mut s = state(&[Some(1.0), Some(0.6)]);
        let aggregates = [f64::NEG_INFINITY, 0.5];
        for (rec, a) in s.iterations.iter_mut().zip(aggregates) {
            if let Some(b) = rec.verify.as_mut().and_then(|v| v.best.as_mut()) {
                b.aggregate = Some(a);
            }
        }
        let min = MinImprovement::default();
        let pick = |plateau| best_record(&s, &min, plateau).map(|(rec, _)| rec.iteration);
        assert_eq!(pick(true), Some(2));
        assert_eq!(pick(false), Some(1));
    }

    fn line(name: &str, score_days: usize, score: f64) -> InstrumentLine {
        InstrumentLine {
            name: name.into(),
            // Many bars in few days for the short one: the span decides.
            score_bars: 1728,
            score_days: score_days as f64,
            score,
            trades: 3.0,
            holdout: None,
        }
    }

    /// A mean carried by one short series is flagged; one carried by a
    /// long series, a median, or a short series that does not dominate is
    /// not.
    #[test]
    fn a_mean_dominated_by_a_short_series_is_flagged() {
        use sieve_core::evaluate::Shares;
        use sieve_core::metrics::Aggregate;
        let combined = Shares::Combined;
        let lines = [
            line("A", 2000, 1.2),
            line("B", 1900, 0.8),
            line("C", 3, 311_665.0),
        ];
        let flag = dominated(Aggregate::Mean, combined, "calmar", &lines).unwrap();
        assert!(
            flag.contains("dominated by C")
                && flag.contains("spans 3.0 days")
                && flag.contains("median 1900.0")
                && flag.contains("score.shares = \"each\""),
            "{flag}"
        );
        // Already "each": not advised again.
        let flag = dominated(Aggregate::Mean, Shares::Each, "calmar", &lines).unwrap();
        assert!(!flag.contains("score.shares"), "{flag}");
        assert!(dominated(Aggregate::Median, combined, "calmar", &lines).is_none());
        let long = [
            line("A", 2000, 311_665.0),
            line("B", 1900, 0.8),
            line("C", 3, 1.0),
        ];
        assert!(dominated(Aggregate::Mean, combined, "calmar", &long).is_none());
        let even = [
            line("A", 2000, 1.2),
            line("B", 1900, 0.8),
            line("C", 3, 1.0),
        ];
        assert!(dominated(Aggregate::Mean, combined, "calmar", &even).is_none());
    }

    /// best.json keeps the earlier of two bests a last bit apart (the same
    /// trades, another parameter set), and moves for a real gain, above or
    /// below 0.
    #[test]
    fn the_best_moves_only_for_a_real_gain() {
        let pick = |scores: &[Option<f64>], min: &MinImprovement| {
            best_record(&state(scores), min, false).map(|(rec, _)| rec.iteration)
        };
        let default = MinImprovement::default();
        let (a, b) = (8.425876340775469, 8.425876340775483);
        assert_eq!(pick(&[Some(a), None, Some(b)], &default), Some(1));
        assert_eq!(pick(&[Some(a), Some(b), Some(8.43)], &default), Some(3));
        assert_eq!(pick(&[Some(-0.5), Some(-0.5 + 1e-16)], &default), Some(1));
        assert_eq!(pick(&[Some(-0.5), Some(-0.49)], &default), Some(2));
        assert_eq!(pick(&[None, None], &default), None);
        let none = MinImprovement {
            absolute: 0.0,
            relative: 0.0,
        };
        assert_eq!(pick(&[Some(a), Some(b)], &none), Some(2));
    }
}
