//! The bad-input corpus (`tests/data/bad/`; its Parquet and Feather files are
//! written by `scripts/make_columnar_fixtures.py`): every file, the exit code it
//! must give and the words its message must contain. Unusual but honest
//! exports (BOM, CRLF, quoted numbers, offsets, gaps, pandas' index) load.

use std::path::Path;

use crate::{repo_file, sieve, stderr};

enum Kind {
    Data,
    Config,
    Candidates,
}

const CASES: &[(&str, Kind, i32, &[&str])] = &[
    ("data_bom.csv", Kind::Data, 0, &[]),
    ("data_crlf.csv", Kind::Data, 0, &[]),
    ("data_quoted_numbers.csv", Kind::Data, 0, &[]),
    ("data_timezone_offsets.csv", Kind::Data, 0, &[]),
    ("data_gaps.csv", Kind::Data, 0, &[]),
    ("data_pandas_index.csv", Kind::Data, 0, &[]),
    ("data_semicolon.csv", Kind::Data, 0, &[]),
    (
        "data_decimal_comma.csv",
        Kind::Data,
        2,
        &["line 2", "decimal commas"],
    ),
    (
        "data_mixed_separators.csv",
        Kind::Data,
        2,
        &["line 1", "comma-separated"],
    ),
    ("data_tab.csv", Kind::Data, 0, &[]),
    (
        "data_thousands_separator.csv",
        Kind::Data,
        2,
        &["line 2", "thousands separators"],
    ),
    (
        "data_missing_close.csv",
        Kind::Data,
        2,
        &["line 1", "missing column(s) close"],
    ),
    (
        "data_duplicate_column.csv",
        Kind::Data,
        2,
        &["line 1", "'close' appears twice"],
    ),
    (
        "data_renamed_column.csv",
        Kind::Data,
        2,
        &["line 1", "close", "found: date,"],
    ),
    (
        "data_mixed_time_formats.csv",
        Kind::Data,
        2,
        &["line 3", "mixed time formats"],
    ),
    (
        "data_duplicate_time.csv",
        Kind::Data,
        2,
        &["line 4", "duplicate time"],
    ),
    (
        "data_decreasing_time.csv",
        Kind::Data,
        2,
        &["line 5", "backwards"],
    ),
    ("data_nan.csv", Kind::Data, 2, &["line 3", "open", "finite"]),
    (
        "data_inf.csv",
        Kind::Data,
        2,
        &["line 4", "close", "finite"],
    ),
    (
        "data_zero_price.csv",
        Kind::Data,
        2,
        &["line 6", "not positive"],
    ),
    (
        "data_negative_price.csv",
        Kind::Data,
        2,
        &["line 7", "not positive"],
    ),
    (
        "data_high_below_low.csv",
        Kind::Data,
        2,
        &["line 2", "high 98 is below"],
    ),
    (
        "data_header_only.csv",
        Kind::Data,
        2,
        &["line 1", "no bars"],
    ),
    ("data_empty.csv", Kind::Data, 2, &["empty file"]),
    ("data_binary.png.csv", Kind::Data, 2, &["binary"]),
    ("data_ragged_row.csv", Kind::Data, 2, &["line 4", "fields"]),
    (
        "data_bad_time.csv",
        Kind::Data,
        2,
        &["line 3", "02.01.2021"],
    ),
    (
        "data_negative_volume.csv",
        Kind::Data,
        2,
        &["line 3", "volume"],
    ),
    (
        "data_parquet_missing_close.parquet",
        Kind::Data,
        2,
        &[
            "missing column(s) close",
            "found: open, high, low, volume, date",
        ],
    ),
    (
        "data_parquet_null_price.parquet",
        Kind::Data,
        2,
        &["row 3", "column 'close'", "empty (null)"],
    ),
    (
        "data_parquet_decreasing_time.parquet",
        Kind::Data,
        2,
        &["row 4", "backwards", "row 3"],
    ),
    (
        "data_parquet_text_prices.parquet",
        Kind::Data,
        2,
        &["column 'close'", "expected numbers"],
    ),
    (
        "data_parquet_truncated.parquet",
        Kind::Data,
        2,
        &["not a readable Parquet file"],
    ),
    (
        "data_feather_duplicate_time.feather",
        Kind::Data,
        2,
        &["row 5", "duplicate time (same as row 4)"],
    ),
    (
        "config_unknown_key.toml",
        Kind::Config,
        2,
        &["backtest.fees", "unknown field"],
    ),
    (
        "config_wrong_type.toml",
        Kind::Config,
        2,
        &["backtest.fee", "invalid type"],
    ),
    (
        "config_step_zero.toml",
        Kind::Config,
        2,
        &["strategy.params.fast", "step must be above 0"],
    ),
    (
        "config_start_above_stop.toml",
        Kind::Config,
        2,
        &["strategy.params.fast", "above stop"],
    ),
    (
        "config_constraint_unknown_param.toml",
        Kind::Config,
        2,
        &["strategy.constraints", "sloww"],
    ),
    ("config_huge_grid.toml", Kind::Config, 2, &["2^64"]),
    (
        "config_bad_syntax.toml",
        Kind::Config,
        2,
        &["config_bad_syntax.toml", "line 1"],
    ),
    (
        "config_unknown_strategy.toml",
        Kind::Config,
        2,
        &["strategy.name", "moon_phase", "sma_cross"],
    ),
    (
        "config_fractional_length.toml",
        Kind::Config,
        2,
        &["strategy.params.fast", "whole numbers"],
    ),
    (
        "config_bad_date.toml",
        Kind::Config,
        2,
        &["score.score_start", "next tuesday"],
    ),
    (
        "candidates_no_param_columns.csv",
        Kind::Candidates,
        2,
        &["line 1", "missing parameter column(s)"],
    ),
    (
        "candidates_bad_number.csv",
        Kind::Candidates,
        2,
        &["line 3", "column 'slow'", "lots"],
    ),
    (
        "candidates_out_of_range.csv",
        Kind::Candidates,
        2,
        &["line 3", "column 'fast'", "outside"],
    ),
    ("candidates_empty.csv", Kind::Candidates, 2, &["empty file"]),
    (
        "candidates_header_only.csv",
        Kind::Candidates,
        2,
        &["no candidates"],
    ),
];

