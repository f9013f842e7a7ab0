//! `sieve walkforward`: the whole optimize loop per fold, each fold's train
//! window as its score window, its best then judged on the test window that
//! follows. Fold k: s_k = start + k·step; train = [s_k, s_k + train)
//! (anchored: [start, s_k + train)); test = [s_k + train, s_k + train +
//! test). Folds continue while a test window starts before the end of the
//! data (before `holdout_start` when set: the holdout stays untouched); a
//! last test window cut short is kept and marked partial.
//!
//! `DIR/fold-NNN/` is each fold's complete optimize run folder (so a fold
//! resumes like any run); a finished fold is read, never rerun.

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use crate::settings::{Span, WalkForward};
use chrono::{DateTime, Months};
use serde::{Deserialize, Serialize};
use sieve_core::data::{Bars, MS_PER_DAY};
use sieve_core::format::{float, push_float};
use sieve_core::metrics::{Drawdown, ReturnMoments, Window, WindowKind, Windows};
use sieve_core::robust::window_returns;
use sieve_core::{Error, Result};

use crate::best::Best;
use crate::control::{Ended, Observer, OptimizeOptions, Stop};
use crate::files::Num;
use crate::optimize;
use crate::rundir::{RunDir, RunKind};
use crate::{files, Study};

/// One fold: bar ranges and the instants that bound them.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    /// From 1.
    pub index: usize,
    pub train: Range<usize>,
    pub test: Range<usize>,
    /// The test window was cut short by the end of the data (or holdout).
    pub partial: bool,
    /// Window boundaries (unix ms): starts inclusive, ends exclusive.
    pub train_start_ms: i64,
    pub train_end_ms: i64,
    pub test_start_ms: i64,
    pub test_end_ms: i64,
}

/// Where a length from `from` ends, as an instant (calendar lengths).
fn add_span(from: i64, span: Span, times: u32) -> Option<i64> {
    let t = DateTime::from_timestamp_millis(from)?;
    let out = match span {
        Span::Days(n) => {
            t.checked_add_signed(chrono::Duration::days(i64::from(n) * i64::from(times)))?
        }
        Span::Weeks(n) => {
            t.checked_add_signed(chrono::Duration::weeks(i64::from(n) * i64::from(times)))?
        }
        Span::Months(n) => t.checked_add_months(Months::new(n.checked_mul(times)?))?,
        Span::Years(n) => {
            t.checked_add_months(Months::new(n.checked_mul(12)?.checked_mul(times)?))?
        }
        Span::Bars(_) => return None,
    };
    Some(out.timestamp_millis())
}

fn bars_of(span: Span) -> usize {
    match span {
        Span::Bars(n) => n as usize,
        _ => 0,
    }
}

/// The time of bar `i`, or where bar `n` would be (one spacing past the
/// last) for an end at the end of the data.
fn bar_time(bars: &Bars, i: usize) -> i64 {
    let n = bars.len();
    if i < n {
        bars.time[i]
    } else if n >= 2 {
        bars.time[n - 1] + (bars.time[n - 1] - bars.time[n - 2])
    } else {
        bars.time[n - 1] + MS_PER_DAY
    }
}

