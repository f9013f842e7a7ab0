//! `data.detail`: finer bars walked where a bar is ambiguous, in the
//! screen and verify alike, part of the data hash but not its path.

use std::collections::HashMap;
use std::path::Path;

use crate::{assert_refused, run_err, run_ok};

/// A level rule with a stop and a target tight enough that hourly bars
/// often reach both.
const CONFIG: &str = r#"
[data]
path = "hourly.csv"
DETAIL
[strategy]
name = "level_bracket"
entry = "close > sma(close, n)"
exit = "close < sma(close, n)"
stop_loss = "sl"
take_profit = "tp"
[strategy.params]
n = { start = 5, stop = 40, step = 5 }
sl = { values = [0.003, 0.004] }
tp = { values = [0.003, 0.004] }
[score]
score_start = "2015-01-20"
min_trades = 0
"#;

fn write_config(dir: &Path, name: &str, detail: Option<&str>) -> String {
    let line = detail.map_or(String::new(), |d| format!("detail = \"{d}\""));
    let path = dir.join(name);
    std::fs::write(&path, CONFIG.replace("DETAIL", &line)).unwrap();
    path.to_str().unwrap().to_string()
}

/// The sweep's rows by grid index: (n, sl, tp) → score text.
fn scores(csv: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let r: Vec<&str> = l.split(',').collect();
            let key = format!("{} {} {}", r[col("n")], r[col("sl")], r[col("tp")]);
            (key, r[col("score")].to_string())
        })
        .collect()
}

fn data_hash(meta: &Path) -> String {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(meta).unwrap()).unwrap();
    v["data_hash"].as_str().unwrap().to_string()
}

#[test]
fn detail_bars_screen_as_verify_and_change_ambiguous_bars_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let s = |name: &str| p(name).to_str().unwrap().to_string();
    run_ok(&[
        "synth",
        "--bars",
        "900",
        "--bar-seconds",
        "3600",
        "--detail",
        &s("minute.csv"),
        "--detail-per-bar",
        "12",
        "--out",
        &s("hourly.csv"),
    ]);
    let with = write_config(dir.path(), "with.toml", Some("minute.csv"));
    let without = write_config(dir.path(), "without.toml", None);
    run_ok(&["sweep", "-c", &with, "--out", &s("with.csv")]);
    run_ok(&["sweep", "-c", &without, "--out", &s("without.csv")]);
    // The screen's scores are verify's, bit for bit.
    run_ok(&[
        "verify",
        "-c",
        &with,
        "--candidates",
        &s("with.csv"),
        "--out",
        &s("v.csv"),
    ]);
    let (screened, verified) = (scores(&p("with.csv")), scores(&p("v.csv")));
    assert_eq!(screened.len(), 32);
    assert_eq!(screened, verified);
    // The detail bars decide some bars, and only those: a combination
    // whose backtest walked none scores as without them.
    let (plain, mut changed) = (scores(&p("without.csv")), 0);
    for (key, score) in &screened {
        let [n, sl, tp]: [&str; 3] = key.split(' ').collect::<Vec<_>>().try_into().unwrap();
        let sets = [format!("n={n}"), format!("sl={sl}"), format!("tp={tp}")];
        let mut args = vec!["backtest", "-c", &with, "--json"];
        for set in &sets {
            args.extend(["--set", set]);
        }
        let v: serde_json::Value = serde_json::from_str(&run_ok(&args)).unwrap();
        assert_eq!(v["detail"]["uncovered"], 0, "{key}");
        if v["detail"]["walked"] == 0 {
            assert_eq!(score, &plain[key], "{key}: nothing walked");
        } else if score != &plain[key] {
            changed += 1;
        }
    }
    assert!(changed > 0, "no combination changed by its detail bars");
    // The detail bars are in the data hash; the file's path is not.
    let hash = data_hash(&p("with.meta.json"));
    assert_ne!(hash, data_hash(&p("without.meta.json")));
    std::fs::rename(p("minute.csv"), p("moved.csv")).unwrap();
    let moved = write_config(dir.path(), "moved.toml", Some("moved.csv"));
    run_ok(&["sweep", "-c", &moved, "--out", &s("moved_sweep.csv")]);
    assert_eq!(data_hash(&p("moved_sweep.meta.json")), hash);
    // No output may overwrite the detail file.
    let before = std::fs::read(p("moved.csv")).unwrap();
    assert_refused(
        &run_err(&["sweep", "-c", &moved, "--out", &s("moved.csv")]),
        "moved.csv",
    );
    assert_eq!(std::fs::read(p("moved.csv")).unwrap(), before);
}

#[test]
fn a_detail_file_that_is_not_finer_or_has_no_data_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    run_ok(&[
        "synth",
        "--bars",
        "50",
        "--bar-seconds",
        "3600",
        "--out",
        &s("hourly.csv"),
    ]);
    run_ok(&[
        "synth",
        "--bars",
        "50",
        "--bar-seconds",
        "7200",
        "--out",
        &s("coarse.csv"),
    ]);
    let config = write_config(dir.path(), "c.toml", Some("coarse.csv"));
    let out = run_err(&["backtest", "-c", &config]);
    assert!(
        crate::stderr(&out).contains("coarse.csv"),
        "{}",
        crate::stderr(&out)
    );
    assert!(
        crate::stderr(&out).contains("finer"),
        "{}",
        crate::stderr(&out)
    );
    let out = run_err(&[
        "backtest",
        "-O",
        &format!("data.detail={}", s("hourly.csv")),
    ]);
    assert!(
        crate::stderr(&out).contains("data.detail"),
        "{}",
        crate::stderr(&out)
    );
    // 45-minute bars do not divide an hour; a missing file names the key;
    // an empty path switches the detail off.
    run_ok(&[
        "synth",
        "--bars",
        "80",
        "--bar-seconds",
        "2700",
        "--out",
        &s("m45.csv"),
    ]);
    let config = write_config(dir.path(), "d45.toml", Some("m45.csv"));
    let out = run_err(&["backtest", "-c", &config]);
    assert!(
        crate::stderr(&out).contains("divide"),
        "{}",
        crate::stderr(&out)
    );
    let config = write_config(dir.path(), "gone.toml", Some("gone.csv"));
    let out = run_err(&["backtest", "-c", &config]);
    assert!(
        crate::stderr(&out).contains("data.detail"),
        "{}",
        crate::stderr(&out)
    );
    assert!(
        crate::stderr(&out).contains("gone.csv"),
        "{}",
        crate::stderr(&out)
    );
    let text = run_ok(&[
        "backtest",
        "-c",
        &config,
        "-O",
        "data.detail=",
        "-O",
        "score.score_start=2015-01-02",
    ]);
    assert!(!text.contains("data.detail"), "{text}");
}
