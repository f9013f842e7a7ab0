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
    /// Why there is no PBO, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pbo_skipped: Option<String>,
}

/// The Deflated Sharpe of the best and its inputs (per-period Sharpes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsrRecord {
    /// The best's Sharpe over the score window, not annualised.
    #[serde(deserialize_with = "nan_if_null")]
    pub sharpe: f64,
    /// T: returns in the score window.
    pub observations: u64,
    #[serde(deserialize_with = "nan_if_null")]
    pub skew: f64,
    /// Raw kurtosis (3 for a normal).
    #[serde(deserialize_with = "nan_if_null")]
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
    /// Distinct candidates: those with the same score-window returns as an
    /// earlier one (by grid index) count once.
    pub candidates: usize,
    /// Verified candidates merged into an earlier one with the same returns.
    #[serde(default)]
    pub identical: usize,
    /// How each split's in-sample pick was made when not by the highest
    /// Sharpe: `plateau (mean)` or `plateau (min)` (`robust.select`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
    pub splits: usize,
    #[serde(deserialize_with = "nan_if_null")]
    pub pbo: f64,
    #[serde(deserialize_with = "nan_if_null")]
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
    let w = study.scoring().windows.score;
    study.with_evaluator([params], |eval| {
        let bt = eval.backtest(params);
        window_returns(
            &bt.equity,
            w.start,
            w.end,
            study.scoring().engine.initial_cash,
        )
    })
}

/// DSR of `best` (strategy-order parameters) over the run's trials.
pub fn deflated_sharpe(study: &Study, state: &RunState, best: &[f64]) -> DsrRecord {
    let shape = dsr::ReturnShape::of(&score_returns(study, best));
    let swept = || state.iterations.iter().filter_map(|i| i.sweep.as_ref());
    let trials: u64 = swept().map(|s| s.combinations_evaluated).sum();
    // V is known only when every iteration's backend computed it; an
    // evolutionary generation's samples, bunched near the earlier bests,
    // would shrink it (and inflate the DSR): V is its uniform first
    // generation's.
    let mut stats = Some(ObjectiveStats::default());
    let uniform = state.iterations.iter().filter(|i| !i.biased);
    for sweep in uniform.filter_map(|i| i.sweep.as_ref()) {
        stats = stats.zip(sweep.sharpe_stats.as_ref()).map(|(mut s, m)| {
            s.combine(&ObjectiveStats::from(m));
            s
        });
    }
    let variance = stats.map(|s| s.variance());
    dsr_record(&shape, trials, variance)
}

/// The DSR record of a best whose score-window returns have `shape`, found
/// among `trials` whose Sharpes have `variance` (unknown: no DSR).
pub fn dsr_record(shape: &dsr::ReturnShape, trials: u64, variance: Option<f64>) -> DsrRecord {
    let variance = variance.filter(|v| v.is_finite());
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
            .map(|sr0| dsr::deflated_sharpe(shape, sr0))
            .filter(|d| d.is_finite()),
    }
}

