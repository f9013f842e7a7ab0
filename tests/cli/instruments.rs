//! One grid over several instruments (`data.paths`): every score is the
//! aggregate of single-instrument backtests, copies of one file change
//! nothing, and shards, merges and threads stay byte-identical.

use std::path::{Path, PathBuf};

use sieve_core::data::{synth, write_bars, Bars};

use crate::{run_err, run_ok, stderr};

const GRID: &str = r#"
[strategy]
name = "sma_cross"
[strategy.params]
fast = { start = 4, stop = 28, step = 4 }
slow = { start = 20, stop = 120, step = 20 }
[score]
score_start = "2017-01-01"
"#;

/// Three instruments of different lengths, in three formats.
fn instruments(dir: &Path) -> Vec<(String, PathBuf)> {
    [
        ("a.csv", 1500, 11),
        ("b.parquet", 1500, 12),
        ("c.feather", 1200, 13),
    ]
    .into_iter()
    .map(|(file, n, seed)| {
        let path = dir.join(file);
        write_bars(&synth(n, seed), &path).unwrap();
        (file.split('.').next().unwrap().to_string(), path)
    })
    .collect()
}

fn config(dir: &Path, name: &str, data: &str, score: &str) -> String {
    let path = dir.join(name);
    let text = GRID.replace("[score]\n", &format!("[score]\n{score}\n"));
    std::fs::write(&path, format!("[data]\n{data}\n{text}")).unwrap();
    path.to_str().unwrap().to_string()
}

fn paths_key(files: &[&Path]) -> String {
    let list: Vec<String> = files
        .iter()
        .map(|p| format!("{:?}", p.to_str().unwrap()))
        .collect();
    format!("paths = [{}]", list.join(", "))
}

/// `sieve sweep -c CONFIG --out OUT --top TOP`, which must succeed.
fn sweep(config: &str, out: &Path, top: &str) {
    run_ok(&[
        "sweep",
        "-c",
        config,
        "--out",
        out.to_str().unwrap(),
        "--top",
        top,
    ]);
}

/// The rows of a CSV as maps from column to text.
pub fn rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

