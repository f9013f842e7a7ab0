//! `sieve optimize` end to end: killed at every stage and resumed to the
//! same files, the run folder complete at every step.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{repo_file, run_ok, sieve, stderr};

/// A run whose second iteration sweeps long enough (20,000 bars, a wide
/// refined grid, one thread) to be killed in the middle of it.
const CONFIG: &str = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 300, step = 2 }
slow = { start = 10, stop = 600, step = 5 }
[score]
score_start = "2030-01-01"
[sweep]
top = 2000
[verify]
top = 300
[optimize]
iterations = 3
refine_top = 300
"#;

fn setup(dir: &Path) -> (String, String) {
    let data = dir.join("bars.csv");
    run_ok(&[
        "synth",
        "--bars",
        "20000",
        "--seed",
        "5",
        "--out",
        data.to_str().unwrap(),
    ]);
    let config = dir.join("opt.toml");
    std::fs::write(&config, CONFIG).unwrap();
    (
        config.to_str().unwrap().to_string(),
        data.to_str().unwrap().to_string(),
    )
}

fn optimize_args<'a>(config: &'a str, data: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "optimize",
        "--config",
        config,
        "--data",
        data,
        "--out",
        out,
        "--threads",
        "1",
        "--checkpoint-every",
        "0",
    ]
}

fn state(out: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(out.join("run.json")).ok()?;
    Some(serde_json::from_str(&text).expect("run.json is always complete"))
}

/// Every file under a final name parses completely.
fn assert_complete(dir: &Path) {
    for entry in walk(dir) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            continue; // a temporary name, never a final one
        }
        let text = std::fs::read_to_string(&entry).unwrap();
        if name.ends_with(".json") {
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{name} is partial: {e}"));
        } else if name.ends_with(".csv") {
            assert!(text.ends_with('\n'), "{name} is cut short");
            let fields = text.lines().next().unwrap().split(',').count();
            assert!(
                text.lines().all(|l| l.split(',').count() == fields),
                "{name} has a partial row"
            );
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn killed_during_iteration_2_sweep_resumes_to_the_same_result_without_redoing_iteration_1() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = setup(dir.path());

    let whole = dir.path().join("whole");
    run_ok(&optimize_args(&config, &data, whole.to_str().unwrap()));

    let out = dir.path().join("killed");
    let mut child = sieve()
        .args(optimize_args(&config, &data, out.to_str().unwrap()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until iteration 2's sweep has written a checkpoint, then SIGKILL.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let in_sweep_2 = state(&out).is_some_and(|s| {
            let its = s["iterations"].as_array().unwrap();
            its.len() == 2 && its[1]["stage"] == "sweep"
        });
        if in_sweep_2 && out.join("iter-002/sweep.checkpoint.json").exists() {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run finished before it could be killed; make iteration 2 longer"
        );
        assert!(Instant::now() < deadline, "iteration 2 never started");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_complete(&out);
    // A partial run has the results of its finished iteration.
    assert!(out.join("best.json").exists() && out.join("report.html").exists());

    let iter1 = out.join("iter-001/verified.csv");
    let before = std::fs::metadata(&iter1).unwrap().modified().unwrap();
    let resumed = sieve()
        .args(optimize_args(&config, &data, out.to_str().unwrap()))
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let log = stderr(&resumed);
    assert!(log.contains("resuming the run"), "{log}");
    assert!(
        log.contains("iteration 2: resuming the sweep at grid index"),
        "{log}"
    );
    assert_eq!(
        std::fs::metadata(&iter1).unwrap().modified().unwrap(),
        before,
        "iteration 1 was recomputed"
    );

    assert_eq!(
        std::fs::read(out.join("best.json")).unwrap(),
        std::fs::read(whole.join("best.json")).unwrap()
    );
    let iterations = state(&whole).unwrap()["iterations"]
        .as_array()
        .unwrap()
        .len();
    assert!(iterations >= 2);
    for i in 1..=iterations {
        for file in ["verified.csv", "sweep.csv"] {
            let rel = format!("iter-{i:03}/{file}");
            assert_eq!(
                std::fs::read(out.join(&rel)).unwrap(),
                std::fs::read(whole.join(&rel)).unwrap(),
                "{rel}"
            );
        }
    }
    assert!(
        !out.join("iter-002/sweep.checkpoint.json").exists(),
        "checkpoint removed once the sweep is done"
    );
    assert_complete(&out);
}

