//! The same prices in every format users bring give the same backtest, the
//! same sweep and the same run identity. The Parquet/Feather fixtures in
//! `tests/data/columnar/` were written by pandas and pyarrow
//! (`scripts/make_columnar_fixtures.py`); the CSV dialects are written here
//! from the reference CSV's bars.

use std::path::{Path, PathBuf};

use sieve_core::data::{load, Bars, LoadOptions};
use sieve_core::format::time;

use crate::{repo_file, run_ok};

const BACKTEST: [&str; 6] = [
    "--strategy",
    "sma_cross",
    "--set",
    "fast=3",
    "--set",
    "slow=8",
];

fn backtest(data: &Path, extra: &[&str]) -> String {
    let mut args = vec!["backtest", "--data", data.to_str().unwrap()];
    args.extend(BACKTEST);
    args.extend(extra);
    args.push("--json");
    run_ok(&args)
}

fn columnar_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_file("tests/data/columnar"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "csv"))
        .collect();
    files.sort();
    files
}

/// `HH:MM:SS` of a unix-ms time.
fn clock(ms: i64) -> String {
    let s = (ms / 1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The reference bars as a MetaTrader 5 tab export, a semicolon CSV, a
/// pandas CSV with New York offsets, and header-less klines (with the
/// `data.columns` they need).
fn csv_dialects(bars: &Bars, dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let volume = bars.volume.as_ref().unwrap();
    let values = |i: usize, sep: &str| {
        [
            bars.open[i],
            bars.high[i],
            bars.low[i],
            bars.close[i],
            volume[i],
        ]
        .map(|v| v.to_string())
        .join(sep)
    };
    let mut mt5 =
        String::from("<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<SPREAD>\n");
    let mut semicolon = String::from("Datetime;Open;High;Low;Close;Volume\n");
    let mut pandas = String::from(",open,high,low,close,volume\n");
    let mut klines = String::new();
    for (i, &t) in bars.time.iter().enumerate() {
        let day = |t: i64| time(t - t.rem_euclid(86_400_000));
        mt5.push_str(&format!(
            "{}\t{}\t{}\t3\n",
            day(t).replace('-', "."),
            clock(t),
            values(i, "\t")
        ));
        semicolon.push_str(&format!("{} {};{}\n", day(t), clock(t), values(i, ";")));
        let ny = t - 5 * 3_600_000;
        pandas.push_str(&format!(
            "{} {}-05:00,{}\n",
            day(ny),
            clock(ny),
            values(i, ",")
        ));
        klines.push_str(&format!("{t},{},{},42\n", values(i, ","), t + 3_599_999));
    }
    let kline_columns = "data.columns=[\"open_time\",\"open\",\"high\",\"low\",\"close\",\"volume\",\"close_time\",\"trades\"]";
    [
        ("mt5.csv", mt5, vec![]),
        ("semicolon.csv", semicolon, vec![]),
        ("pandas_new_york.csv", pandas, vec![]),
        (
            "klines.csv",
            klines,
            vec!["-O".to_string(), kline_columns.to_string()],
        ),
    ]
    .into_iter()
    .map(|(name, text, extra)| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        (path, extra)
    })
    .collect()
}

#[test]
fn every_format_of_the_same_prices_gives_the_same_backtest() {
    let reference = repo_file("tests/data/columnar/prices.csv");
    let bars = load(&reference, &LoadOptions::default()).unwrap().bars;
    assert_eq!(bars.len(), 48);
    assert_eq!(time(bars.time[1]), "2024-01-01 01:00:00");
    let expected = backtest(&reference, &[]);
    assert!(expected.contains("\"trades\""), "{expected}");

    let columnar = columnar_fixtures();
    assert!(columnar.len() >= 9, "{columnar:?}");
    for file in &columnar {
        let loaded = load(file, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // The exports' other columns (trade counts, the symbol) are not
        // prices.
        let prices = Bars {
            extra: Vec::new(),
            ..loaded.bars
        };
        assert_eq!(prices, bars, "{}", file.display());
        assert_eq!(backtest(file, &[]), expected, "{}", file.display());
    }
    let dir = tempfile::tempdir().unwrap();
    for (file, extra) in csv_dialects(&bars, dir.path()) {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        assert_eq!(backtest(&file, &extra), expected, "{}", file.display());
    }
}

/// A sweep over the CSV and over the Parquet file writes the same bytes,
/// identity (data hash) included: a run started on one resumes on the other.
#[test]
fn a_sweep_is_the_same_from_csv_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for name in ["prices.csv", "pandas_utc.parquet", "pandas.feather"] {
        let out = dir.path().join(format!("{name}.sweep.csv"));
        run_ok(&[
            "sweep",
            "--data",
            repo_file("tests/data/columnar")
                .join(name)
                .to_str()
                .unwrap(),
            "--strategy",
            "sma_cross",
            "-O",
            "strategy.params.fast={start=2,stop=6,step=1}",
            "-O",
            "strategy.params.slow={start=4,stop=12,step=2}",
            "-O",
            "score.score_start=2024-01-02T12:00:00",
            "--out",
            out.to_str().unwrap(),
        ]);
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("{name}.sweep.meta.json"))).unwrap(),
        )
        .unwrap();
        outputs.push((std::fs::read(&out).unwrap(), meta["data_hash"].clone()));
    }
    assert!(outputs[0].0.len() > 100);
    assert!(outputs[0].1.is_string());
    for o in &outputs[1..] {
        assert_eq!(o, &outputs[0]);
    }
}

/// A Parquet file through a pipe (no seeking, no length) is read whole,
/// and gives the backtest the file gives.
#[cfg(unix)]
#[test]
fn parquet_through_a_pipe_is_read_whole() {
    let file = repo_file("tests/data/columnar/pandas_utc.parquet");
    let expected = backtest(&file, &[]);
    let mut args = vec!["backtest", "--data", "/dev/stdin"];
    args.extend(BACKTEST);
    args.push("--json");
    let out = crate::sieve()
        .args(&args)
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Through a pipe: `cat FILE | sieve …` (stdin a file would be seekable).
    let mut child = crate::sieve()
        .args(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}