/// The score-window objective of one instrument alone, from `sieve backtest`.
fn single_objective(file: &Path, fast: &str, slow: &str) -> f64 {
    let out = run_ok(&[
        "backtest",
        "--data",
        file.to_str().unwrap(),
        "--strategy",
        "sma_cross",
        "--set",
        &format!("fast={fast}"),
        "--set",
        &format!("slow={slow}"),
        "-O",
        "score.score_start=\"2017-01-01\"",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["windows"]["score"]["objective"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

fn by_hand(how: &str, values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match how {
        "mean" => values.iter().sum::<f64>() / values.len() as f64,
        "min" => sorted[0],
        "median" => sorted[sorted.len() / 2], // three values
        _ => unreachable!(),
    }
}

#[test]
fn each_verified_score_is_the_aggregate_of_single_instrument_backtests() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let list: Vec<&Path> = files.iter().map(|(_, p)| p.as_path()).collect();
    for how in ["mean", "median", "min"] {
        let cfg = config(
            dir.path(),
            &format!("{how}.toml"),
            &paths_key(&list),
            &format!("aggregate = \"{how}\""),
        );
        let sweep = dir.path().join(format!("{how}-sweep.csv"));
        let verified = dir.path().join(format!("{how}-verified.csv"));
        run_ok(&[
            "sweep",
            "-c",
            &cfg,
            "--out",
            sweep.to_str().unwrap(),
            "--top",
            "12",
        ]);
        run_ok(&[
            "verify",
            "-c",
            &cfg,
            "--candidates",
            sweep.to_str().unwrap(),
            "--out",
            verified.to_str().unwrap(),
        ]);
        let screened = rows(&sweep);
        let verified = rows(&verified);
        assert_eq!(verified.len(), 12);
        for row in verified.iter().take(4) {
            let (fast, slow) = (&row["fast"], &row["slow"]);
            let singles: Vec<f64> = files
                .iter()
                .map(|(_, p)| single_objective(p, fast, slow))
                .collect();
            for ((name, _), single) in files.iter().zip(&singles) {
                assert_eq!(num(&row[&format!("score_{name}")]), *single, "{how} {name}");
            }
            let score = num(&row["score"]);
            assert_eq!(
                score,
                by_hand(how, &singles),
                "{how} {fast}/{slow}: {singles:?}"
            );
            // The screen ranks by the same aggregate, bit for bit.
            let screen = screened
                .iter()
                .find(|s| s["grid_index"] == row["grid_index"])
                .unwrap();
            assert_eq!(num(&screen["score"]), score, "{how}: screen == verified");
        }
    }
}

#[test]
fn two_copies_of_one_file_score_exactly_like_the_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let a = files[0].1.as_path();
    let alone_cfg = config(
        dir.path(),
        "alone.toml",
        &format!("path = {:?}", a.to_str().unwrap()),
        "",
    );
    let alone = dir.path().join("alone.csv");
    sweep(&alone_cfg, &alone, "30");
    for how in ["mean", "min", "median"] {
        let cfg = config(
            dir.path(),
            "twice.toml",
            &format!("{}\nnames = [\"x\", \"y\"]", paths_key(&[a, a])),
            &format!("aggregate = \"{how}\""),
        );
        let twice = dir.path().join("twice.csv");
        run_ok(&[
            "sweep",
            "-c",
            &cfg,
            "--out",
            twice.to_str().unwrap(),
            "--top",
            "30",
        ]);
        let (one, two) = (rows(&alone), rows(&twice));
        assert_eq!(one.len(), 30);
        for (o, t) in one.iter().zip(&two) {
            for col in ["rank", "grid_index", "fast", "slow", "score"] {
                assert_eq!(o[col], t[col], "{how} {col}");
            }
            // Trades are summed over instruments.
            assert_eq!(2 * num(&o["trades"]) as u64, num(&t["trades"]) as u64);
        }
    }
}

#[test]
fn shards_merge_and_thread_counts_give_identical_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let list: Vec<&Path> = files.iter().map(|(_, p)| p.as_path()).collect();
    let cfg = config(
        dir.path(),
        "c.toml",
        &paths_key(&list),
        "aggregate = \"median\"",
    );
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let sweep = |o: &str, extra: &[&str]| {
        let mut args = vec!["sweep", "-c", &cfg, "--out", o, "--top", "30"];
        args.extend(extra);
        run_ok(&args);
    };
    sweep(&out("whole.csv"), &["--threads", "2"]);
    sweep(&out("one.csv"), &["--threads", "1"]);
    sweep(&out("p0.csv"), &["--shard", "0/2"]);
    sweep(&out("p1.csv"), &["--shard", "1/2"]);
    run_ok(&[
        "merge",
        &out("p1.csv"),
        &out("p0.csv"),
        "--out",
        &out("merged.csv"),
    ]);
    let whole = std::fs::read(out("whole.csv")).unwrap();
    assert!(whole.len() > 500);
    assert_eq!(std::fs::read(out("one.csv")).unwrap(), whole);
    assert_eq!(std::fs::read(out("merged.csv")).unwrap(), whole);
}

/// Constant prices: no crossing, no trade, an undefined objective.
fn flat(n: usize) -> Bars {
    let mut b = synth(n, 1);
    for v in [&mut b.open, &mut b.high, &mut b.low, &mut b.close] {
        v.iter_mut().for_each(|x| *x = 100.0);
    }
    b
}

#[test]
fn an_undefined_instrument_undefines_the_aggregate_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let a = files[0].1.as_path();
    let flat_path = dir.path().join("flat.csv");
    write_bars(&flat(1500), &flat_path).unwrap();
    let alone_cfg = config(
        dir.path(),
        "alone.toml",
        &format!("path = {:?}", a.to_str().unwrap()),
        "",
    );
    let alone = dir.path().join("alone.csv");
    sweep(&alone_cfg, &alone, "10");
    let both = paths_key(&[a, &flat_path]);

    let strict = config(dir.path(), "strict.toml", &both, "");
    let out = dir.path().join("strict.csv");
    let e = stderr(&run_err(&[
        "sweep",
        "-c",
        &strict,
        "--out",
        out.to_str().unwrap(),
        "--top",
        "10",
    ]));
    assert!(e.contains("no combination had a finite calmar"), "{e}");
    assert!(e.contains("score.aggregate_skip_undefined"), "{e}");
    assert!(rows(&out).iter().all(|r| num(&r["score"]).is_nan()));

    let skip = config(
        dir.path(),
        "skip.toml",
        &both,
        "aggregate_skip_undefined = true",
    );
    let out = dir.path().join("skip.csv");
    sweep(&skip, &out, "10");
    let (one, skipped) = (rows(&alone), rows(&out));
    for (o, s) in one.iter().zip(&skipped) {
        assert_eq!(
            (&o["grid_index"], &o["score"]),
            (&s["grid_index"], &s["score"])
        );
    }
}

