//! The robustness numbers of `best.json`, recomputed inside the test from
//! every combination's exact equity curve (a grid small enough to verify
//! exhaustively).

use sieve_core::config::Config;
use sieve_core::evaluate::{Evaluator, Scoring};
use sieve_core::indicators::IndicatorSet;
use sieve_core::strategy;

use crate::run_ok;

const CONFIG: &str = r#"
[strategy]
name = "sma_cross"
[strategy.params]
fast = { start = 2, stop = 20, step = 2 }
slow = { start = 25, stop = 60, step = 5 }
[score]
score_start = "2019-01-01"
holdout_start = "2025-01-01"
[sweep]
top = 100
[verify]
top = 100
[optimize]
iterations = 1
[robust]
pbo_blocks = 8
"#;

/// Score-window returns, the first against the close before the window.
fn returns(equity: &[f64], start: usize, end: usize) -> Vec<f64> {
    (start..end)
        .map(|t| equity[t] / equity[t - 1] - 1.0)
        .collect()
}

fn sharpe(r: &[f64]) -> f64 {
    let n = r.len() as f64;
    let m = r.iter().sum::<f64>() / n;
    let var = r.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    m / var.sqrt()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn dsr_and_pbo_in_best_json_equal_the_tests_own_computation() {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("c.toml");
    std::fs::write(&config_path, CONFIG).unwrap();
    let out = dir.path().join("run");
    run_ok(&[
        "optimize",
        "--config",
        config_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    let dsr = &best["robustness"]["dsr"];
    let pbo = &best["robustness"]["pbo"];

    // Every combination of the grid, through the exact engine.
    let config = Config::parse(CONFIG).unwrap();
    let bars = sieve_core::data::synth(4000, 42); // the built-in series
    let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
    let s = strategy::lookup("sma_cross").unwrap();
    let grid: Vec<Vec<f64>> = (0..10)
        .flat_map(|i| (0..8).map(move |j| vec![2.0 + 2.0 * i as f64, 25.0 + 5.0 * j as f64]))
        .collect();
    let indicators = IndicatorSet::build(
        &bars,
        Evaluator::indicators_for(s, grid.iter().map(Vec::as_slice)),
    );
    let eval = Evaluator {
        bars: &bars,
        strategy: s,
        indicators: &indicators,
        scoring: &scoring,
        portfolio: None,
    };
    let w = scoring.windows.score;
    assert!(w.start > 0);
    let all: Vec<Vec<f64>> = grid
        .iter()
        .map(|p| returns(&eval.backtest(p).equity, w.start, w.end))
        .collect();

    // N and V: every screened combination's per-bar Sharpe.
    let sharpes: Vec<f64> = all
        .iter()
        .map(|r| sharpe(r))
        .filter(|x| x.is_finite())
        .collect();
    let n = sharpes.len() as f64;
    let mean = sharpes.iter().sum::<f64>() / n;
    let v = sharpes.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    assert_eq!(dsr["trials"].as_u64(), Some(80));
    assert!(
        close(dsr["sharpe_variance"].as_f64().unwrap(), v, 1e-9),
        "{dsr} vs V {v}"
    );

    // SR, T, γ3, γ4 of the best, from population moments.
    let bp = [
        best["params"]["fast"].as_f64().unwrap(),
        best["params"]["slow"].as_f64().unwrap(),
    ];
    let r = returns(&eval.backtest(&bp).equity, w.start, w.end);
    let t = r.len() as f64;
    let m = r.iter().sum::<f64>() / t;
    let moment = |k: i32| r.iter().map(|x| (x - m).powi(k)).sum::<f64>() / t;
    let (skew, kurt) = (
        moment(3) / moment(2).powf(1.5),
        moment(4) / moment(2).powi(2),
    );
    let sr = sharpe(&r);
    assert_eq!(dsr["observations"].as_u64(), Some(r.len() as u64));
    assert!(close(dsr["sharpe"].as_f64().unwrap(), sr, 1e-12));
    assert!(close(dsr["skew"].as_f64().unwrap(), skew, 1e-9));
    assert!(close(dsr["kurtosis"].as_f64().unwrap(), kurt, 1e-9));
    // SR₀ and DSR by the formulas (Φ from statrs, as the paper's example
    // test pins down).
    let sr0 = sieve_core::robust::dsr::expected_max_sharpe(v, 80.0);
    let normal = |x: f64| 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2));
    let z = (sr - sr0) * (t - 1.0).sqrt() / (1.0 - skew * sr + (kurt - 1.0) / 4.0 * sr * sr).sqrt();
    assert!(close(
        dsr["expected_max_sharpe"].as_f64().unwrap(),
        sr0,
        1e-9
    ));
    assert!(
        (dsr["dsr"].as_f64().unwrap() - normal(z)).abs() < 1e-7,
        "{dsr} vs {}",
        normal(z)
    );

    // PBO: the test's own CSCV over the verified candidates with a finite
    // score (all 80 here), in grid-index order, 8 blocks; those with the
    // same returns as an earlier one count once, and Sharpes within a
    // relative 1e-9 are ties (docs/metrics.md).
    let verified = std::fs::read_to_string(out.join("iter-001/verified.csv")).unwrap();
    assert_eq!(verified.lines().count(), 81);
    let mut distinct: Vec<Vec<f64>> = Vec::new();
    for r in &all {
        if !distinct.iter().any(|d| d == r) {
            distinct.push(r.clone());
        }
    }
    let all = distinct;
    let tied = |a: f64, b: f64| {
        a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= 1e-9 * a.abs().max(b.abs()))
    };
    let blocks = 8;
    let tn = all[0].len();
    let mut logits = Vec::new();
    for mask in 0u32..(1 << blocks) {
        if mask.count_ones() != 4 {
            continue;
        }
        let part = |r: &[f64], inside: bool| -> Vec<f64> {
            (0..blocks)
                .filter(|b| (mask >> b & 1 == 1) == inside)
                .flat_map(|b| r[b * tn / blocks..(b + 1) * tn / blocks].to_vec())
                .collect()
        };
        let guard = |x: f64| if x.is_finite() { x } else { f64::NEG_INFINITY };
        let is: Vec<f64> = all.iter().map(|r| guard(sharpe(&part(r, true)))).collect();
        let oos: Vec<f64> = all.iter().map(|r| guard(sharpe(&part(r, false)))).collect();
        let top = is.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let pick = (0..is.len()).find(|&i| tied(is[i], top)).unwrap();
        let below = oos
            .iter()
            .filter(|&&o| o < oos[pick] && !tied(o, oos[pick]))
            .count();
        let omega = (1.0 + below as f64) / (all.len() as f64 + 1.0);
        logits.push((omega / (1.0 - omega)).ln());
    }
    let own = logits.iter().filter(|&&l| l <= 0.0).count() as f64 / logits.len() as f64;
    assert_eq!(pbo["splits"].as_u64(), Some(70));
    assert_eq!(pbo["candidates"].as_u64(), Some(all.len() as u64));
    assert_eq!(pbo["identical"].as_u64(), Some(80 - all.len() as u64));
    assert_eq!(pbo["pbo"].as_f64(), Some(own), "{pbo}");
}