#[test]
fn another_config_in_the_folder_is_refused_unless_restart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let out_s = out.to_str().unwrap();
    let base = [
        "optimize",
        "--out",
        out_s,
        "-O",
        "optimize.iterations=1",
        "-O",
        "verify.top=50",
    ];
    run_ok(&base);
    let mut other = base.to_vec();
    other.extend(["-O", "backtest.fee=0.01"]);
    let refused = sieve().args(&other).output().unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("different config (changed: backtest.fee)")
            && stderr(&refused).contains("--restart"),
        "{}",
        stderr(&refused)
    );
    other.push("--restart");
    run_ok(&other);
}

#[test]
fn zero_config_demo_writes_results_and_a_report_with_charts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let stdout = run_ok(&["optimize", "--out", out.to_str().unwrap()]);
    assert!(
        stdout.contains("report.html") && stdout.contains("best.json"),
        "{stdout}"
    );
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    for w in ["full", "score", "holdout"] {
        assert!(
            best["windows"][w]["calmar"].is_number(),
            "{w} window metrics in best.json"
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.matches("<svg").count() >= 5,
        "λ histogram, degradation, score vs holdout, equity, heatmap, history"
    );
    // Self-contained: no scripts, nothing fetched (SVG namespaces are not fetches).
    assert!(
        !html.contains("<script") && !html.contains("src=") && !html.contains("<link"),
        "self-contained"
    );

    // Headless Chromium renders it with no script errors.
    let png = dir.path().join("report.png");
    let dom = dir.path().join("dom.html");
    let render = std::process::Command::new(repo_file("scripts/render-report.sh"))
        .args([
            out.join("report.html").as_os_str(),
            png.as_os_str(),
            dom.as_os_str(),
        ])
        .output()
        .unwrap();
    if render.status.code() == Some(3) && std::env::var_os("SIEVE_REQUIRE_CHROMIUM").is_none() {
        eprintln!("skipping the Chromium check: no chromium here (CI sets SIEVE_REQUIRE_CHROMIUM=1 and installs it)");
        return;
    }
    assert!(
        render.status.success(),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
    let log = String::from_utf8_lossy(&render.stderr);
    assert!(!log.contains("Uncaught"), "script errors: {log}");
    assert!(
        std::fs::metadata(&png).unwrap().len() > 10_000,
        "a real screenshot"
    );
    let rendered = std::fs::read_to_string(&dom).unwrap();
    // The robustness section leads the page, rendered.
    for words in [
        "Is it real?",
        "Deflated Sharpe Ratio",
        "Probability of Backtest Overfitting",
        "likely overfit",
    ] {
        assert!(rendered.contains(words), "rendered report lacks {words}");
    }
    assert!(
        rendered.matches("<svg").count() >= 4,
        "charts in the rendered page"
    );
}

/// A second run on a folder a run holds fails at once, naming the holder's
/// pid; the first run's files are untouched by it.
#[test]
fn a_second_run_on_a_busy_folder_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = setup(dir.path());
    let out = dir.path().join("busy");
    let o = out.to_str().unwrap();
    let mut first = sieve()
        .args(optimize_args(&config, &data, o))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // run.json is written as soon as the run holds the folder.
    let deadline = Instant::now() + Duration::from_secs(60);
    while state(&out).is_none() {
        assert!(first.try_wait().unwrap().is_none(), "the first run ended");
        assert!(Instant::now() < deadline, "the first run never started");
        std::thread::sleep(Duration::from_millis(2));
    }
    let started = Instant::now();
    let second = sieve()
        .args(optimize_args(&config, &data, o))
        .output()
        .unwrap();
    let took = started.elapsed();
    let still_running = first.try_wait().unwrap().is_none();
    first.kill().unwrap();
    first.wait().unwrap();
    let err = stderr(&second);
    assert!(
        still_running,
        "the first run ended before the second was tried"
    );
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is in use by another sieve run")
            && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    assert!(
        took < Duration::from_secs(30),
        "refused only after {took:?}"
    );
}

