//! `sieve verify` end to end: identical for any thread count, each row
//! equal to `sieve backtest`, bad candidate files one clear error with no
//! output left.

use std::path::Path;

use crate::{run_err, run_ok, stderr};

/// 5,000 `activation` candidates: a deterministic spread over the parameter
/// ranges (not a sweep), with a rank column.
fn candidates(path: &Path, n: usize) {
    let mut text = String::from(
        "rank,trend_len,rsi_len,dc_len,atr_len,w_trend,w_rsi,w_dc,entry,exit,stop_atr\n",
    );
    for i in 0..n {
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            i + 1,
            20 + (i * 7) % 180,
            5 + (i * 3) % 20,
            10 + (i * 11) % 50,
            7 + (i * 5) % 20,
            (i % 3) as f64 * 0.5,
            (i % 5) as f64 * 0.25,
            ((i / 3) % 3) as f64 * 0.5,
            0.1 + ((i / 7) % 6) as f64 * 0.1,
            -0.3 + ((i / 11) % 5) as f64 * 0.1,
            ((i / 13) % 4) as f64,
        ));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn five_thousand_candidates_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("cands.csv");
    candidates(&cands, 5000);
    let mut outputs = Vec::new();
    for threads in ["1", "2", "8"] {
        let out = dir.path().join(format!("v{threads}.csv"));
        run_ok(&[
            "verify",
            "--candidates",
            cands.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
            "-O",
            "score.score_start=2019-01-01",
        ]);
        outputs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
    let text = String::from_utf8(outputs.swap_remove(0)).unwrap();
    assert_eq!(text.lines().count(), 5001, "one row per candidate");
}

#[test]
fn verified_rows_match_sieve_backtest() {
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("cands.csv");
    candidates(&cands, 200);
    let out = dir.path().join("v.csv");
    let opts = [
        "-O",
        "score.score_start=2019-01-01",
        "-O",
        "score.holdout_start=2024-01-01",
        "-O",
        "backtest.fee=0.001",
    ];
    let mut args = vec![
        "verify",
        "--candidates",
        cands.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(opts);
    let summary = run_ok(&args);
    assert!(summary.contains("Spearman"), "{summary}");
    let text = std::fs::read_to_string(&out).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // Ranked by score, best first.
    let scores: Vec<f64> = rows
        .iter()
        .map(|r| r[col("score")].parse().unwrap())
        .filter(|s: &f64| !s.is_nan())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]));
    for row in [&rows[0], &rows[1], &rows[57], &rows[199]] {
        let mut args: Vec<String> = vec!["backtest".into(), "--json".into()];
        for name in [
            "trend_len",
            "rsi_len",
            "dc_len",
            "atr_len",
            "w_trend",
            "w_rsi",
            "w_dc",
            "entry",
            "exit",
            "stop_atr",
        ] {
            args.push("--set".into());
            args.push(format!("{name}={}", row[col(name)]));
        }
        args.extend(opts.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v: serde_json::Value = serde_json::from_str(&run_ok(&args)).unwrap();
        let score = &v["windows"]["score"];
        // The objective over the other windows, from the same simulation.
        for (column, window) in [("full_score", "full"), ("holdout_score", "holdout")] {
            let verified: f64 = row[col(column)].parse().unwrap();
            match v["windows"][window]["objective"].as_f64() {
                Some(x) => assert_eq!(x, verified, "{column}"),
                None => assert!(verified.is_nan(), "{column}"),
            }
        }
        for metric in [
            "total_return",
            "cagr",
            "max_drawdown",
            "calmar",
            "sharpe",
            "trades",
            "win_rate",
            "exposure",
        ] {
            let verified: f64 = row[col(metric)].parse().unwrap();
            match score[metric].as_f64() {
                Some(x) => assert_eq!(x, verified, "{metric}"),
                None => assert!(verified.is_nan(), "{metric}"),
            }
        }
    }
}

#[test]
fn bad_candidate_files_are_one_clear_error_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let cases = [
        (
            dir.path().join("missing.csv").to_str().unwrap().to_string(),
            "missing.csv",
        ),
        (
            write("cols.csv", "alpha,beta\n1,2\n"),
            "missing parameter column(s)",
        ),
        (
            write(
                "num.csv",
                "trend_len,rsi_len,dc_len,atr_len,w_trend,w_rsi,w_dc,entry,exit,stop_atr\n50,14,20,14,1,0.5,1,0.3,0.2,2\n60,14,20,14,1,0.5,1,high,0.2,2\n",
            ),
            "line 3: column 'entry'",
        ),
        (
            write(
                "range.csv",
                "trend_len,rsi_len,dc_len,atr_len,w_trend,w_rsi,w_dc,entry,exit,stop_atr\n50,14,20,14,1,0.5,1,0.3,0.2,2\n60,14,20,14,1,0.5,1,7,0.2,2\n",
            ),
            "line 3: column 'entry'",
        ),
        (write("empty.csv", ""), "empty file"),
        (write("header.csv", "trend_len,rsi_len,dc_len,atr_len,w_trend,w_rsi,w_dc,entry,exit,stop_atr\n"), "no candidates"),
    ];
    let out = dir.path().join("verified.csv");
    for (path, want) in cases {
        let o = run_err(&[
            "verify",
            "--candidates",
            &path,
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&o);
        assert!(err.contains(want), "{path}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
}
