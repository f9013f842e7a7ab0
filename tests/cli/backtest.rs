//! `sieve backtest` end to end: a cross computed by hand, the output equal
//! to the engine on every window, the table, mistakes as one clear error,
//! and `sieve strategies`.

use sieve_core::config::Config;
use sieve_core::evaluate::{Evaluator, Scoring};
use sieve_core::indicators::IndicatorSet;
use sieve_core::metrics::Metrics;
use sieve_core::strategy;

use crate::{repo_file, run_err, run_ok, stderr};

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&run_ok(args)).expect("valid JSON")
}

#[test]
fn hand_computed_cross_on_the_small_file() {
    // SMA(2) crosses above SMA(3) on 2021-01-08 (bar 7, close 100) and below on
    // 2021-01-12 (bar 11, close 101): one trade, +1% with fill = close.
    let data = repo_file("tests/data/small.csv");
    let data = data.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trades = dir.path().join("trades.csv");
    let v = json(&[
        "backtest",
        "--data",
        data,
        "--strategy",
        "sma_cross",
        "--set",
        "fast=2",
        "--set",
        "slow=3",
        "-O",
        "backtest.fill=close",
        "--json",
        "--trades",
        trades.to_str().unwrap(),
    ]);
    let full = &v["windows"]["full"];
    assert!((full["total_return"].as_f64().unwrap() - 1.0 / 100.0).abs() < 1e-12);
    assert_eq!(full["trades"].as_f64(), Some(1.0));
    let text = std::fs::read_to_string(&trades).unwrap();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        &row[..5],
        &["long", "closed", "2021-01-08", "100", "2021-01-12"]
    );

    // next_open: bought at open[8] = 100; the exit decided on the last bar is
    // never filled, so the trade stays open and is marked at the last close.
    let equity = dir.path().join("equity.csv");
    let v = json(&[
        "backtest",
        "--data",
        data,
        "--strategy",
        "sma_cross",
        "--set",
        "fast=2",
        "--set",
        "slow=3",
        "--json",
        "--equity",
        equity.to_str().unwrap(),
    ]);
    assert_eq!(v["windows"]["full"]["trades"].as_f64(), Some(0.0));
    let text = std::fs::read_to_string(&equity).unwrap();
    let last: Vec<&str> = text.lines().last().unwrap().split(',').collect();
    assert_eq!(last[0], "2021-01-12");
    assert!((last[1].parse::<f64>().unwrap() - 10_000.0 * 101.0 / 100.0).abs() < 1e-9);
    assert_eq!(last[2], "1");
}

#[test]
fn output_matches_the_engine_for_every_window() {
    let data = repo_file("tests/data/small.csv");
    let args = [
        "backtest",
        "--data",
        data.to_str().unwrap(),
        "--strategy",
        "ema_cross",
        "--set",
        "fast=2",
        "--set",
        "slow=4",
        "-O",
        "score.score_start=2021-01-05",
        "-O",
        "score.holdout_start=2021-01-10",
        "-O",
        "backtest.fee=0.001",
        "-O",
        "backtest.direction=long_short",
        "--json",
    ];
    let v = json(&args);
    let config = Config::parse(
        "[strategy]\nname = \"ema_cross\"\n[score]\nscore_start = \"2021-01-05\"\nholdout_start = \"2021-01-10\"\n[backtest]\nfee = 0.001\ndirection = \"long_short\"\n",
    )
    .unwrap();
    let bars = sieve_core::data::load(&data, &Default::default())
        .unwrap()
        .bars;
    let s = strategy::lookup("ema_cross").unwrap();
    let params = [2.0, 4.0];
    let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
    let ind = IndicatorSet::build(&bars, strategy::indicators_for(s, &params));
    let eval = Evaluator {
        bars: &bars,
        strategy: s,
        indicators: &ind,
        scoring: &scoring,
        portfolio: None,
    };
    let bt = eval.backtest(&params);
    for w in scoring.windows.all() {
        let m = eval.metrics(&bt, &w);
        for (name, value) in Metrics::NAMES.iter().zip(m.values()) {
            let got = &v["windows"][w.kind.to_string()][name];
            if value.is_nan() {
                assert!(got.is_null(), "{} {name}: {got}", w.kind);
            } else {
                assert_eq!(got.as_f64(), Some(value), "{} {name}", w.kind);
            }
        }
    }
}

#[test]
fn table_output_names_windows_and_metrics() {
    let out = run_ok(&[
        "backtest",
        "--strategy",
        "sma_cross",
        "-O",
        "score.score_start=2019-01-01",
    ]);
    for word in [
        "full 2015-01-01",
        "score 2019-01-01",
        "calmar",
        "objective (calmar)",
    ] {
        assert!(out.contains(word), "missing {word}:\n{out}");
    }
}

#[test]
fn user_mistakes_are_one_clear_error() {
    for (args, want) in [
        (vec!["backtest", "--set", "nope=3"], "nope"),
        (vec!["backtest", "--set", "trend_len=abc"], "abc"),
        (vec!["backtest", "--set", "trend_len=0"], "trend_len"),
        (
            vec!["backtest", "--data", "/no/such/file.csv"],
            "/no/such/file.csv",
        ),
        (
            vec!["backtest", "--config", "/no/such/config.toml"],
            "config.toml",
        ),
        (vec!["backtest", "--strategy", "magic"], "magic"),
        (vec!["backtest", "-O", "backtest.fee=-1"], "backtest.fee"),
        (
            vec!["backtest", "-O", "score.score_start=2099-01-01"],
            "score_start",
        ),
    ] {
        let out = run_err(&args);
        let err = stderr(&out);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
    }
}

#[test]
fn strategies_lists_every_parameter() {
    let out = run_ok(&["strategies"]);
    for s in strategy::registry() {
        assert!(out.contains(s.name()));
        for p in s.params() {
            assert!(
                out.contains(p.name.as_ref()),
                "{} missing {}",
                s.name(),
                p.name
            );
        }
    }
}

#[test]
fn synth_writes_what_the_library_generates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.csv");
    run_ok(&[
        "synth",
        "--bars",
        "250",
        "--seed",
        "3",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_eq!(
        sieve_core::data::load(&path, &Default::default())
            .unwrap()
            .bars,
        sieve_core::data::synth(250, 3)
    );
}
