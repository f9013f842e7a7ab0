//! `sieve walkforward` against independent computations: `sieve backtest`
//! over each test window, `sieve sweep` over each train window, the test's
//! own stitching, and a kill -9 in the middle.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{run_ok, sieve, stderr};

const CONFIG: &str = r#"
[strategy]
name = "sma_cross"
[strategy.params]
fast = { start = 2, stop = 30, step = 2 }
slow = { start = 35, stop = 120, step = 5 }
[backtest]
fee = 0.001
[score]
holdout_start = "2025-01-01"
[optimize]
iterations = 1
[walkforward]
train = "3y"
test = "1y"
"#;

fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn folds_match_backtest_sweep_and_their_own_stitching() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wf.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let c = config.to_str().unwrap();
    let out = dir.path().join("wf");
    run_ok(&["walkforward", "--config", c, "--out", out.to_str().unwrap()]);
    let (header, rows) = csv_rows(&out.join("walkforward.csv"));
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    // 4,000 daily bars from 2015-01-01, holdout from 2025-01-01: train 3y,
    // test 1y, step 1y → tests 2018, 2019, …, 2024: seven folds.
    assert_eq!(rows.len(), 7);
    assert_eq!(rows[0][col("train_start")], "2015-01-01");
    assert_eq!(rows[0][col("test_start")], "2018-01-01");
    assert_eq!(rows[6][col("test_end")], "2025-01-01");
    let mut stitched = Vec::new();
    let mut returns: Vec<f64> = Vec::new();
    for row in &rows {
        let (fast, slow) = (&row[col("fast")], &row[col("slow")]);
        // The fold's bar returns over its test window, from its equity curve.
        let equity = dir.path().join(format!("e{}.csv", row[0]));
        run_ok(&[
            "backtest",
            "--config",
            c,
            "--set",
            &format!("fast={fast}"),
            "--set",
            &format!("slow={slow}"),
            "--equity",
            equity.to_str().unwrap(),
        ]);
        let (_, curve) = csv_rows(&equity);
        let (from, to) = (&row[col("test_start")], &row[col("test_end")]);
        for (i, r) in curve.iter().enumerate() {
            if r[0].as_str() >= from.as_str() && r[0].as_str() < to.as_str() {
                let (e, prev): (f64, f64) =
                    (r[1].parse().unwrap(), curve[i - 1][1].parse().unwrap());
                returns.push(e / prev - 1.0);
            }
        }
        // test_score: sieve backtest over the test window.
        let v: serde_json::Value = serde_json::from_str(&run_ok(&[
            "backtest",
            "--config",
            c,
            "--set",
            &format!("fast={fast}"),
            "--set",
            &format!("slow={slow}"),
            // The test window does not rank: no min_trades there.
            "-O",
            "score.min_trades=0",
            "-O",
            &format!("score.score_start={}", row[col("test_start")]),
            "-O",
            &format!("score.holdout_start={}", row[col("test_end")]),
            "--json",
        ]))
        .unwrap();
        let want = v["windows"]["score"]["objective"].as_f64().unwrap();
        assert_eq!(
            row[col("test_score")].parse::<f64>().unwrap(),
            want,
            "fold {}",
            row[0]
        );
        stitched.push(v["windows"]["score"]["total_return"].as_f64().unwrap());
        // The parameters: the best of a sweep over the train window.
        let sweep = dir.path().join(format!("s{}.csv", row[0]));
        run_ok(&[
            "sweep",
            "--config",
            c,
            "--out",
            sweep.to_str().unwrap(),
            "--top",
            "1",
            "-O",
            &format!("score.score_start={}", row[col("train_start")]),
            "-O",
            &format!("score.holdout_start={}", row[col("train_end")]),
        ]);
        let (sh, srows) = csv_rows(&sweep);
        let scol = |n: &str| sh.iter().position(|h| h == n).unwrap();
        assert_eq!(
            (&srows[0][scol("fast")], &srows[0][scol("slow")]),
            (fast, slow),
            "fold {}",
            row[0]
        );
    }
    // Stitched: the test windows' returns chained; total return = Π(1 + R_k) − 1.
    let total = stitched.iter().fold(1.0, |acc, r| acc * (1.0 + r)) - 1.0;
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("walkforward.json")).unwrap())
            .unwrap();
    let got = json["stitched"]["total_return"].as_f64().unwrap();
    assert!(
        (got - total).abs() <= 1e-9 * total.abs().max(1.0),
        "{got} vs {total}"
    );
    // The stitched curve's drawdown and bar count, from the equity files.
    let (mut e, mut peak, mut mdd) = (1.0f64, 1.0f64, 0.0f64);
    for r in &returns {
        e *= 1.0 + r;
        peak = peak.max(e);
        mdd = mdd.max(1.0 - e / peak);
    }
    assert_eq!(
        json["stitched"]["bars"].as_u64(),
        Some(returns.len() as u64)
    );
    // Trades and win rate: the folds' test-window trades together.
    let trades: Vec<f64> = rows
        .iter()
        .map(|r| r[col("trades")].parse().unwrap())
        .collect();
    let wins: f64 = rows
        .iter()
        .zip(&trades)
        .map(|(r, t)| {
            let w: f64 = r[col("win_rate")].parse().unwrap();
            if w.is_nan() {
                0.0
            } else {
                w * t
            }
        })
        .sum();
    let total_trades: f64 = trades.iter().sum();
    assert_eq!(json["stitched"]["trades"].as_f64(), Some(total_trades));
    let win_rate = json["stitched"]["win_rate"].as_f64().unwrap();
    assert!((win_rate - wins / total_trades).abs() < 1e-12, "{win_rate}");
    let got = json["stitched"]["max_drawdown"].as_f64().unwrap();
    assert!((got - mdd).abs() < 1e-9, "{got} vs {mdd}");
    assert!(
        (e - 1.0 - total).abs() < 1e-9,
        "chained bars {} vs folds {total}",
        e - 1.0
    );
    assert!(std::fs::read_to_string(out.join("report.html"))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn killed_in_the_middle_resumes_to_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bars.csv");
    run_ok(&[
        "synth",
        "--bars",
        "8000",
        "--seed",
        "9",
        "--out",
        data.to_str().unwrap(),
    ]);
    let config = dir.path().join("wf.toml");
    // Wider grid, bar-count folds, one thread: long enough to be killed.
    std::fs::write(
        &config,
        CONFIG
            .replace("step = 2 }", "step = 1 }")
            .replace("holdout_start = \"2025-01-01\"", "")
            .replace("train = \"3y\"", "train = \"2000\"")
            .replace("test = \"1y\"", "test = \"1000\""),
    )
    .unwrap();
    let args = |out: &Path| {
        vec![
            "walkforward".to_string(),
            "--config".into(),
            config.to_str().unwrap().into(),
            "--data".into(),
            data.to_str().unwrap().into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--threads".into(),
            "1".into(),
        ]
    };
    let whole = dir.path().join("whole");
    run_ok(&args(&whole).iter().map(String::as_str).collect::<Vec<_>>());
    let out = dir.path().join("killed");
    let mut child = sieve()
        .args(args(&out))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !out.join("fold-002/best.json").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be killed"
        );
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let first = out.join("fold-001/best.json");
    let before = std::fs::metadata(&first).unwrap().modified().unwrap();
    let o = sieve().args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(&first).unwrap().modified().unwrap(),
        before,
        "a finished fold is not rerun"
    );
    for file in [
        "walkforward.csv",
        "walkforward.json",
        "fold-001/best.json",
        "fold-003/best.json",
    ] {
        assert_eq!(
            std::fs::read(out.join(file)).unwrap(),
            std::fs::read(whole.join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn a_changed_config_never_reuses_finished_folds() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wf.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let c = config.to_str().unwrap();
    let out = dir.path().join("wf");
    let o = out.to_str().unwrap();
    run_ok(&["walkforward", "--config", c, "--out", o]);
    let before = std::fs::read(out.join("walkforward.csv")).unwrap();
    // Another fee: the folds are refused without --restart, redone with it.
    let refused = sieve()
        .args([
            "walkforward",
            "--config",
            c,
            "--out",
            o,
            "-O",
            "backtest.fee=0.01",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("changed: backtest.fee"),
        "{}",
        stderr(&refused)
    );
    run_ok(&[
        "walkforward",
        "--config",
        c,
        "--out",
        o,
        "-O",
        "backtest.fee=0.01",
        "--restart",
    ]);
    let after = std::fs::read(out.join("walkforward.csv")).unwrap();
    assert_ne!(before, after, "the folds were rerun with the new fee");
    // Other fold windows: each fold is its own run, refused as another
    // config without --restart, redone with it.
    let refused = sieve()
        .args([
            "walkforward",
            "--config",
            c,
            "--out",
            o,
            "-O",
            "backtest.fee=0.01",
        ])
        .args(["-O", "walkforward.train=\"2y\""])
        .output()
        .unwrap();
    assert!(
        stderr(&refused).contains("changed: walkforward.train"),
        "{}",
        stderr(&refused)
    );
    run_ok(&[
        "walkforward",
        "--restart",
        "--config",
        c,
        "--out",
        o,
        "-O",
        "backtest.fee=0.01",
        "-O",
        "walkforward.train=\"2y\"",
    ]);
    let (header, rows) = csv_rows(&out.join("walkforward.csv"));
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    assert_eq!(rows[0][col("test_start")], "2017-01-01");
    let fold1: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fold-001/best.json")).unwrap())
            .unwrap();
    assert_eq!(fold1["windows"]["holdout"]["start"], "2017-01-01");
}

/// A walk-forward's folder is marked as one from its first step: a folder
/// of the user's (its own report.html, walkforward.csv) and an optimize run
/// folder are refused untouched, and `sieve optimize` refuses a
/// walk-forward's folder.
#[test]
fn walkforward_folders_are_told_from_others() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wf.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let c = config.to_str().unwrap();
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    for f in ["report.html", "walkforward.csv"] {
        std::fs::write(mine.join(f), "mine").unwrap();
    }
    let refused = sieve()
        .args(["walkforward", "--config", c, "--out"])
        .arg(&mine)
        .output()
        .unwrap();
    crate::assert_refused(&refused, "is not empty and holds no sieve run");
    for f in ["report.html", "walkforward.csv"] {
        assert_eq!(std::fs::read_to_string(mine.join(f)).unwrap(), "mine");
    }
    assert_eq!(std::fs::read_dir(&mine).unwrap().count(), 2);
    // An optimize run folder is not a walk-forward's, nor the reverse.
    let run = dir.path().join("run");
    run_ok(&[
        "optimize",
        "--config",
        c,
        "-O",
        "strategy.params.fast={start=2,stop=10,step=4}",
        "--out",
        run.to_str().unwrap(),
    ]);
    let refused = sieve()
        .args(["walkforward", "--config", c, "--out"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        stderr(&refused).contains("holds an optimize run (run.json), not a walk-forward"),
        "{}",
        stderr(&refused)
    );
    let wf = dir.path().join("wf");
    run_ok(&["walkforward", "--config", c, "--out", wf.to_str().unwrap()]);
    assert!(wf.join("walkforward.run.json").is_file());
    let refused = sieve()
        .args(["optimize", "--config", c, "--out"])
        .arg(&wf)
        .output()
        .unwrap();
    assert!(
        stderr(&refused)
            .contains("holds a walk-forward (walkforward.run.json), not an optimize run"),
        "{}",
        stderr(&refused)
    );
}

/// Short test windows under an annualised objective are warned about for
/// every fold they hit, on the terminal and in the walk-forward report;
/// a fold whose test score is undefined or infinite says why, and the
/// efficiency says over how many folds it is.
#[test]
fn short_fold_windows_and_fold_notes_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wf.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let out = dir.path().join("wf");
    let o = sieve()
        .args(["walkforward", "--config", config.to_str().unwrap()])
        .args(["-O", "walkforward.test=60", "-O", "walkforward.train=400"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        said.contains(
            "compounds a window's return to a yearly rate, and the test window of fold(s) 1, 2,"
        ),
        "{said}"
    );
    assert!(said.contains("folds with both finite"), "{said}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("Warning: the objective calmar compounds"));
    // Every fold with an undefined test score has its reason, on the
    // terminal and in walkforward.csv.
    let (header, rows) = csv_rows(&out.join("walkforward.csv"));
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    for row in &rows {
        let undefined = row[col("test_score")] == "NaN";
        assert_eq!(undefined, !row[col("note")].is_empty(), "{row:?}");
        if undefined {
            assert!(said.contains(&format!("fold {}: {}", row[col("fold")], row[col("note")])));
        }
    }
}
