//! Defects a first-time user hit: each test failed before its fix.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::{run_err, run_ok, sieve, stderr};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes `bars` synthetic bars with times `start_ms + i * step_ms`.
fn write_bars(path: &Path, bars: usize, start_ms: i64, step_ms: i64) {
    let b = sieve_core::data::synth(bars, 3);
    let mut text = String::from("time,open,high,low,close\n");
    for i in 0..b.len() {
        let t = chrono::DateTime::from_timestamp_millis(start_ms + i as i64 * step_ms).unwrap();
        text.push_str(&format!(
            "{},{},{},{},{}\n",
            t.format("%Y-%m-%d %H:%M:%S"),
            b.open[i],
            b.high[i],
            b.low[i],
            b.close[i]
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// One optimize iteration over a 4 × 2 sma_cross grid.
const ONE_SMALL_ITERATION: [&str; 6] = [
    "-O",
    "optimize.iterations=1",
    "-O",
    "strategy.params.fast={start=5,stop=20,step=5}",
    "-O",
    "strategy.params.slow={start=30,stop=90,step=30}",
];

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn no_finite_objective_is_said_and_exits_3_with_no_best() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = sieve()
        .args(["optimize", "--out", out.to_str().unwrap()])
        .args(["-O", "score.min_trades=100000", "-O", "verify.top=50"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "no combination had ≥ 100000 trades in the score window 2019-01-01..2024-12-31"
        ),
        "{err}"
    );
    assert!(!stdout(&o).contains("best ("), "no best is presented");
    assert!(!out.join("best.json").exists());

    let csv = dir.path().join("s.csv");
    let o = sieve()
        .args([
            "sweep",
            "--out",
            csv.to_str().unwrap(),
            "-O",
            "score.min_trades=100000",
        ])
        .args(["--strategy", "sma_cross", "-O", "strategy.params.fast=10"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("no combination had ≥ 100000 trades"));
}

#[test]
fn hourly_outputs_write_every_time_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("hourly.csv");
    // 2017-04-20 00:00 UTC, hourly: some bars fall on midnight.
    write_bars(&data, 600, 1_492_646_400_000, 3_600_000);
    let (equity, trades) = (dir.path().join("e.csv"), dir.path().join("t.csv"));
    let table = run_ok(&[
        "backtest",
        "--data",
        data.to_str().unwrap(),
        "--strategy",
        "sma_cross",
        "--set",
        "fast=5",
        "--set",
        "slow=20",
        "-O",
        "score.score_start=2017-05-01",
        "--equity",
        equity.to_str().unwrap(),
        "--trades",
        trades.to_str().unwrap(),
    ]);
    let is_datetime =
        |s: &str| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").is_ok();
    let e = std::fs::read_to_string(&equity).unwrap();
    let times: Vec<&str> = e
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(
        times[0], "2017-04-20 00:00:00",
        "a midnight bar keeps its time"
    );
    assert!(times.iter().all(|t| is_datetime(t)), "one format per file");
    let t = std::fs::read_to_string(&trades).unwrap();
    let rows: Vec<Vec<&str>> = t.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert!(rows.len() > 2);
    for r in &rows {
        assert!(is_datetime(r[2]), "entry_time {}", r[2]);
        assert!(r[4].is_empty() || is_datetime(r[4]), "exit_time {}", r[4]);
    }
    // Window headers too: "score 2017-05-01 00:00:00..".
    assert!(table.contains("score 2017-05-01 00:00:00.."), "{table}");
}

#[test]
fn backtest_checks_constraints_and_warns_about_unreliable_settings() {
    let o = run_err(&[
        "backtest",
        "--strategy",
        "sma_cross",
        "--set",
        "fast=60",
        "--set",
        "slow=20",
    ]);
    assert!(
        stderr(&o).contains("fast=60 slow=20 breaks the constraint \"fast < slow\""),
        "{}",
        stderr(&o)
    );
    let o = sieve()
        .args([
            "backtest",
            "--strategy",
            "sma_cross",
            "-O",
            "backtest.fee=0.05",
        ])
        .args(["-O", "score.score_start=2025-12-01"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("backtest.fee = 0.05 is 5.00% per fill"),
        "{err}"
    );
    assert!(err.contains("the score window has only 13 bar(s)"), "{err}");
    // A target written in percent is noted (accepted: a 1000 % target is
    // rare, not impossible).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target.toml");
    std::fs::write(
        &path,
        "[strategy]\nname = \"sma_cross\"\ntake_profit = 10\n",
    )
    .unwrap();
    let o = sieve()
        .args(["backtest", "-c", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("strategy.take_profit = 10 puts the target 1000 % from the entry price; it is a fraction (0.10 is 10 %)"),
        "{err}"
    );
    // A normal backtest warns about nothing.
    let o = sieve()
        .args([
            "backtest",
            "--strategy",
            "sma_cross",
            "-O",
            "backtest.fee=0.001",
        ])
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn stop_rules_are_not_identity_and_a_budget_stop_continues() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let out_s = out.to_str().unwrap();
    // A budget that ends inside iteration 1's sweep (after its first batch).
    let o = sieve()
        .args([
            "optimize",
            "--out",
            out_s,
            "--threads",
            "2",
            "--checkpoint-every",
            "0",
        ])
        .args([
            "-O",
            "optimize.time_budget_s=0.000001",
            "-O",
            "verify.top=100",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("time budget of 0.000001 s reached during iteration 1's sweep"),
        "{}",
        stdout(&o)
    );
    assert!(!stderr(&o).contains("constraints"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no iteration has finished yet"),
        "{}",
        stderr(&o)
    );

    // The same command with a raised budget and one iteration: not "a
    // different config"; resumes the checkpointed sweep.
    let o = sieve()
        .args([
            "optimize",
            "--out",
            out_s,
            "-O",
            "optimize.iterations=1",
            "-O",
            "verify.top=100",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("iteration 1: resuming the sweep at grid index"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("stopped: all 1 iterations done"));
    // Raising iterations continues the finished run.
    let o = sieve()
        .args([
            "optimize",
            "--out",
            out_s,
            "-O",
            "optimize.iterations=2",
            "-O",
            "verify.top=100",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming the run"), "{}", stderr(&o));
    let state = read_json(&out.join("run.json"));
    assert_eq!(state["iterations"].as_array().unwrap().len(), 2);
}

#[test]
fn the_zoom_never_grows_the_grid_and_stops_when_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // The built-in example (refine_top = 50 made it grow 17,640 → 12 M).
    let o = run_ok(&[
        "optimize",
        "--out",
        out.to_str().unwrap(),
        "-O",
        "optimize.refine_top=50",
        "-O",
        "verify.top=300",
    ]);
    assert!(o.contains("stopped: "), "{o}");
    let state = read_json(&out.join("run.json"));
    let sizes: Vec<u64> = state["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["grid_size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes[0], 17_640);
    assert!(sizes.len() >= 2, "{sizes:?}");
    assert!(sizes.iter().all(|&s| s <= 17_640), "{sizes:?}");

    // A smaller cap holds too.
    let capped = dir.path().join("capped");
    run_ok(&[
        "optimize",
        "--out",
        capped.to_str().unwrap(),
        "-O",
        "optimize.max_combinations=3000",
        "-O",
        "verify.top=300",
    ]);
    let state = read_json(&capped.join("run.json"));
    for it in &state["iterations"].as_array().unwrap()[1..] {
        assert!(it["grid_size"].as_u64().unwrap() <= 3000, "{it}");
    }

    // Step 1 everywhere and every candidate in range: nothing to refine.
    let fine = dir.path().join("fine");
    let o = run_ok(&[
        "optimize",
        "--out",
        fine.to_str().unwrap(),
        "--strategy",
        "sma_cross",
        "-O",
        "strategy.params.fast={start=9,stop=11,step=1}",
        "-O",
        "strategy.params.slow={values=[50,51]}",
    ]);
    assert!(o.contains("stopped: nothing can be refined further"), "{o}");

    // The example's best does not improve for two iterations.
    let stale = dir.path().join("stale");
    let o = run_ok(&[
        "optimize",
        "--out",
        stale.to_str().unwrap(),
        "-O",
        "verify.top=300",
    ]);
    assert!(
        o.contains("stopped: the best verified objective did not improve for two iterations"),
        "{o}"
    );
    // The final report says why it stopped (it is rewritten at the end).
    let html = std::fs::read_to_string(stale.join("report.html")).unwrap();
    assert!(html.contains("did not improve for two iterations"));
}

#[test]
fn ctrl_c_checkpoints_saves_results_and_exits_130() {
    interrupt_checkpoints_and_exits_130(&["-INT"]);
}

/// GNU `timeout` sends its SIGTERM to the process and then to its process
/// group: two signals microseconds apart, which are one request to stop,
/// not "stop now" (that lost the checkpoint).
#[test]
fn a_doubled_sigterm_still_checkpoints() {
    interrupt_checkpoints_and_exits_130(&["-TERM", "-TERM"]);
}

/// Interrupts an optimize after its first iteration with `signals` sent
/// back to back: it checkpoints, says so, exits 130, and resumes.
fn interrupt_checkpoints_and_exits_130(signals: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bars.csv");
    run_ok(&[
        "synth",
        "--bars",
        "20000",
        "--seed",
        "5",
        "--out",
        data.to_str().unwrap(),
    ]);
    let out = dir.path().join("run");
    let args = [
        "optimize",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "1",
        "--strategy",
        "sma_cross",
        "-O",
        "strategy.params.fast={start=2,stop=300,step=2}",
        "-O",
        "strategy.params.slow={start=10,stop=600,step=5}",
        "-O",
        "verify.top=300",
        "-O",
        "optimize.refine_top=300",
    ];
    let child = sieve()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once iteration 1 is done (best.json exists), interrupt.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !out.join("best.json").exists() {
        assert!(Instant::now() < deadline, "iteration 1 never finished");
        std::thread::sleep(Duration::from_millis(5));
    }
    for signal in signals {
        let killed = std::process::Command::new("kill")
            .args([*signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("interrupted; re-run the same command to resume"),
        "{}",
        stderr(&o)
    );
    // A partial run has both results files, and `sieve report` works.
    assert!(out.join("best.json").exists() && out.join("report.html").exists());
    assert_eq!(read_json(&out.join("run.json"))["status"], "stopped");
    run_ok(&["report", out.to_str().unwrap()]);
    let o = sieve().args(args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming the run"), "{}", stderr(&o));
}

#[test]
fn the_example_on_the_users_data_takes_relative_windows() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("goog.csv");
    // Daily bars 2004-08-19 .. 2008-09-06: before the example's dates.
    write_bars(&data, 1480, 1_092_873_600_000, 86_400_000);
    let out = dir.path().join("run");
    let o = sieve()
        .args([
            "optimize",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["-O", "optimize.iterations=1", "-O", "verify.top=50"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("score from 40%, holdout from 80%"),
        "{}",
        stderr(&o)
    );
    let best = read_json(&out.join("best.json"));
    // 40% of 1,480 bars is bar 592; 80% is bar 1,184.
    let day = |i: i64| {
        chrono::DateTime::from_timestamp_millis(1_092_873_600_000 + i * 86_400_000)
            .unwrap()
            .format("%Y-%m-%d")
            .to_string()
    };
    assert_eq!(best["windows"]["score"]["start"], day(592));
    assert_eq!(best["windows"]["holdout"]["start"], day(1184));

    // Another strategy without a config: its own default grid.
    let o = sieve()
        .args(["optimize", "--strategy", "ema_cross", "--out"])
        .arg(dir.path().join("ema"))
        .args(["-O", "optimize.iterations=1", "-O", "verify.top=50"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("grid fast[") && !err.contains("trend_len"),
        "{err}"
    );

    // The holdout can be turned off.
    let o = run_ok(&[
        "backtest",
        "--data",
        data.to_str().unwrap(),
        "--strategy",
        "sma_cross",
        "-O",
        "score.holdout_start=none",
        "-O",
        "score.score_start=50%",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&o).unwrap();
    assert!(v["windows"]["holdout"].is_null() && v["windows"]["score"].is_object());
}

#[test]
fn window_errors_name_every_key_and_the_data_span() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("goog.csv");
    write_bars(&data, 1480, 1_092_873_600_000, 86_400_000);
    let o = run_err(&[
        "backtest",
        "--data",
        data.to_str().unwrap(),
        "-O",
        "score.score_start=2019-01-01",
        "-O",
        "score.holdout_start=2025-01-01",
    ]);
    assert!(
        stderr(&o).contains(
            "score.score_start 2019-01-01 and score.holdout_start 2025-01-01 are after the data (2004-08-19 .. 2008-09-06, 1480 bars)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn numeric_flags_and_mirrored_keys_are_validated_alike() {
    for bad in ["inf", "nan", "1e300", "-1"] {
        let flag = format!("--checkpoint-every={bad}");
        let o = run_err(&["optimize", &flag, "--out", "/nonexistent/x"]);
        assert!(
            stderr(&o).contains("--checkpoint-every"),
            "{bad}: {}",
            stderr(&o)
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("c.csv");
    std::fs::write(&cands, "fast,slow\n5,50\n").unwrap();
    let out = dir.path().join("v.csv");
    let o = run_err(&[
        "verify",
        "--strategy",
        "sma_cross",
        "--candidates",
        cands.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--top",
        "0",
    ]);
    assert!(
        stderr(&o).contains("verify.top: must be at least 1"),
        "{}",
        stderr(&o)
    );
    let o = run_err(&["sweep", "--out", out.to_str().unwrap(), "--top", "0"]);
    assert!(
        stderr(&o).contains("sweep.top: must be at least 1"),
        "{}",
        stderr(&o)
    );
    let o = run_err(&[
        "sweep",
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "100000",
    ]);
    assert!(
        stderr(&o).contains("--threads 100000: at most 4096"),
        "{}",
        stderr(&o)
    );
    let o = run_err(&["sweep", "--out", out.to_str().unwrap(), "--backend", "tpu"]);
    assert!(stderr(&o).contains("sweep.backend"), "{}", stderr(&o));
}

#[test]
fn constraints_that_exclude_everything_are_refused_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.csv");
    let o = run_err(&[
        "sweep",
        "--strategy",
        "sma_cross",
        "--out",
        out.to_str().unwrap(),
        "-O",
        "strategy.params.fast={start=50,stop=60,step=1}",
        "-O",
        "strategy.params.slow={start=10,stop=40,step=5}",
    ]);
    assert!(
        stderr(&o).contains("\"fast < slow\" excludes every combination"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
}

#[test]
fn docs_stand_alone() {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && !p.ends_with("target") {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| {
                ["md", "toml", "rs", "wgsl", "py", "sh"]
                    .iter()
                    .any(|e| x == *e)
            }) {
                files.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    for dir in [
        "docs", "examples", "src", "crates", "fuzz", "tests", "scripts",
    ] {
        walk(&root.join(dir), &mut files);
    }
    assert!(files.iter().any(|p| p.ends_with("docs/config.md")));
    assert!(files.iter().any(|p| p.ends_with("docs/metrics.md")));
    assert!(files
        .iter()
        .any(|p| p.ends_with("crates/sieve-core/src/config/mod.rs")));
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        // Spelt in pieces so this file does not match itself.
        let words = [
            concat!("..", "/shared"),
            concat!("DES", "IGN"),
            concat!("issue", " #"),
        ];
        for word in words {
            assert!(!text.contains(word), "{} mentions {word}", p.display());
        }
    }
    let help = run_ok(&["optimize", "--help"]);
    assert!(
        help.contains("docs/config.md") && help.contains("docs/metrics.md"),
        "{help}"
    );
}

/// One bar of data (its bars per year undefined): every strategy, built-in
/// or rules, gives a defined result — no finite objective, exit 3 — never
/// a panic of the screen's memo.
#[test]
fn one_bar_of_data_is_a_defined_result() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.csv");
    std::fs::write(&one, "date,open,high,low,close\n2020-01-01,1,2,0.5,1.5\n").unwrap();
    let out = dir.path().join("sweep.csv");
    let (one, out) = (one.to_str().unwrap(), out.to_str().unwrap());
    let rules = crate::repo_file("examples/strategies/macd.toml");
    let mut cases: Vec<Vec<&str>> = [
        "sma_cross",
        "ema_cross",
        "rsi_reversion",
        "donchian_breakout",
        "activation",
    ]
    .iter()
    .map(|s| vec!["--strategy", *s])
    .collect();
    cases.push(vec![
        "--config",
        rules.to_str().unwrap(),
        "-O",
        "score.score_start=none",
        "-O",
        "score.holdout_start=none",
    ]);
    for case in cases {
        let args = [&["sweep", "--data", one, "--out", out][..], &case[..]].concat();
        let o = run_err(&args);
        assert_eq!(o.status.code(), Some(3), "{case:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("no combination had"),
            "{case:?}: {}",
            stderr(&o)
        );
    }
}

/// Equity grown from `initial_cash = 1e308` overflows to infinity: the
/// report says its chart cannot be drawn instead of hanging in the chart's
/// tick search (which ran for minutes).
#[test]
fn huge_cash_writes_a_report_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = sieve()
        .args([
            "optimize",
            "--strategy",
            "sma_cross",
            "-O",
            "backtest.initial_cash=1e308",
        ])
        .args(ONE_SMALL_ITERATION)
        .args(["--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("sieve optimize with initial_cash = 1e308 ran past 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("The equity chart: not drawn"),
        "the report draws an axis it cannot"
    );
}

/// Runs `sieve args…`, sends it SIGTERM after `wait`; its output, and how
/// long it took to end after the signal.
fn sigterm_after(args: &[&str], wait: Duration) -> (Output, Duration) {
    let child = sieve()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(wait);
    let signalled = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    (out, signalled.elapsed())
}

/// 60,000 hourly bars of `sieve synth` at `path`: long enough that a run
/// on them can be stopped part way.
fn hourly_bars(path: &str) {
    run_ok(&[
        "synth",
        "--bars",
        "60000",
        "--bar-seconds",
        "3600",
        "--out",
        path,
    ]);
}

/// SIGTERM (what `timeout`, Slurm and Kubernetes send) stops a long
/// verification between candidates, as Ctrl-C does: exit 130, no partial
/// file, in a fraction of the time the whole verification takes.
#[test]
fn sigterm_stops_a_long_verify_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (bars, cands, verified) = (p("bars.csv"), p("c.csv"), p("v.csv"));
    hourly_bars(&bars);
    let common = [
        "--data",
        &bars,
        "--strategy",
        "sma_cross",
        "-O",
        "strategy.params.fast={start=2,stop=100,step=1}",
        "-O",
        "strategy.params.slow={start=110,stop=400,step=2}",
    ];
    run_ok(&[&["sweep", "--out", &cands, "--top", "5000"], &common[..]].concat());
    let args = [
        &["verify", "--candidates", &cands, "--out", &verified][..],
        &["--threads", "1"],
        &common[..],
    ]
    .concat();
    let started = Instant::now();
    run_ok(&args);
    let whole = started.elapsed();
    std::fs::remove_file(&verified).unwrap();
    let (out, stopped) = sigterm_after(&args, whole / 5);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        !Path::new(&verified).exists(),
        "a stopped verify wrote its file"
    );
    assert!(
        stopped < whole / 2,
        "stopped {stopped:?} after SIGTERM; the whole verify takes {whole:?}"
    );
}

/// Ten days of minute bars under the default objective (calmar, built on a
/// CAGR) is an extrapolation, said before the numbers and in the report;
/// prices near the top of f64 overflow the engine's sums, said too
/// (they gave 0 trades and exit 0 in silence).
#[test]
fn extrapolated_and_overflowing_numbers_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let minutes = dir.path().join("minutes.csv");
    write_bars(&minutes, 14_400, 1_704_067_200_000, 60_000);
    let m = minutes.to_str().unwrap();
    let o = sieve()
        .args(["backtest", "--data", m, "--strategy", "sma_cross"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("calmar compounds a window's return to a yearly rate")
            && stderr(&o).contains("full 10 days"),
        "{}",
        stderr(&o)
    );
    // total_return does not annualise: no warning.
    let o = sieve()
        .args(["backtest", "--data", m, "--strategy", "sma_cross"])
        .args(["-O", "score.objective=total_return"])
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("yearly rate"), "{}", stderr(&o));
    let out = dir.path().join("run");
    let args = [
        &["optimize", "--data", m, "--strategy", "sma_cross"][..],
        &ONE_SMALL_ITERATION,
        &["--out", out.to_str().unwrap()],
    ]
    .concat();
    run_ok(&args);
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("Warning: the objective calmar compounds"),
        "the report does not say it"
    );
    // Prices about 1e306.
    let huge = dir.path().join("huge.csv");
    let text: String = std::fs::read_to_string(&minutes)
        .unwrap()
        .lines()
        .take(2000)
        .enumerate()
        .map(|(i, line)| match i {
            0 => format!("{line}\n"),
            _ => {
                let mut f = line.split(',');
                let time = f.next().unwrap();
                let prices: Vec<String> = f
                    .map(|p| format!("{:e}", p.parse::<f64>().unwrap() * 1e304))
                    .collect();
                format!("{time},{}\n", prices.join(","))
            }
        })
        .collect();
    std::fs::write(&huge, text).unwrap();
    let o = sieve()
        .args([
            "backtest",
            "--data",
            huge.to_str().unwrap(),
            "--strategy",
            "sma_cross",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("where sums and products of prices overflow"),
        "{}",
        stderr(&o)
    );
    // Huge cash is said to be the cash, not the prices.
    let o = sieve()
        .args(["backtest", "--data", m, "--strategy", "sma_cross"])
        .args(["-O", "backtest.initial_cash=1e308"])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("backtest.initial_cash = 1e308 is outside 1e-150..1e150")
            && !stderr(&o).contains("prices from"),
        "{}",
        stderr(&o)
    );
}

/// Runs `sieve args…` to its end, sampling its peak memory (VmHWM) as it
/// runs; returns the output and the highest peak seen, in bytes.
fn run_sampling_memory(args: &[&str]) -> (Output, u64) {
    let mut child = sieve()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let kb = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak = peak.max(kb.unwrap_or(0) * 1024);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (child.wait_with_output().unwrap(), peak)
}

/// A CSV line of 120 MB is refused as it streams in, naming its line (it
/// was read whole, then grown into a record: 8.4 GB for a 2 GB line); a
/// header of 20,000 columns is refused; a NUL byte is reported on its own
/// line, not on line 1.
#[test]
fn huge_lines_and_binary_bytes_in_a_csv_are_refused_as_they_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(b"time,open,high,low,close\n2024-01-01,1,1,1,")
            .unwrap();
        let chunk = vec![b'9'; 1 << 20];
        for _ in 0..120 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\n").unwrap();
    }
    let (o, peak) = run_sampling_memory(&[
        "backtest",
        "--data",
        path.to_str().unwrap(),
        "--strategy",
        "sma_cross",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 2: longer than 1 MiB"),
        "{}",
        stderr(&o)
    );
    assert!(peak < 60 << 20, "peak memory {} MB", peak >> 20);
    std::fs::remove_file(&path).unwrap();

    let wide = dir.path().join("wide.csv");
    let mut header = String::from("time,open,high,low,close");
    for i in 0..20_000 {
        header.push_str(&format!(",c{i}"));
    }
    std::fs::write(&wide, format!("{header}\n")).unwrap();
    let o = run_err(&["backtest", "--data", wide.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("line 1: 20005 columns; a data file has at most 10000"),
        "{}",
        stderr(&o)
    );

    // An unclosed quote on line 3 of a 2 MB file: refused once the quoted
    // stretch passes 1 MiB, naming the line (it grew with the file); the
    // same bars with CR line ends (old Mac files, over 1 MiB) load.
    let mut rows = String::from("time,open,high,low,close\n");
    for i in 0..60_000i64 {
        let t = chrono::DateTime::from_timestamp(1_700_000_000 + i * 60, 0).unwrap();
        rows.push_str(&format!("{},1.5,2,1,1.5\n", t.format("%Y-%m-%d %H:%M:%S")));
    }
    let quoted = dir.path().join("quote.csv");
    let mut lines: Vec<&str> = rows.lines().collect();
    let third = format!("\"{}", lines[2]);
    lines[2] = &third;
    std::fs::write(&quoted, lines.join("\n")).unwrap();
    let o = run_err(&["backtest", "--data", quoted.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("line 3: a quoted field runs on for more than 1 MiB"),
        "{}",
        stderr(&o)
    );
    let cr = dir.path().join("cr.csv");
    std::fs::write(&cr, rows.replace('\n', "\r")).unwrap();
    assert!(std::fs::metadata(&cr).unwrap().len() > 1 << 20);
    run_ok(&["backtest", "--data", cr.to_str().unwrap()]);

    let nul = dir.path().join("nul.csv");
    let mut text = String::from("time,open,high,low,close\n");
    for d in 1..=20 {
        let close = if d == 11 { "1\0" } else { "1" };
        text.push_str(&format!("2024-01-{d:02},1,1,1,{close}\n"));
    }
    std::fs::write(&nul, text).unwrap();
    let o = run_err(&["backtest", "--data", nul.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("line 12: the file contains NUL bytes"),
        "{}",
        stderr(&o)
    );
}

/// A profit factor of +∞ (no losing trade) stays +∞ everywhere: best.json
/// writes "inf", the verdict and the iteration line print inf (not NaN, not
/// a 309-digit f64::MAX).
#[test]
fn an_infinite_objective_is_shown_as_infinite() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("up.csv");
    // A steady rise with a 40-day wave: every trade of a crossing wins.
    let mut text = String::from("time,open,high,low,close\n");
    for i in 0..1500 {
        let day = chrono::DateTime::from_timestamp(1_420_070_400 + i * 86_400, 0).unwrap();
        let wave = (std::f64::consts::TAU * i as f64 / 40.0).sin();
        let c = 100.0 * (1.0 + 0.002 * i as f64) + 5.0 * wave;
        text.push_str(&format!(
            "{},{c},{},{},{c}\n",
            day.format("%Y-%m-%d"),
            c + 0.5,
            c - 0.5
        ));
    }
    std::fs::write(&data, text).unwrap();
    let out = dir.path().join("run");
    let args = [
        &[
            "optimize",
            "--data",
            data.to_str().unwrap(),
            "--strategy",
            "sma_cross",
        ][..],
        &ONE_SMALL_ITERATION,
        &[
            "-O",
            "score.objective=profit_factor",
            "-O",
            "score.min_trades=1",
        ],
        &["--out", out.to_str().unwrap()],
    ]
    .concat();
    let o = sieve().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let best = read_json(&out.join("best.json"));
    assert_eq!(best["score"], "inf", "{}", best["score"]);
    assert_eq!(best["windows"]["score"]["profit_factor"], "inf");
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(said.contains("profit_factor inf"), "{said}");
    assert!(!said.contains("179769313486231570"), "{said}");
    assert!(!said.contains("NaN vs NaN"), "{said}");
}

/// SIGTERM while a large CSV loads stops the load at once (it ran to its
/// end before: seconds on a big file), exit 130.
#[test]
fn sigterm_stops_a_data_load() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("big.csv");
    let data = data.to_str().unwrap();
    run_ok(&[
        "synth",
        "--bars",
        "400000",
        "--bar-seconds",
        "60",
        "--out",
        data,
    ]);
    let args = ["backtest", "--data", data, "--strategy", "sma_cross"];
    let started = Instant::now();
    run_ok(&args);
    let whole = started.elapsed();
    let (out, stopped) = sigterm_after(&args, whole / 5);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stopped < whole / 3,
        "stopped {stopped:?} after SIGTERM; the whole backtest takes {whole:?}"
    );
}

/// A sweep with trade management (one combination at a time) on long data
/// stops inside its batch, not at its end (issue 47, item 2: it waited
/// 12 s): exit 130 in a fraction of the whole sweep, which here is one
/// batch. `sieve backtest` stopped by a signal exits 130 too, not 0.
#[test]
fn sigterm_stops_a_managed_sweep_inside_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (bars, swept, config) = (p("bars.csv"), p("s.csv"), p("managed.toml"));
    hourly_bars(&bars);
    std::fs::write(
        &config,
        "[strategy]\nname = \"managed\"\nentry = \"cross_above(close, sma(close, n))\"\n\
         exit = \"cross_below(close, sma(close, n))\"\nstop_loss = \"sl\"\n\
         [strategy.params]\nn = { start = 5, stop = 124, step = 1 }\n\
         sl = { start = 0.01, stop = 0.2, step = 0.01 }\n",
    )
    .unwrap();
    let args = [
        "sweep",
        "-c",
        &config,
        "--data",
        &bars,
        "--out",
        &swept,
        "--threads",
        "1",
    ];
    let started = Instant::now();
    run_ok(&args);
    let whole = started.elapsed();
    std::fs::remove_file(&swept).unwrap();
    let (out, stopped) = sigterm_after(&args, whole / 4);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        !Path::new(&swept).exists(),
        "a stopped sweep wrote its file"
    );
    assert!(
        stopped < whole / 3,
        "stopped {stopped:?} after SIGTERM; the whole sweep (one batch) takes {whole:?}"
    );
}