/// PBO over `candidates` (grid index, parameters), those of `verified.csv`
/// with a finite score; `Err(why)` when it cannot be computed. With `grid`
/// (the space they were verified on) and `robust.select = "plateau"`, each
/// split's in-sample pick is made by the plateau rule over their axis
/// neighbours on it.
pub fn overfitting(
    study: &Study,
    candidates: &mut [(u64, Vec<f64>)],
    grid: Option<&sieve_core::grid::ParamSpace>,
) -> std::result::Result<PboRecord, String> {
    if candidates.len() < 2 {
        return Err(format!(
            "{} verified candidate(s) with a finite score; the PBO needs at least 2",
            candidates.len()
        ));
    }
    // Grid-index order: an in-sample tie goes to the lower index.
    candidates.sort_by_key(|c| c.0);
    let blocks = study.settings().pbo_blocks;
    let w = study.scoring().windows.score;
    pbo_fits(w.end - w.start, blocks)?;
    let cash = study.scoring().engine.initial_cash;
    let measure = |sets: &[Vec<f64>]| -> Vec<(u64, Vec<pbo::BlockSums>)> {
        study.with_evaluator(sets.iter().map(Vec::as_slice), |eval| {
            sets.par_iter()
                .map(|p| {
                    let bt = eval.backtest(p);
                    block_fingerprint(&window_returns(&bt.equity, w.start, w.end, cash), blocks)
                })
                .collect()
        })
    };
    let sets: Vec<Vec<f64>> = candidates.iter().map(|c| c.1.clone()).collect();
    let measured = measure(&sets);
    let plateau = match (study.settings().select, grid) {
        (crate::settings::Selection::Plateau(how), Some(space)) => Some((how, space)),
        _ => None,
    };
    let Some((how, space)) = plateau else {
        return pbo_record(measured, blocks, None, &|| false);
    };
    // The neighbours of every candidate, measured too (once each).
    let key = |p: &[f64]| p.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
    let mut index: std::collections::HashMap<Vec<u64>, usize> =
        sets.iter().enumerate().map(|(i, p)| (key(p), i)).collect();
    let mut extra: Vec<Vec<f64>> = Vec::new();
    let near: Vec<Vec<usize>> = sets
        .iter()
        .map(|p| {
            crate::plateau::neighbours(space, p, &study.space().axes)
                .into_iter()
                .map(|q| {
                    let next = sets.len() + extra.len();
                    *index.entry(key(&q)).or_insert_with(|| {
                        extra.push(q.clone());
                        next
                    })
                })
                .collect()
        })
        .collect();
    let mut all = measured;
    all.extend(measure(&extra));
    pbo_record(all, blocks, Some((&near, how)), &|| false)
}

/// A candidate's score-window returns as the PBO reads them: their hash
/// (to merge candidates with the same returns) and their block sums.
pub fn block_fingerprint(returns: &[f64], blocks: usize) -> (u64, Vec<pbo::BlockSums>) {
    (series_hash(returns), pbo::block_sums(returns, blocks))
}

/// Whether a score window of `bars` bars can be cut into `blocks`.
pub fn pbo_fits(bars: usize, blocks: usize) -> std::result::Result<(), String> {
    match bars < 2 * blocks {
        true => Err(format!(
            "the score window has {bars} bars, fewer than 2 per block (robust.pbo_blocks = {blocks})"
        )),
        false => Ok(()),
    }
}