fn run_case(path: &Path, kind: &Kind, out_dir: &Path) -> std::process::Output {
    let p = path.to_str().unwrap();
    let out = out_dir.join("out.csv");
    let out = out.to_str().unwrap();
    let args: Vec<&str> = match kind {
        Kind::Data => vec![
            "backtest",
            "--data",
            p,
            "--strategy",
            "sma_cross",
            "--set",
            "fast=2",
            "--set",
            "slow=3",
        ],
        Kind::Config => vec!["sweep", "--config", p, "--out", out, "--top", "5"],
        Kind::Candidates => vec![
            "verify",
            "--strategy",
            "sma_cross",
            "--candidates",
            p,
            "--out",
            out,
        ],
    };
    sieve().args(&args).output().unwrap()
}

#[test]
fn every_corpus_file_gives_its_exit_code_and_words() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = repo_file("tests/data/bad");
    let mut listed: Vec<&str> = CASES.iter().map(|c| c.0).collect();
    listed.sort_unstable();
    let mut on_disk: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort_unstable();
    assert_eq!(listed, on_disk, "every corpus file has a row in CASES");
    assert!(CASES.len() >= 30);
    for (name, kind, code, words) in CASES {
        let o = run_case(&corpus.join(name), kind, dir.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(*code), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        if *code != 0 {
            assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
            for w in *words {
                assert!(err.contains(w), "{name}: message lacks \"{w}\": {err}");
            }
            if matches!(kind, Kind::Data | Kind::Candidates) {
                assert!(err.contains(*name), "{name}: message names the file: {err}");
            }
        }
    }
    assert!(
        !dir.path().join("out.csv").exists(),
        "no output from a refused input"
    );
}