/// The folds of `wf` over `bars[..limit]` (limit: the holdout's first bar,
/// or the number of bars).
pub fn folds(bars: &Bars, wf: &WalkForward, limit: usize) -> Result<Vec<Fold>> {
    let start_bar = wf.start.map_or(0, |t| bars.index_at_or_after(t));
    if start_bar >= limit {
        return Err(Error::config(
            sieve_core::key::WALKFORWARD_START,
            "is at or after the end of the data (or the holdout)",
        ));
    }
    let mut out = Vec::new();
    for k in 0.. {
        let k32 = u32::try_from(k).map_err(|_| Error::Invalid("too many folds".into()))?;
        // (train start, train end, test end) as bar indices and instants.
        let (ts, te, xe, ts_ms, te_ms, xe_ms) = if wf.train.is_bars() {
            let s = start_bar + k * bars_of(wf.step);
            let ts = if wf.anchored { start_bar } else { s };
            let te = s + bars_of(wf.train);
            let xe = te + bars_of(wf.test);
            (
                ts,
                te,
                xe,
                bar_time(bars, ts.min(bars.len())),
                bar_time(bars, te.min(bars.len())),
                bar_time(bars, xe.min(bars.len())),
            )
        } else {
            let origin = wf.start.unwrap_or(bars.time[start_bar]);
            let overflow = || Error::Invalid("walk-forward dates out of range".into());
            let s = add_span(origin, wf.step, k32).ok_or_else(overflow)?;
            let ts_ms = if wf.anchored { origin } else { s };
            let te_ms = add_span(s, wf.train, 1).ok_or_else(overflow)?;
            let xe_ms = add_span(te_ms, wf.test, 1).ok_or_else(overflow)?;
            let at = |t: i64| bars.index_at_or_after(t);
            (at(ts_ms), at(te_ms), at(xe_ms), ts_ms, te_ms, xe_ms)
        };
        if te >= limit {
            break; // no test bar before the end
        }
        // Cut short: past the limit in bars, or (calendar) ending after the
        // instant where the data (or the holdout's first bar) stops.
        let partial = xe > limit || (!wf.train.is_bars() && xe_ms > bar_time(bars, limit));
        let test_end = xe.min(limit);
        out.push(Fold {
            index: k + 1,
            train: ts..te,
            test: te..test_end,
            partial,
            train_start_ms: ts_ms,
            train_end_ms: te_ms,
            test_start_ms: te_ms,
            test_end_ms: if partial {
                bar_time(bars, limit)
            } else {
                xe_ms
            },
        });
    }
    if out.is_empty() {
        return Err(Error::config(
            "walkforward",
            format!(
                "no fold fits: the first train window ({}) reaches the end of the data",
                wf.train
            ),
        ));
    }
    if let Some(f) = out.iter().find(|f| f.train.end - f.train.start < 2) {
        return Err(Error::config(
            "walkforward",
            format!(
                "fold {} has fewer than 2 train bars; lengthen walkforward.train",
                f.index
            ),
        ));
    }
    Ok(out)
}

/// A warning when the objective compounds to a yearly rate (cagr, calmar)
/// and some fold's train or test window spans less than
/// [`ANNUALIZED_MIN_DAYS`](crate::study::ANNUALIZED_MIN_DAYS) days: which
/// folds, and the shortest span.
pub fn short_fold_windows(study: &Study, folds: &[Fold]) -> Option<String> {
    let min_days = crate::study::ANNUALIZED_MIN_DAYS;
    let time = &study.bars().time;
    let mut short = Vec::new();
    let train: fn(&Fold) -> &Range<usize> = |f| &f.train;
    let test: fn(&Fold) -> &Range<usize> = |f| &f.test;
    for (what, window) in [("train", train), ("test", test)] {
        let hit: Vec<(usize, f64)> = folds
            .iter()
            .map(|f| (f.index, crate::study::days_spanned(time, window(f).clone())))
            .filter(|&(_, d)| d < min_days)
            .collect();
        if let Some(shortest) = hit.iter().map(|h| h.1).reduce(f64::min) {
            let which: Vec<String> = hit.iter().map(|h| h.0.to_string()).collect();
            short.push(format!(
                "the {what} window of fold(s) {} (shortest {shortest:.0} days)",
                which.join(", ")
            ));
        }
    }
    if short.is_empty() {
        return None;
    }
    let which = format!("{} span(s) less than {min_days} days", short.join(" and "));
    crate::study::extrapolation_warning(study.scoring().objective, &which)
}

/// One fold's outcome (a row of `walkforward.csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoldResult {
    pub fold: usize,
    pub params: Option<Vec<f64>>,
    pub train_score: f64,
    pub test_score: f64,
    /// Why the test score is undefined (empty when it is defined).
    #[serde(default)]
    pub note: String,
}

/// `walkforward.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub folds: usize,
    pub folds_with_a_best: usize,
    /// Mean test score / mean train score, over the same folds: those whose
    /// train and test scores are both defined.
    pub efficiency: Num,
    /// The folds the efficiency is over.
    pub efficiency_folds: usize,
    /// Share of folds whose test score is above 0.
    pub positive_share: f64,
    /// Metrics of the test windows' returns concatenated, each from its own
    /// fold's parameters.
    pub stitched: Stitched,
    /// A sampled search in every fold (`search.method` other than
    /// `"grid"`): which, its seed and its budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stitched {
    pub start: String,
    pub end: String,
    pub bars: usize,
    pub total_return: Num,
    pub cagr: Num,
    pub max_drawdown: Num,
    pub calmar: Num,
    pub sharpe: Num,
    pub sortino: Num,
    /// Trades closed inside a test window, over all folds.
    pub trades: u64,
    pub win_rate: Num,
    pub profit_factor: Num,
    pub avg_trade: Num,
    /// Share of the stitched bars with a position.
    pub exposure: Num,
}