#[test]
fn optimize_reports_every_instrument() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let list: Vec<&Path> = files.iter().map(|(_, p)| p.as_path()).collect();
    let cfg = config(
        dir.path(),
        "o.toml",
        &paths_key(&list),
        "aggregate = \"min\"",
    );
    let out = dir.path().join("run");
    run_ok(&[
        "optimize",
        "-c",
        &cfg,
        "--out",
        out.to_str().unwrap(),
        "-O",
        "optimize.iterations=1",
    ]);
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    assert_eq!(best["aggregate"], "min");
    let (fast, slow) = (
        best["params"]["fast"].as_f64().unwrap().to_string(),
        best["params"]["slow"].as_f64().unwrap().to_string(),
    );
    let mut singles = Vec::new();
    for (name, path) in &files {
        let single = single_objective(path, &fast, &slow);
        let recorded = best["instruments"][name]["score"]["objective"]
            .as_f64()
            .unwrap();
        assert_eq!(recorded, single, "{name}");
        singles.push(single);
    }
    assert_eq!(best["score"].as_f64().unwrap(), by_hand("min", &singles));
    assert_eq!(
        best["windows"]["score"]["objective"].as_f64().unwrap(),
        by_hand("min", &singles)
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    for (name, _) in &files {
        assert!(
            report.contains(&format!("<h2>Instrument {name}</h2>")),
            "{name}"
        );
        // Run settings: each instrument's own span (they differ in length).
        let bars = sieve_core::data::load(
            &files.iter().find(|(n, _)| n == name).unwrap().1,
            &Default::default(),
        )
        .unwrap()
        .bars
        .len();
        assert!(
            report.contains(&format!("<td>{name}: bars</td><td>{bars}</td>")),
            "{name}: {bars} bars"
        );
    }
    // The report command rebuilds it from the files the run recorded.
    std::fs::remove_file(out.join("report.html")).unwrap();
    run_ok(&["report", out.to_str().unwrap()]);
    assert!(out.join("report.html").exists());
}

#[test]
fn instrument_mistakes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let (a, b) = (files[0].1.as_path(), files[1].1.as_path());
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let a_again = dir.path().join("other").join("a.csv");
    std::fs::copy(a, &a_again).unwrap();
    let glob = format!("{:?}", dir.path().join("*.nothing").to_str().unwrap());
    let cases: Vec<(String, &str, Vec<&str>)> = vec![
        (
            paths_key(&[a, &a_again]),
            "",
            vec!["instrument 'a' names both", "data.names"],
        ),
        (
            format!("{}\nnames = [\"x\"]", paths_key(&[a, b])),
            "",
            vec!["data.names: 1 name(s) for 2 file(s)"],
        ),
        (format!("paths = {glob}"), "", vec!["matches no file"]),
        (
            "paths = [\"a.csv\", 3]".to_string(),
            "",
            vec!["data.paths", "a file path or a list of file paths"],
        ),
        (
            format!("path = {:?}\n{}", a.to_str().unwrap(), paths_key(&[a, b])),
            "",
            vec!["data.path and data.paths are both set"],
        ),
        (
            paths_key(&[a, b]),
            "aggregate = \"max\"",
            vec!["score.aggregate", "mean, median or min"],
        ),
        (
            format!("{}\nnames = [\"x\", \"a b\"]", paths_key(&[a, b])),
            "",
            vec!["data.names", "\"a b\""],
        ),
    ];
    for (data, score, words) in cases {
        let cfg = config(dir.path(), "bad.toml", &data, score);
        let out = dir.path().join("never.csv");
        let e = stderr(&run_err(&[
            "sweep",
            "-c",
            &cfg,
            "--out",
            out.to_str().unwrap(),
        ]));
        for w in words {
            assert!(e.contains(w), "'{w}' not in: {e}");
        }
        assert!(!out.exists());
    }
    let cfg = config(dir.path(), "two.toml", &paths_key(&[a, b]), "");
    let e = stderr(&run_err(&[
        "backtest",
        "-c",
        &cfg,
        "--set",
        "fast=4",
        "--set",
        "slow=20",
        "--trades",
        dir.path().join("t.csv").to_str().unwrap(),
    ]));
    assert!(e.contains("one instrument's record"), "{e}");
    let e = stderr(&run_err(&[
        "walkforward",
        "-c",
        &cfg,
        "-O",
        "walkforward.train=\"2y\"",
        "-O",
        "walkforward.test=\"6m\"",
        "--out",
        dir.path().join("wf").to_str().unwrap(),
    ]));
    assert!(e.contains("studies one instrument"), "{e}");
}