/// The PBO of candidates given by [`block_fingerprint`], in the order that
/// breaks an in-sample tie (the earlier wins). With `plateau`, `measured`
/// holds the candidates' neighbours after the candidates (`neighbours[i]`
/// indexes it) and the pick is the plateau rule's.
pub fn pbo_record(
    measured: Vec<(u64, Vec<pbo::BlockSums>)>,
    blocks: usize,
    plateau: Option<(&[Vec<usize>], crate::settings::NeighbourAggregate)>,
    stopped: &(dyn Fn() -> bool + Sync),
) -> std::result::Result<PboRecord, String> {
    let total = plateau.map_or(measured.len(), |(near, _)| near.len());
    // Candidates with the same trades have the same returns: one candidate
    // (the earliest), not several whose last-bit differences decide CSCV.
    // (Their series stay for the neighbours that read them.)
    let mut seen = std::collections::HashSet::new();
    let kept: Vec<usize> = (0..total)
        .filter(|&i| seen.insert((measured[i].0, sums_bits(&measured[i].1))))
        .collect();
    let mut sums: Vec<Vec<pbo::BlockSums>> = kept.iter().map(|&i| measured[i].1.clone()).collect();
    let near: Vec<Vec<usize>> = match plateau {
        Some((near, _)) => {
            // Every series after the kept candidates, in its old order.
            let mut at = vec![usize::MAX; measured.len()];
            for (k, &i) in kept.iter().enumerate() {
                at[i] = k;
            }
            for (i, m) in measured.iter().enumerate() {
                if at[i] == usize::MAX {
                    at[i] = sums.len();
                    sums.push(m.1.clone());
                }
            }
            kept.iter()
                .map(|&i| near[i].iter().map(|&j| at[j]).collect())
                .collect()
        }
        None => Vec::new(),
    };
    let identical = total - kept.len();
    if kept.len() < 2 {
        return Err(format!(
            "the {total} verified candidates with a finite score have {} distinct return series; the PBO needs at least 2",
            kept.len()
        ));
    }
    let pick = match plateau {
        Some((_, how)) => pbo::Pick::Plateau {
            neighbours: &near,
            how,
        },
        None => pbo::Pick::Argmax,
    };
    let r = pbo::pbo_picking_until(&sums, kept.len(), blocks, pick, stopped)
        .ok_or_else(|| "stopped before it was computed".to_string())?;
    let pick = plateau.map(|(_, how)| crate::settings::Selection::Plateau(how).name().to_string());
    let step = r.picks.len().div_ceil(2000).max(1);
    Ok(PboRecord {
        blocks: r.blocks,
        candidates: r.candidates,
        identical,
        pick,
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

/// A 64-bit FNV-1a hash of a return series' bits (confirmed by the block
/// sums' bits, so a collision cannot merge two different series that also
/// differ in any block sum).
fn series_hash(returns: &[f64]) -> u64 {
    returns.iter().fold(0xcbf2_9ce4_8422_2325, |h, r| {
        (h ^ r.to_bits()).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn sums_bits(sums: &[pbo::BlockSums]) -> Vec<[u64; 3]> {
    sums.iter()
        .map(|b| [b.n.to_bits(), b.sum.to_bits(), b.sum_sq.to_bits()])
        .collect()
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
    // Edges on multiples of the width, so 0 is an edge and no bin mixes
    // λ ≤ 0 with λ > 0 (the report colours bins by side). Bins are
    // (edge, edge + width]: λ = 0 falls in the bin left of 0, with the
    // overfit splits.
    let width = if hi > lo {
        (hi - lo) / bins as f64
    } else {
        1.0
    };
    let first = (lo / width).ceil() as i64 - 1;
    let last = (hi / width).ceil() as i64;
    let edges: Vec<f64> = (first..=last).map(|k| k as f64 * width).collect();
    let mut counts = vec![0u64; edges.len() - 1];
    for v in finite {
        let i = ((v / width).ceil() as i64 - 1 - first).clamp(0, counts.len() as i64 - 1);
        counts[i as usize] += 1;
    }
    Histogram { edges, counts }
}

/// The verified candidates of `verified.csv` with a finite score:
/// (grid index, parameters).
pub fn finite_candidates(study: &Study, path: &Path) -> Result<Vec<(u64, Vec<f64>)>> {
    let list = crate::candidates::read(path, study.strategy(), None)?;
    let scores = crate::files::read_column(path, "score")?;
    Ok(list
        .into_iter()
        .zip(scores)
        .filter(|(_, s)| s.is_finite())
        .map(|(c, _)| (c.grid_index, c.params))
        .collect())
}

/// The plain-language verdict, with the numbers it rests on. Each of PBO,
/// DSR and the holdout is a check that fails (PBO > 0.5, DSR < 0.5, holdout
/// objective ≤ 0 while the score window's is positive), passes (PBO ≤ 0.2,
/// DSR ≥ 0.95, holdout objective > 0) or is neutral. Two failures: likely
/// overfit; no failure and at least two passes: plausibly real; else mixed.
/// (One failure alone is not enough: PBO, for one, measures whether picking
/// among candidates that share an edge helps, not whether the edge exists.)
pub fn verdict(r: &Robustness, objective: &str, score: f64, holdout: Option<f64>) -> String {
    let mut numbers = Vec::new();
    let (mut bad, mut good) = (0, 0);
    // The name of the last check judged, and whether it failed.
    let mut last = ("", false);
    let mut judge = |name: &'static str, failed: bool, passed: bool| {
        bad += usize::from(failed);
        good += usize::from(passed);
        last = (name, failed);
    };
    if let Some(p) = &r.pbo {
        numbers.push(format!("PBO {:.2}", p.pbo));
        judge("PBO", p.pbo > 0.5, p.pbo <= 0.2);
    }
    if let Some(d) = r.dsr.as_ref().and_then(|d| d.dsr) {
        numbers.push(format!("DSR {d:.2}"));
        judge("DSR", d < 0.5, d >= 0.95);
    }
    if let Some(h) = holdout {
        numbers.push(format!(
            "holdout {objective} {} vs {} in the score window",
            short(h),
            short(score)
        ));
        judge("holdout", h <= 0.0 && score > 0.0 || h.is_nan(), h > 0.0);
    }
    if numbers.is_empty() {
        return "inconclusive: no robustness numbers could be computed".into();
    }
    // One check alone is not evidence either way; a failed one is a warning.
    if numbers.len() == 1 {
        let (name, failed) = last;
        let how = match failed {
            true => format!("the {name} failed"),
            false => format!("only the {name} could be checked"),
        };
        return format!("insufficient evidence; {how}: {}", numbers[0]);
    }
    let word = if bad >= 2 {
        "likely overfit"
    } else if bad == 0 && good >= 2 {
        "plausibly real"
    } else {
        "mixed evidence"
    };
    format!("{word}: {}", numbers.join(", "))
}

/// The highest annualised Sharpe ratio a score window may show before the
/// verdict doubts it. The best long-run funds show 1 to 3; a sustained 5
/// is high-frequency market making's, not a bar strategy's.
pub const PLAUSIBLE_SHARPE: f64 = 5.0;

/// The highest compounded yearly growth (CAGR, 3.0 = 300 %) a score window
/// may show before the verdict doubts it: a few traders ever sustain it.
pub const PLAUSIBLE_CAGR: f64 = 3.0;

/// What the verdict adds when the score window's figures are beyond what
/// markets give (over at least
/// [`ANNUALIZED_MIN_DAYS`](crate::study::ANNUALIZED_MIN_DAYS) days, where
/// annualised figures are not a short window's extrapolation): the usual
/// cause is look-ahead in user signals, columns or indicators.
pub fn implausible(sharpe: f64, cagr: f64, days: f64) -> Option<String> {
    if days.is_nan() || days < crate::study::ANNUALIZED_MIN_DAYS {
        return None;
    }
    let mut beyond = Vec::new();
    if sharpe > PLAUSIBLE_SHARPE {
        beyond.push(format!("an annualised Sharpe of {}", short(sharpe)));
    }
    if cagr > PLAUSIBLE_CAGR {
        beyond.push(format!("a CAGR of {} %", short(cagr * 100.0)));
    }
    (!beyond.is_empty()).then(|| {
        format!(
            "implausible: the score window shows {} over {days:.0} days, beyond what markets give (a Sharpe above {PLAUSIBLE_SHARPE}, a CAGR above {} %); look-ahead in your signals, data columns or indicators (a value that knows a later bar) is the usual cause",
            beyond.join(" and "),
            PLAUSIBLE_CAGR * 100.0
        )
    })
}

/// `verdict`, then the [`implausible`] warning when there is one.
pub fn verdict_checked(verdict: String, implausible: Option<String>) -> String {
    match implausible {
        Some(why) => format!("{verdict}. {why}"),
        None => verdict,
    }
}

/// Two decimals for everyday values; beyond a million, NaN and ±∞ as
/// [`human`](crate::text::human) writes them.
fn short(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e6 {
        format!("{v:.2}")
    } else {
        crate::text::human(v)
    }
}

/// JSON writes NaN as null; read it back as NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_bins_have_zero_as_an_edge() {
        // Width 0.5, edges on its multiples: (−1.5, −1], (−1, −0.5],
        // (−0.5, 0], (0, 0.5], (0.5, 1]; λ = 0 falls left of 0.
        let h = histogram(&[-1.0, -0.5, 0.0, 0.3, 1.0], 4);
        assert_eq!(h.edges, vec![-1.5, -1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(h.counts, vec![1, 1, 1, 1, 1]);
        let overfit: u64 = h
            .edges
            .windows(2)
            .zip(&h.counts)
            .filter(|(e, _)| e[1] <= 0.0)
            .map(|(_, c)| c)
            .sum();
        assert_eq!(overfit, 3, "the λ ≤ 0 values, exactly");
    }

    /// The plausibility check's thresholds, by hand: above a Sharpe of 5
    /// or a CAGR of 300 % over at least 180 days; a shorter window is an
    /// extrapolation, warned about elsewhere.
    #[test]
    fn figures_beyond_markets_are_implausible_over_half_a_year() {
        let said = implausible(6.0, 0.5, 365.0).unwrap();
        assert!(
            said.contains("an annualised Sharpe of 6.00 over 365 days"),
            "{said}"
        );
        assert!(said.contains("look-ahead"), "{said}");
        let said = implausible(1.0, 4.0, 200.0).unwrap();
        assert!(
            said.contains("a CAGR of 400.00 %") && !said.contains("Sharpe of"),
            "{said}"
        );
        assert_eq!(implausible(5.0, 3.0, 365.0), None, "at the limits");
        assert_eq!(implausible(40.0, 1e8, 179.0), None, "a short window");
        assert_eq!(implausible(f64::NAN, f64::NAN, 365.0), None);
        assert_eq!(
            verdict_checked("plausibly real: PBO 0.1".into(), None),
            "plausibly real: PBO 0.1"
        );
    }

    #[test]
    fn one_failed_check_is_mixed_two_are_overfit() {
        let r = |pbo: f64, dsr: f64| Robustness {
            dsr: Some(DsrRecord {
                sharpe: 0.05,
                observations: 1000,
                skew: 0.0,
                kurtosis: 3.0,
                trials: 100,
                sharpe_variance: Some(1e-4),
                expected_max_sharpe: Some(0.02),
                dsr: Some(dsr),
            }),
            pbo: Some(PboRecord {
                blocks: 16,
                candidates: 100,
                identical: 0,
                pick: None,
                splits: 12870,
                pbo,
                prob_oos_loss: 0.1,
                degradation_slope: None,
                degradation_intercept: None,
                logit_histogram: Histogram {
                    edges: vec![],
                    counts: vec![],
                },
                picks: vec![],
            }),
            pbo_skipped: None,
        };
        let v = |pbo, dsr, h| verdict(&r(pbo, dsr), "calmar", 1.0, Some(h));
        assert!(v(0.81, 0.54, -0.19)
            .starts_with("likely overfit: PBO 0.81, DSR 0.54, holdout calmar -0.19 vs 1.00"));
        assert!(v(0.57, 0.87, 1.38).starts_with("mixed evidence"));
        assert!(v(0.1, 0.99, 0.5).starts_with("plausibly real"));
        assert!(v(0.3, 0.3, -0.5).starts_with("likely overfit"));
        // The holdout alone (no PBO, no DSR): a failure is not "mixed".
        let none = Robustness {
            dsr: None,
            pbo: None,
            pbo_skipped: Some("too few candidates".into()),
        };
        assert_eq!(
            verdict(&none, "sharpe", 8.05, Some(-7.6)),
            "insufficient evidence; the holdout failed: holdout sharpe -7.60 vs 8.05 in the score window"
        );
        assert!(verdict(&none, "sharpe", 1.0, Some(0.8))
            .starts_with("insufficient evidence; only the holdout could be checked"));
    }
}