pub struct Outcome {
    pub folds: Vec<Fold>,
    pub results: Vec<FoldResult>,
    pub summary: Summary,
    /// The stitched out-of-sample equity, one value per test bar (with the
    /// bar index), starting from the initial cash.
    pub equity: Vec<(usize, f64)>,
}

/// The study of one fold: its train window is the score window, its test
/// window the holdout.
fn fold_study(study: &Study, fold: &Fold) -> Study {
    let windows = Windows {
        full: Window {
            kind: WindowKind::Full,
            start: 0,
            end: fold.train.end,
        },
        score: Window {
            kind: WindowKind::Score,
            start: fold.train.start,
            end: fold.train.end,
        },
        holdout: Some(Window {
            kind: WindowKind::Holdout,
            start: fold.test.start,
            end: fold.test.end,
        }),
    };
    // Walk-forward studies one instrument (checked when it starts).
    let screen = match study.config().scoring.screen_window {
        sieve_core::config::ScreenWindow::Score => windows.score,
        sieve_core::config::ScreenWindow::Full => windows.full,
    };
    // A fold's identity: the run's config and data, and its own windows.
    let identity = crate::study::hash_text(&format!(
        "{}\nfold train {:?} test {:?}",
        study.config_hash(),
        fold.train,
        fold.test
    ));
    study.with_windows(windows, screen, identity)
}

/// A fold finished in an earlier invocation: its best, read back.
/// A fold finished in an earlier invocation of this same fold (config,
/// data and windows: its identity): its best, read back.
fn finished(dir: &Path, fold_study: &Study) -> Option<Best> {
    let run = RunDir::new(dir).ok()?;
    let state = run.load_state().ok()??;
    let same =
        state.config_hash == fold_study.config_hash() && state.data_hash == fold_study.data_hash();
    (same && state.status == crate::rundir::RunStatus::Done).then_some(())?;
    files::read_json(&run.best_path()).ok()
}

/// What a walk-forward needs of its study, checked before anything is
/// written (the CLI and Python call it first, with the same message): a
/// `[walkforward]` section, and one instrument.
pub fn check(study: &Study) -> Result<crate::settings::WalkForward> {
    let wf = study.settings().walkforward.ok_or_else(|| {
        Error::config(
            "walkforward",
            "a walk-forward needs a [walkforward] section in the config (train and test lengths, e.g. train = \"4y\", test = \"1y\"; see docs/config.md); on the command line, -O walkforward.train=4y -O walkforward.test=1y",
        )
    })?;
    if study.market().is_several() {
        return Err(Error::config(
            "data",
            format!(
                "a walk-forward studies one instrument; this one has {}: run it once per instrument (one file or DataFrame each)",
                study.market().instruments.len()
            ),
        ));
    }
    Ok(wf)
}

pub fn walkforward(
    study: &Study,
    opts: &OptimizeOptions<'_>,
    obs: &mut dyn Observer,
) -> Result<Ended<Outcome>> {
    let wf = check(study)?;
    let limit = study
        .scoring()
        .windows
        .holdout
        .map_or(study.bars().len(), |h| h.start);
    let folds = folds(study.bars(), &wf, limit)?;
    std::fs::create_dir_all(&opts.out).map_err(|e| Error::io(&opts.out, e))?;
    // Written first: the folder is a walk-forward's from its first step on,
    // so a later command can tell it from somebody else's folder.
    let marker = opts.out.join(RunKind::WalkForward.marker());
    if !marker.exists() {
        let about = serde_json::json!({
            "sieve_version": env!("CARGO_PKG_VERSION"),
            "kind": "walkforward",
            "data": study.data_label(),
        });
        files::write_json(&marker, &about)?;
    }
    obs.note(&format!(
        "walk-forward: {} folds (train {}, test {}, step {}{})",
        folds.len(),
        wf.train,
        wf.test,
        wf.step,
        if wf.anchored { ", anchored" } else { "" }
    ));
    if let Some(w) = short_fold_windows(study, &folds) {
        obs.note(&format!("warning: {w}"));
    }
    let mut bests: Vec<Option<Best>> = Vec::new();
    for fold in &folds {
        let dir = opts.out.join(format!("fold-{:03}", fold.index));
        let fs = fold_study(study, fold);
        if let Some(best) = finished(&dir, &fs) {
            bests.push(Some(best));
            continue;
        }
        obs.note(&format!(
            "fold {}: train bars {}..{}, test bars {}..{}",
            fold.index, fold.train.start, fold.train.end, fold.test.start, fold.test.end
        ));
        // Each fold's folder is a run folder: locked while it runs.
        let _fold_lock = crate::rundir::RunLock::acquire(&dir)?;
        let fold_opts = OptimizeOptions {
            out: dir,
            backend: opts.backend,
            executor: opts.executor,
            threads: opts.threads,
            restart: opts.restart,
            checkpoint_every: opts.checkpoint_every,
            interrupt: opts.interrupt,
        };
        let outcome = optimize::optimize(&fs, &fold_opts, obs)?;
        match outcome.stop {
            Stop::Interrupted | Stop::TimeBudget { .. } => return Ok(Ended::Stopped(outcome.stop)),
            _ => bests.push(outcome.best),
        }
    }
    let (results, equity, trades) = stitch(study, &folds, &bests);
    let summary = summarize(study, &results, &equity, trades);
    write_csv(
        &opts.out.join("walkforward.csv"),
        study,
        &folds,
        &results,
        &bests,
    )?;
    files::write_json(&opts.out.join("walkforward.json"), &summary)?;
    let outcome = Outcome {
        folds,
        results,
        summary,
        equity,
    };
    Ok(Ended::Done(outcome))
}