/// `--data FILE` on a config with `data.paths` studies that file alone (the
/// way out the multi-instrument errors point to), exactly as without the list.
#[test]
fn data_flag_replaces_the_config_instruments() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let (a, b) = (files[0].1.as_path(), files[1].1.as_path());
    let two = config(dir.path(), "two.toml", &paths_key(&[a, b]), "");
    let none = config(dir.path(), "none.toml", "", "");
    let args = |cfg: &str, trades: &Path| -> Vec<String> {
        [
            "backtest",
            "-c",
            cfg,
            "--data",
            a.to_str().unwrap(),
            "--set",
            "fast=4",
            "--set",
            "slow=20",
            "--json",
            "--trades",
            trades.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let (t1, t2) = (dir.path().join("t1.csv"), dir.path().join("t2.csv"));
    let with_list = args(&two, &t1);
    let without = args(&none, &t2);
    let out1 = run_ok(&with_list.iter().map(String::as_str).collect::<Vec<_>>());
    let out2 = run_ok(&without.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out1, out2);
    assert!(!out1.contains("instruments"), "{out1}");
    assert_eq!(std::fs::read(&t1).unwrap(), std::fs::read(&t2).unwrap());
}

/// A 3-day series beside 4-year ones: with shares of the combined timeline
/// its windows fall after its data, refused; `score.shares = "each"` takes
/// a share of each instrument's own bars (each gets its own windows, as
/// when it runs alone), the spans' difference is warned about, and each
/// instrument's objective is printed and in the report.
#[test]
fn shares_of_each_instrument_and_spans_that_differ() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.csv");
    write_bars(&synth(1500, 21), &long).unwrap();
    // 72 hourly bars, from the long series' first day.
    let mut hours: Bars = synth(72, 22);
    let t0 = synth(1, 21).time[0];
    for (i, t) in hours.time.iter_mut().enumerate() {
        *t = t0 + i as i64 * 3_600_000;
    }
    let short = dir.path().join("short.csv");
    write_bars(&hours, &short).unwrap();
    let data = paths_key(&[&long, &short]);
    let write = |name: &str, score: &str| {
        let path = dir.path().join(name);
        let grid = "[strategy]\nname = \"sma_cross\"\n[strategy.params]\nfast = { start = 4, stop = 12, step = 4 }\nslow = { start = 20, stop = 40, step = 20 }\n";
        std::fs::write(
            &path,
            format!("[data]\n{data}\n{grid}[score]\nscore_start = \"40%\"\nholdout_start = \"80%\"\nobjective = \"total_return\"\n{score}"),
        )
        .unwrap();
        path
    };
    let combined = write("combined.toml", "");
    let refused = run_err(&[
        "sweep",
        "-c",
        combined.to_str().unwrap(),
        "--out",
        dir.path().join("x.csv").to_str().unwrap(),
    ]);
    assert!(
        stderr(&refused).contains("instrument 'short'")
            && stderr(&refused).contains("score.shares = \"each\" takes each one's windows"),
        "{}",
        stderr(&refused)
    );
    let each_path = write("each.toml", "shares = \"each\"\n");
    let out = dir.path().join("run");
    let o = crate::sieve()
        .args([
            "optimize",
            "-c",
            each_path.to_str().unwrap(),
            "-O",
            "optimize.iterations=1",
        ])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the instruments' spans differ by more than 4×: short covers 3 days, long covers 1499 days"),
        "{}",
        stderr(&o)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("objective per instrument"), "{stdout}");
    // Each instrument's windows are its own share: 40 % of 72 hours.
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("best.json")).unwrap()).unwrap();
    let short_score = &best["instruments"]["short"]["score"];
    let hour = |i: usize| {
        chrono::DateTime::from_timestamp_millis(hours.time[i])
            .unwrap()
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
    };
    assert_eq!(
        short_score["start"].as_str(),
        Some(hour(28).as_str()),
        "{short_score}"
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("Objective per instrument"));
    assert!(report.contains("spans differ by more than"));
}