/// A folder that is not a sieve run folder is refused, whatever it holds,
/// and nothing in it is touched; `--restart` on a run folder removes only
/// what that run wrote.
#[test]
fn folders_that_are_not_runs_are_never_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = setup(dir.path());
    let small = dir.path().join("small.toml");
    std::fs::write(
        &small,
        CONFIG
            .replace("stop = 300, step = 2", "stop = 20, step = 4")
            .replace("stop = 600, step = 5", "stop = 100, step = 30")
            .replace("iterations = 3", "iterations = 1"),
    )
    .unwrap();
    let small = small.to_str().unwrap();
    let out = dir.path().join("mine");
    std::fs::create_dir_all(out.join("iter-001")).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("iter-001/sweep.csv"), "mine").unwrap();
    std::fs::write(out.join("report.html"), "mine").unwrap();
    let o = out.to_str().unwrap();
    let refused = sieve()
        .args(optimize_args(small, &data, o))
        .output()
        .unwrap();
    crate::assert_refused(&refused, "is not empty and holds no sieve run");
    for f in ["notes.txt", "iter-001/sweep.csv", "report.html"] {
        assert_eq!(std::fs::read_to_string(out.join(f)).unwrap(), "mine", "{f}");
    }
    assert!(
        !out.join(".sieve.lock").exists(),
        "a refused folder was written to"
    );
    // A user's own data.parquet is a file of theirs like any other ...
    let parquet = dir.path().join("parquet");
    std::fs::create_dir_all(&parquet).unwrap();
    std::fs::write(parquet.join("data.parquet"), "mine").unwrap();
    let refused = sieve()
        .args(optimize_args(small, &data, parquet.to_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    // ... while what sieve leaves before a run's first file (its lock, a
    // write cut short by a kill) does not make its folder somebody's.
    let cut = dir.path().join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    std::fs::write(cut.join(".sieve.lock"), "").unwrap();
    std::fs::write(cut.join("run.json.4242.tmp"), "{").unwrap();
    run_ok(&optimize_args(small, &data, cut.to_str().unwrap()));
    assert!(
        !cut.join("run.json.4242.tmp").exists(),
        "the cut write was left"
    );
    // A file of the user's named like a temporary one is theirs.
    std::fs::write(cut.join("prices.20240101.tmp"), "mine").unwrap();
    run_ok(&optimize_args(small, &data, cut.to_str().unwrap()));
    assert_eq!(
        std::fs::read_to_string(cut.join("prices.20240101.tmp")).unwrap(),
        "mine"
    );
    // A run folder, with a file of the user's in it and in an iteration.
    let run = dir.path().join("run");
    let r = run.to_str().unwrap();
    run_ok(&optimize_args(small, &data, r));
    std::fs::write(run.join("notes.txt"), "mine").unwrap();
    std::fs::write(run.join("iter-001/mine.txt"), "mine").unwrap();
    let before = state(&run).unwrap()["config_hash"].clone();
    let other = [&optimize_args(&config, &data, r)[..], &["--restart"]].concat();
    let mut child = sieve()
        .args(&other)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Once the new run is in its second iteration, the old one is cleared.
    let deadline = Instant::now() + Duration::from_secs(120);
    while state(&run).is_none_or(|s| s["iterations"].as_array().unwrap().len() < 2) {
        assert!(
            Instant::now() < deadline,
            "the restarted run never got going"
        );
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    child.wait().unwrap();
    // The new run replaced the old one ...
    assert_ne!(state(&run).unwrap()["config_hash"], before);
    // ... and left the user's files alone.
    for f in ["notes.txt", "iter-001/mine.txt"] {
        assert_eq!(std::fs::read_to_string(run.join(f)).unwrap(), "mine", "{f}");
    }
}