/// Per-fold results and the stitched out-of-sample equity.
fn stitch(
    study: &Study,
    folds: &[Fold],
    bests: &[Option<Best>],
) -> (Vec<FoldResult>, Vec<(usize, f64)>, TestTrades) {
    let cash = study.scoring().engine.initial_cash;
    let mut equity = Vec::new();
    let mut value = cash;
    let mut trades = TestTrades::default();
    let results = folds
        .iter()
        .zip(bests)
        .map(|(fold, best)| {
            let Some(b) = best else {
                return FoldResult {
                    fold: fold.index,
                    params: None,
                    train_score: f64::NAN,
                    test_score: f64::NAN,
                    note: "no combination had a finite objective in the train window".into(),
                };
            };
            let params = b.param_values();
            let bt = study.with_evaluator([params.as_slice()], |eval| eval.backtest(&params));
            for (i, r) in window_returns(&bt.equity, fold.test.start, fold.test.end, cash)
                .into_iter()
                .enumerate()
            {
                value *= 1.0 + r;
                equity.push((fold.test.start + i, value));
            }
            let test = b.windows.get("holdout");
            // The trades that closed in this fold's test window, and its
            // bars with a position: the stitched trade statistics.
            for t in &bt.trades {
                if t.exit_bar.is_some_and(|x| fold.test.contains(&x)) {
                    trades.stats.push(t.pnl, t.ret);
                }
            }
            trades.exposed += bt.position[fold.test.clone()]
                .iter()
                .filter(|&&p| p != 0)
                .count();
            let test_score = test.map_or(f64::NAN, |w| w.get("objective"));
            let train_score = b
                .windows
                .get("score")
                .map_or(f64::NAN, |w| w.get("objective"));
            let objective = study.scoring().objective.name();
            FoldResult {
                fold: fold.index,
                params: Some(params),
                train_score,
                test_score,
                note: match test {
                    Some(w) if test_score.is_nan() && w.get("exposure") == 0.0 => {
                        "no position was held in the test window".into()
                    }
                    Some(w) if test_score.is_nan() && w.get("trades") == 0.0 => {
                        "no trade closed in the test window".into()
                    }
                    _ if test_score.is_nan() => {
                        format!("the {objective} is undefined in the test window")
                    }
                    _ if test_score.is_infinite() || train_score.is_infinite() => format!(
                        "an infinite {objective} (train {}, test {}; e.g. no losing trade) is left out of the efficiency",
                        float(train_score),
                        float(test_score)
                    ),
                    _ => String::new(),
                },
            }
        })
        .collect();
    (results, equity, trades)
}

/// Trade statistics of the test windows together.
#[derive(Default)]
struct TestTrades {
    stats: sieve_core::metrics::TradeStats,
    exposed: usize,
}