#[test]
fn a_very_long_line_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.csv");
    let mut text = String::from("date,open,high,low,close\n2021-01-01,1,2,1,1.5\n2021-01-02,");
    text.push_str(&"9".repeat(20_000_000));
    text.push_str(",2,1,1.5\n");
    std::fs::write(&path, text).unwrap();
    let o = run_case(&path, &Kind::Data, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 3") && err.len() < 2000,
        "short message naming the line: {}",
        &err[..err.len().min(300)]
    );
}

#[test]
fn outputs_never_overwrite_inputs_and_bad_folders_fail_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let cands = dir.path().join("c.csv");
    std::fs::write(&cands, "fast,slow\n5,50\n").unwrap();
    let c = cands.to_str().unwrap();
    let before = std::fs::read(&cands).unwrap();
    for (args, want) in [
        (
            vec![
                "verify",
                "--strategy",
                "sma_cross",
                "--candidates",
                c,
                "--out",
                c,
            ],
            "refusing to overwrite an input",
        ),
        (
            vec![
                "sweep",
                "--strategy",
                "sma_cross",
                "--out",
                "/no/such/folder/s.csv",
            ],
            "does not exist",
        ),
        (
            vec![
                "sweep",
                "--strategy",
                "sma_cross",
                "--out",
                "/proc/sieve-test.csv",
            ],
            "cannot write",
        ),
        (
            vec!["merge", c, "--out", c],
            "refusing to overwrite an input",
        ),
    ] {
        let started = std::time::Instant::now();
        let o = sieve().args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(started.elapsed().as_secs() < 5, "refused before the work");
    }
    assert_eq!(std::fs::read(&cands).unwrap(), before);
}

/// The accepted files load to the values written in them, by hand.
#[test]
fn accepted_corpus_files_load_their_values() {
    let load = |name: &str| {
        sieve_core::data::load(&repo_file("tests/data/bad").join(name), &Default::default())
            .unwrap()
            .bars
    };
    let day = |d: i64| 1_609_459_200_000 + d * 86_400_000; // 2021-01-01 + d days
    for name in ["data_bom.csv", "data_crlf.csv", "data_quoted_numbers.csv"] {
        let b = load(name);
        assert_eq!(b.time[..3], [day(0), day(1), day(2)], "{name}");
        assert_eq!(b.open[..5], [100.0, 101.0, 103.0, 105.0, 102.0], "{name}");
        assert_eq!(
            (b.high[0], b.low[0], b.close[0]),
            (102.0, 99.0, 101.0),
            "{name}"
        );
        assert_eq!(b.close[4], 98.0, "{name}");
    }
    // Offsets are converted to UTC: +02:00 midnight is 22:00 the day before.
    let b = load("data_timezone_offsets.csv");
    let hour = 3_600_000;
    assert_eq!(
        b.time,
        vec![day(0) - 2 * hour, day(0) + 23 * hour, day(2) + 5 * hour]
    );
    assert_eq!(b.close, vec![101.0, 103.0, 105.0]);
    // Gaps stay gaps: nothing is filled in.
    let b = load("data_gaps.csv");
    assert_eq!(b.time, vec![day(0), day(2), day(4), day(5)]);
    assert_eq!(b.close, vec![101.0, 105.0, 98.0, 95.0]);
    // pandas' unnamed index is the time; Adj Close is not the close.
    let b = load("data_pandas_index.csv");
    assert_eq!(b.time, vec![day(0), day(1)]);
    assert_eq!(b.close, vec![101.0, 103.0]);
    assert_eq!(b.volume, Some(vec![10.0, 10.0]));
}