/// erf for the test's own Φ, independent of statrs: the Maclaurin series
/// 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1)) for |x| < 3, and the asymptotic
/// erfc beyond (where Φ is within 1e-6 of 0 or 1).
fn erf(x: f64) -> f64 {
    if x.abs() >= 3.0 {
        // erfc(x) ≈ e^{−x²}/(x√π) · (1 − 1/(2x²) + 3/(4x⁴)); |error| < 1e-6
        let y = x.abs();
        let erfc = (-y * y).exp() / (y * std::f64::consts::PI.sqrt())
            * (1.0 - 1.0 / (2.0 * y * y) + 3.0 / (4.0 * y.powi(4)));
        return (1.0 - erfc).copysign(x);
    }
    let mut sum = 0.0;
    let mut term = x; // x^(2n+1) (−1)^n / n!
    for n in 0..200 {
        sum += term / (2 * n + 1) as f64;
        term *= -x * x / (n + 1) as f64;
    }
    2.0 / std::f64::consts::PI.sqrt() * sum
}

/// A best that never trades has no Sharpe: best.json holds nulls, and the
/// report and a resumed run read it back.
#[test]
fn an_undefined_sharpe_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("down.csv");
    let mut text = String::from("date,open,high,low,close\n");
    for i in 0..400 {
        let p = 1000.0 - i as f64;
        let day = chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap() + chrono::Days::new(i);
        text.push_str(&format!("{day},{p},{p},{p},{p}\n"));
    }
    std::fs::write(&data, text).unwrap();
    let out = dir.path().join("run");
    let args = [
        "optimize",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--strategy",
        "sma_cross",
        "-O",
        "strategy.params.fast={start=2,stop=6,step=2}",
        "-O",
        "strategy.params.slow={values=[10,20]}",
        "-O",
        "score.objective=total_return",
        "-O",
        "score.min_trades=0",
        "-O",
        "optimize.iterations=1",
    ];
    run_ok(&args);
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    assert!(best["robustness"]["dsr"]["sharpe"].is_null());
    run_ok(&["report", out.to_str().unwrap()]);
    run_ok(&args);
}