fn summarize(
    study: &Study,
    results: &[FoldResult],
    equity: &[(usize, f64)],
    trades: TestTrades,
) -> Summary {
    let cash = study.scoring().engine.initial_cash;
    let mut moments = ReturnMoments::default();
    let mut drawdown = Drawdown::new(cash);
    let mut prev = cash;
    for &(_, e) in equity {
        moments.push(e / prev - 1.0);
        drawdown.push(e);
        prev = e;
    }
    let daily = study
        .bars()
        .time
        .iter()
        .all(|t| t.rem_euclid(MS_PER_DAY) == 0);
    let (first, last) = (equity.first().map(|e| e.0), equity.last().map(|e| e.0));
    let (start, end, years) = match (first, last) {
        (Some(a), Some(b)) => {
            let from = study.bars().time[a.saturating_sub(1)];
            let years = (study.bars().time[b] - from) as f64 / MS_PER_DAY as f64 / 365.25;
            (
                boundary(study.bars().time[a], daily),
                boundary(study.bars().time[b], daily),
                years,
            )
        }
        _ => (String::new(), String::new(), 0.0),
    };
    let cagr = sieve_core::metrics::cagr(cash, prev, years);
    let mdd = drawdown.max_drawdown();
    let p = study.scoring().periods_per_year;
    // Both means over the same folds: those with both scores defined.
    let both: Vec<&FoldResult> = results
        .iter()
        .filter(|r| r.train_score.is_finite() && r.test_score.is_finite())
        .collect();
    let mean =
        |f: fn(&FoldResult) -> f64| both.iter().map(|r| f(r)).sum::<f64>() / both.len() as f64;
    let (mean_test, mean_train) = (mean(|r| r.test_score), mean(|r| r.train_score));
    // A ratio to a mean train score ≤ 0 says nothing: undefined.
    let efficiency = match mean_train > 0.0 {
        true => mean_test / mean_train,
        false => f64::NAN,
    };
    let search = study.settings().search;
    Summary {
        search: (search.method != crate::settings::SearchMethod::Grid).then(|| {
            format!(
                "{} (seed {}, {} evaluations per fold)",
                search.method.name(),
                search.seed,
                search.evaluations
            )
        }),
        folds: results.len(),
        folds_with_a_best: results.iter().filter(|r| r.params.is_some()).count(),
        efficiency: Num(efficiency),
        efficiency_folds: both.len(),
        positive_share: results.iter().filter(|r| r.test_score > 0.0).count() as f64
            / results.len() as f64,
        stitched: Stitched {
            start,
            end,
            bars: equity.len(),
            total_return: Num(sieve_core::metrics::total_return(cash, prev)),
            cagr: Num(cagr),
            max_drawdown: Num(mdd),
            calmar: Num(cagr / mdd),
            sharpe: Num(moments.sharpe(p)),
            sortino: Num(moments.sortino(p)),
            trades: trades.stats.count(),
            win_rate: Num(trades.stats.win_rate()),
            profit_factor: Num(trades.stats.profit_factor()),
            avg_trade: Num(trades.stats.avg_trade()),
            exposure: Num(trades.exposed as f64 / equity.len() as f64),
        },
    }
}

/// A window boundary: a date when every bar is at midnight, else RFC 3339.
fn boundary(ms: i64, daily: bool) -> String {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) if daily => t.format("%Y-%m-%d").to_string(),
        Some(t) => t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => ms.to_string(),
    }
}

