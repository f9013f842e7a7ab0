//! `tf(…)` and `informative(…)` end to end: a run folder reading another
//! instrument resumes with the file moved, is refused with its bars
//! changed, and `sieve report` rebuilds it; a missing file names its key.

use crate::{repo_file, run_err, run_ok, stderr};

fn config(dir: &std::path::Path, btc: &std::path::Path) -> std::path::PathBuf {
    let eth = repo_file("tests/data/frames/eth-5m-2023-03.csv");
    let text = format!(
        r#"[data]
path = "{}"
informative = {{ btc = "{}" }}

[strategy]
name = "btc_filter"
entry = "cross_above(sma(close, fast), sma(close, slow)) and informative(\"btc\", close > sma(close, 20)) and close > tf(\"4h\", sma(close, 3))"
exit = "cross_below(sma(close, fast), sma(close, slow))"

[strategy.params]
fast = {{ values = [4, 6, 8] }}
slow = {{ values = [24, 36] }}

[score]
objective = "total_return"
min_trades = 1

[optimize]
iterations = 1
"#,
        eth.display(),
        btc.display()
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_informative_run_resumes_moved_refuses_changed_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let btc = repo_file("tests/data/frames/btc-4h-2023-02.csv");
    let moved = dir.path().join("btc-copy.csv");
    std::fs::copy(&btc, &moved).unwrap();
    let out = dir.path().join("run");
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let cfg = config(dir.path(), &btc);
    run_ok(&["optimize", "-c", &s(&cfg), "--out", &s(&out)]);
    let best = std::fs::read_to_string(out.join("best.json")).unwrap();
    // The same bars elsewhere: the same run (its paths are no identity).
    let cfg_moved = config(dir.path(), &moved);
    run_ok(&["optimize", "-c", &s(&cfg_moved), "--out", &s(&out)]);
    assert_eq!(
        std::fs::read_to_string(out.join("best.json")).unwrap(),
        best
    );
    // `sieve report` reads the informative bars the run recorded.
    std::fs::remove_file(out.join("report.html")).unwrap();
    run_ok(&["report", &s(&out)]);
    assert!(out.join("report.html").exists());
    // Other bars under the same name: refused, naming the data.
    let text = std::fs::read_to_string(&moved).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(5);
    std::fs::write(&moved, lines.join("\n")).unwrap();
    let refused = run_err(&["optimize", "-c", &s(&cfg_moved), "--out", &s(&out)]);
    assert!(stderr(&refused).contains("data"), "{}", stderr(&refused));
    // A missing file names its key.
    let missing = config(dir.path(), &dir.path().join("nope.csv"));
    let err = run_err(&["backtest", "-c", &s(&missing)]);
    assert!(
        stderr(&err).contains("data.informative.btc") && stderr(&err).contains("no such file"),
        "{}",
        stderr(&err)
    );
}