fn write_csv(
    path: &Path,
    study: &Study,
    folds: &[Fold],
    results: &[FoldResult],
    bests: &[Option<Best>],
) -> Result<()> {
    let daily = study
        .bars()
        .time
        .iter()
        .all(|t| t.rem_euclid(MS_PER_DAY) == 0);
    let names = study.param_names();
    let mut out = String::from("fold,train_start,train_end,test_start,test_end,partial");
    for n in &names {
        let _ = write!(out, ",{n}");
    }
    out.push_str(",train_score,test_score");
    for m in sieve_core::metrics::Metrics::NAMES {
        let _ = write!(out, ",{m}");
    }
    out.push_str(",note\n");
    for ((fold, r), best) in folds.iter().zip(results).zip(bests) {
        let _ = write!(
            out,
            "{},{},{},{},{},{}",
            fold.index,
            boundary(fold.train_start_ms, daily),
            boundary(fold.train_end_ms, daily),
            boundary(fold.test_start_ms, daily),
            boundary(fold.test_end_ms, daily),
            fold.partial
        );
        for i in 0..names.len() {
            out.push(',');
            if let Some(p) = &r.params {
                push_float(&mut out, p[i]);
            }
        }
        let _ = write!(out, ",{},{}", float(r.train_score), float(r.test_score));
        let test = best.as_ref().and_then(|b| b.windows.get("holdout"));
        for m in sieve_core::metrics::Metrics::NAMES {
            out.push(',');
            push_float(&mut out, test.map_or(f64::NAN, |w| w.get(m)));
        }
        // Notes are sieve's own words, with no comma or quote to escape.
        let _ = writeln!(out, ",{}", r.note);
    }
    sieve_core::format::write_atomic(path, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daily(n: usize) -> Bars {
        sieve_core::data::synth(n, 1) // one bar per day from 2015-01-01
    }

    fn wf(train: Span, test: Span, step: Option<Span>, anchored: bool) -> WalkForward {
        WalkForward {
            train,
            test,
            step: step.unwrap_or(test),
            anchored,
            start: None,
        }
    }

    /// (train, test, partial) of each fold.
    fn ranges(folds: &[Fold]) -> Vec<(Range<usize>, Range<usize>, bool)> {
        folds
            .iter()
            .map(|f| (f.train.clone(), f.test.clone(), f.partial))
            .collect()
    }

    #[test]
    fn rolling_bar_folds_by_hand() {
        // 100 bars, train 40, test 20: folds at 0, 20, 40 (test 80..100);
        // a fourth would start its test at 100 = the end.
        let b = daily(100);
        let f = folds(&b, &wf(Span::Bars(40), Span::Bars(20), None, false), 100).unwrap();
        let got = ranges(&f);
        assert_eq!(
            got,
            vec![
                (0..40, 40..60, false),
                (20..60, 60..80, false),
                (40..80, 80..100, false)
            ]
        );
        // Step 30: folds at 0, 30 (test 70..90), 60 (test 100.. none).
        let f = folds(
            &b,
            &wf(Span::Bars(40), Span::Bars(20), Some(Span::Bars(30)), false),
            100,
        )
        .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[1].train.clone(), f[1].test.clone()), (30..70, 70..90));
    }

    #[test]
    fn anchored_and_a_partial_last_fold() {
        // 90 bars, train 40, test 20, anchored: train always starts at 0;
        // the third test window 80..100 is cut at 90 and marked partial.
        let b = daily(90);
        let f = folds(&b, &wf(Span::Bars(40), Span::Bars(20), None, true), 90).unwrap();
        let got = ranges(&f);
        assert_eq!(
            got,
            vec![
                (0..40, 40..60, false),
                (0..60, 60..80, false),
                (0..80, 80..90, true)
            ]
        );
        // The holdout limit cuts the same way: limit 70.
        let f = folds(&b, &wf(Span::Bars(40), Span::Bars(20), None, false), 70).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[1].test.clone(), f[1].partial), (60..70, true));
    }

    #[test]
    fn calendar_folds_by_hand() {
        // Daily bars from 2015-01-01 (bar i = day i), 3 years = 1096 bars.
        // train 1y, test 6m: fold 1 train 2015-01-01..2016-01-01 (bars
        // 0..365), test ..2016-07-01 (bar 547); fold 2 starts 2015-07-01
        // (bar 181), train to 2016-07-01 (547), test to 2017-01-01 (731).
        let b = daily(1096);
        let f = folds(&b, &wf(Span::Years(1), Span::Months(6), None, false), 1096).unwrap();
        assert_eq!((f[0].train.clone(), f[0].test.clone()), (0..365, 365..547));
        assert_eq!(
            (f[1].train.clone(), f[1].test.clone()),
            (181..547, 547..731)
        );
        // Folds while a test window starts before the end: train ends at
        // 2015-01-01 + k·6m + 1y < 2018-01-01 → k = 0..=3; the last test
        // (2017-07-01..2018-01-01) is complete: bars 912..1096.
        assert_eq!(f.len(), 4);
        assert_eq!((f[3].test.clone(), f[3].partial), (912..1096, false));
        assert_eq!(boundary(f[0].train_end_ms, true), "2016-01-01");
        // 1,000 bars end on 2017-09-26: the last test window (to
        // 2018-01-01) is cut at the data's end and marked partial.
        let b = daily(1000);
        let f = folds(&b, &wf(Span::Years(1), Span::Months(6), None, false), 1000).unwrap();
        let last = f.last().unwrap();
        assert_eq!((last.test.clone(), last.partial), (912..1000, true));
        assert_eq!(boundary(last.test_end_ms, true), "2017-09-27");
        assert!(!f[0].partial);
    }
}
