//! `[portfolio]`: the instruments of `data.paths` from one account. The
//! screen scores what verification scores, bit for bit, whatever the
//! threads or shards; a portfolio of one is the single run; a position
//! limit holds; what a portfolio does not run yet is refused by key.
//! (Trade for trade against vectorbt: python/tests/test_portfolio.py.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sieve_core::data::{synth, write_bars, Bars};

use crate::instruments::rows;
use crate::{assert_refused, run_err, run_ok};

const GRID: &str = r#"
[strategy]
name = "sma_cross"
[strategy.params]
fast = { start = 4, stop = 28, step = 4 }
slow = { start = 20, stop = 120, step = 20 }
[backtest]
fee = 0.001
slippage = 0.0005
[score]
score_start = "40%"
"#;

/// Four instruments: two every day, one on weekdays only, one starting
/// late; written as CSV.
fn instruments(dir: &Path) -> Vec<PathBuf> {
    (0..4)
        .map(|k| {
            let bars = synth(1200, 21 + k as u64);
            // 1970-01-01 was a Thursday: weekdays are (days + 3) % 7 < 5.
            let keep: Vec<bool> = match k {
                2 => bars
                    .time
                    .iter()
                    .map(|t| (t / 86_400_000 + 3) % 7 < 5)
                    .collect(),
                3 => (0..bars.len()).map(|i| i >= 300).collect(),
                _ => vec![true; bars.len()],
            };
            let bars = kept(&bars, &keep);
            let path = dir.join(format!("i{k}.csv"));
            write_bars(&bars, &path).unwrap();
            path
        })
        .collect()
}

/// The bars where `keep` holds.
fn kept(bars: &Bars, keep: &[bool]) -> Bars {
    fn pick<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
        v.iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(x, _)| *x)
            .collect()
    }
    Bars {
        time: pick(&bars.time, keep),
        open: pick(&bars.open, keep),
        high: pick(&bars.high, keep),
        low: pick(&bars.low, keep),
        close: pick(&bars.close, keep),
        volume: bars.volume.as_deref().map(|v| pick(v, keep)),
        ..bars.clone()
    }
}

/// A config over `files` with `[portfolio]` set to `portfolio`.
fn config(dir: &Path, name: &str, files: &[PathBuf], portfolio: &str) -> String {
    let list: Vec<String> = files
        .iter()
        .map(|p| format!("{:?}", p.to_str().unwrap()))
        .collect();
    let path = dir.join(name);
    let text = format!(
        "[data]\npaths = [{}]\n{GRID}\n[portfolio]\n{portfolio}\n",
        list.join(", ")
    );
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn the_screen_scores_what_verification_scores_whatever_the_split() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(dir.path(), "p.toml", &files, "max_positions = 2");
    screen_equals_verify(dir.path(), &cfg);
}

/// `rank_by` reading a parameter: computed per combination.
#[test]
fn a_ranking_of_the_parameters_screens_what_verification_scores() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let rank = "max_positions = 1\nrank_by = \"close / sma(close, slow)\"";
    let cfg = config(dir.path(), "p.toml", &files, rank);
    screen_equals_verify(dir.path(), &cfg);
}

/// Longs and shorts from one account.
#[test]
fn long_short_screens_what_verification_scores() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(
        dir.path(),
        "p.toml",
        &files,
        "size = 0.3\nsize_of = \"cash\"",
    );
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[backtest]\n", "[backtest]\ndirection = \"long_short\"\n");
    std::fs::write(&cfg, text).unwrap();
    screen_equals_verify(dir.path(), &cfg);
    let trades = dir.path().join("t.csv");
    let args = [
        "backtest", "-c", &cfg, "--set", "fast=8", "--set", "slow=40",
    ];
    run_ok(&[&args[..], &["--trades", trades.to_str().unwrap()]].concat());
    let rows = rows(&trades);
    assert!(
        rows.iter().any(|r| r["side"] == "short")
            && rows.iter().any(|r| r["exit_reason"] == "reversal")
    );
}

/// A rotation in the rules: `rank` and `count` from `rank_by`.
#[test]
fn a_rotation_by_rank_screens_what_verification_scores() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(
        dir.path(),
        "p.toml",
        &files,
        "rank_by = \"close / sma(close, 30)\"",
    );
    let rules = r#"[strategy]
entry = "rank <= top and count >= 3 and close > sma(close, n)"
exit = "rank > top"
[strategy.params]
top = { start = 1, stop = 3, step = 1 }
n = { start = 5, stop = 60, step = 5 }
"#;
    replace_strategy(&cfg, rules);
    screen_equals_verify(dir.path(), &cfg);
    // A rank_by reading a parameter gives no rank to the rules: said so.
    let args = ["backtest", "-c", &cfg, "--set", "top=1", "--set", "n=5"];
    let bad = [
        &args[..],
        &["-O", "portfolio.rank_by=\"close / sma(close, n)\""],
    ]
    .concat();
    assert_refused(&run_err(&bad), "portfolio.rank_by");
}

/// Target weights: the strongest `top` by `rank()` across the
/// instruments, inverse-volatility within them (`total()`), rebalanced
/// on weekday `on`, capped at 0.9 exposed.
#[test]
fn target_weights_screen_what_verification_scores() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(
        dir.path(),
        "p.toml",
        &files,
        r#"weight = "if(rank(close / shift(close, n)) <= top, 1 / stdev(close, 10), 0) / total(1 / stdev(close, 10))"
rebalance = "weekday == on"
max_exposure = 0.9"#,
    );
    let params = r#"[strategy.params]
top = { start = 1, stop = 3, step = 1 }
n = { start = 10, stop = 60, step = 10 }
on = { values = [0, 2] }
"#;
    replace_strategy(&cfg, params);
    screen_equals_verify(dir.path(), &cfg);
    // Equal weight never sells out (no round trip): it still scores.
    let args = [
        "backtest", "-c", &cfg, "--set", "top=1", "--set", "n=10", "--json",
    ];
    let weight = r#"portfolio.weight="if(top > 0 and n > 0, 1 / count(close), 0)""#;
    let equal = [&args[..], &["-O", weight]].concat();
    let doc: serde_json::Value = serde_json::from_str(&run_ok(&equal)).unwrap();
    let score = &doc["windows"]["score"];
    assert_eq!(score["trades"], 0, "{score}");
    assert!(score["objective"].is_number(), "{score}");
    // Sizing and ordering keys of a signal portfolio do not apply.
    let args = ["backtest", "-c", &cfg, "--set", "top=1", "--set", "n=10"];
    for (set, key) in [
        ("portfolio.size=0.5", "portfolio.size"),
        (r#"portfolio.rank_by="close""#, "portfolio.rank_by"),
        (r#"backtest.direction="long_short""#, "backtest.direction"),
        (r#"strategy.entry="close > 0""#, "strategy.entry"),
        ("strategy.stop_loss=0.1", "strategy.stop_loss"),
    ] {
        assert_refused(&run_err(&[&args[..], &["-O", set]].concat()), key);
    }
    // A weight that is true or false, and rank() in a single run's rules.
    let bad = [&args[..], &["-O", r#"portfolio.weight="close > 0""#]].concat();
    assert_refused(&run_err(&bad), "portfolio.weight");
    let single = dir.path().join("s.toml");
    std::fs::write(
        &single,
        format!(
            "[data]\npath = {:?}\n[strategy]\nentry = \"rank(close) <= 1\"\nexit = \"false\"\n",
            files[0].to_str().unwrap()
        ),
    )
    .unwrap();
    let e = crate::stderr(&run_err(&["backtest", "-c", single.to_str().unwrap()]));
    assert!(
        e.contains("strategy.entry") && e.contains("portfolio.weight"),
        "{e}"
    );
}

/// Rules with a trailing stop on closes, sized by equity.
#[test]
fn rules_screen_what_verification_scores() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(dir.path(), "p.toml", &files, "size = 0.4");
    let rules = r#"[strategy]
entry = "cross_above(ema(close, fast), sma(close, slow))"
exit = "cross_below(close, sma(close, 10))"
trailing_stop = "2 * atr(14)"
"#;
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("[strategy]\nname = \"sma_cross\"\n", rules);
    std::fs::write(&cfg, text).unwrap();
    screen_equals_verify(dir.path(), &cfg);
}

/// Replaces the `[strategy]` section of the config at `cfg` with `section`.
fn replace_strategy(cfg: &str, section: &str) {
    let text = std::fs::read_to_string(cfg).unwrap();
    let start = text.find("[strategy]").unwrap();
    let end = text.find("[backtest]").unwrap();
    std::fs::write(cfg, format!("{}{section}{}", &text[..start], &text[end..])).unwrap();
}

/// Sweeps of `cfg` on 2 and 1 threads, in 2 shards merged and at every
/// vector level are the same bytes, and each score is verification's.
fn screen_equals_verify(dir: &Path, cfg: &str) {
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let sweep = |o: &str, extra: &[&str]| {
        let mut args = vec!["sweep", "-c", cfg, "--out", o, "--top", "1000"];
        args.extend(extra);
        run_ok(&args);
    };
    sweep(&out("whole.csv"), &["--threads", "2"]);
    sweep(&out("one.csv"), &["--threads", "1"]);
    sweep(&out("p0.csv"), &["--shard", "0/2"]);
    sweep(&out("p1.csv"), &["--shard", "1/2"]);
    let merged = out("merged.csv");
    run_ok(&["merge", &out("p1.csv"), &out("p0.csv"), "--out", &merged]);
    // The lanes of every vector level find the same changes.
    for level in ["avx2", "portable"] {
        let o = out(&format!("{level}.csv"));
        let args = ["sweep", "-c", cfg, "--out", &o, "--top", "1000"];
        let status = crate::sieve().env("SIEVE_SIMD", level).args(args).status();
        assert!(status.unwrap().success());
    }
    let whole = std::fs::read(out("whole.csv")).unwrap();
    for other in ["one.csv", "merged.csv", "avx2.csv", "portable.csv"] {
        assert_eq!(std::fs::read(out(other)).unwrap(), whole, "{other}");
    }
    let verified = out("v.csv");
    run_ok(&[
        "verify",
        "-c",
        cfg,
        "--candidates",
        &out("whole.csv"),
        "--out",
        &verified,
    ]);
    let screened: HashMap<String, String> = rows(Path::new(&out("whole.csv")))
        .into_iter()
        .map(|r| (r["grid_index"].clone(), r["score"].clone()))
        .collect();
    let verified = rows(Path::new(&verified));
    // Every allowed combination of the 7 × 6 grid (fast < slow).
    assert!(verified.len() > 30, "{}", verified.len());
    for r in &verified {
        let index = &r["grid_index"];
        assert_eq!(r["score"], screened[index], "grid index {index}");
    }
}

/// The metrics of `sieve backtest --json` by window.
fn backtest_windows(cfg: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "backtest", "-c", cfg, "--set", "fast=8", "--set", "slow=40", "--json",
    ];
    args.extend(extra);
    let doc: serde_json::Value = serde_json::from_str(&run_ok(&args)).unwrap();
    doc["windows"].clone()
}

/// Stops and targets fill inside the bar, as each instrument's trades
/// alone have them.
#[test]
fn stops_and_targets_screen_what_verification_scores() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(dir.path(), "p.toml", &files, "max_positions = 2");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "name = \"sma_cross\"\n",
        "name = \"sma_cross\"\nstop_loss = 0.04\ntake_profit = 0.08\nmax_bars = 30\n",
    );
    std::fs::write(&cfg, text).unwrap();
    screen_equals_verify(dir.path(), &cfg);
    let trades = dir.path().join("t.csv");
    let args = [
        "backtest", "-c", &cfg, "--set", "fast=8", "--set", "slow=40",
    ];
    run_ok(&[&args[..], &["--trades", trades.to_str().unwrap()]].concat());
    let reasons: std::collections::HashSet<String> = rows(&trades)
        .iter()
        .map(|r| r["exit_reason"].clone())
        .collect();
    for r in ["stop_loss", "take_profit"] {
        assert!(reasons.contains(r), "{reasons:?}");
    }
}

#[test]
fn a_portfolio_of_one_instrument_is_the_single_run() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let one = &files[..1];
    let all_in = config(
        dir.path(),
        "one.toml",
        one,
        "size = 1.0\nsize_of = \"cash\"",
    );
    let alone = dir.path().join("alone.toml");
    let text = format!("[data]\npath = {:?}\n{GRID}", one[0].to_str().unwrap());
    std::fs::write(&alone, text).unwrap();
    let portfolio = backtest_windows(&all_in, &[]);
    assert!(portfolio["full"]["trades"].as_u64().unwrap() > 5);
    assert_eq!(portfolio, backtest_windows(alone.to_str().unwrap(), &[]));
    // With a stop and a target (filled at their levels: no slippage to
    // take out of the trades' prices).
    let bracket = [
        "-O",
        "strategy.stop_loss=0.03",
        "-O",
        "strategy.take_profit=0.06",
        "-O",
        "backtest.slippage=0",
    ];
    let portfolio = backtest_windows(&all_in, &bracket);
    assert!(portfolio["full"]["trades"].as_u64().unwrap() > 5);
    assert_eq!(
        portfolio,
        backtest_windows(alone.to_str().unwrap(), &bracket)
    );
    // Filled at the closes that decide, with and without the bracket.
    for extra in [&[][..], &bracket[..]] {
        let at_close = [extra, &["-O", "backtest.fill=\"close\""][..]].concat();
        let portfolio = backtest_windows(&all_in, &at_close);
        assert!(portfolio["full"]["trades"].as_u64().unwrap() > 5);
        assert_eq!(
            portfolio,
            backtest_windows(alone.to_str().unwrap(), &at_close)
        );
    }
}

#[test]
fn no_more_positions_are_open_than_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    for limit in [1usize, 2] {
        let cfg = config(
            dir.path(),
            "p.toml",
            &files,
            &format!("max_positions = {limit}"),
        );
        let trades = dir.path().join("t.csv");
        run_ok(&[
            "backtest",
            "-c",
            &cfg,
            "--set",
            "fast=4",
            "--set",
            "slow=20",
            "--trades",
            trades.to_str().unwrap(),
        ]);
        let rows = rows(&trades);
        let instruments: std::collections::HashSet<&str> =
            rows.iter().map(|r| r["instrument"].as_str()).collect();
        assert!(
            rows.len() > 20 && instruments.len() == 4,
            "{} trades",
            rows.len()
        );
        // Entries and exits in time order (an exit before an entry at the
        // same time: exits fill first); never more than `limit` open.
        let mut events: Vec<(String, i32)> = Vec::new();
        for r in &rows {
            events.push((r["entry_time"].clone(), 1));
            if !r["exit_time"].is_empty() {
                events.push((r["exit_time"].clone(), -1));
            }
        }
        events.sort();
        let mut open = 0;
        for (_, change) in events {
            open += change;
            assert!(
                open <= limit as i32,
                "{open} open under max_positions = {limit}"
            );
        }
    }
}

/// The instruments' profits after fees add up to the portfolio's gain;
/// no more positions are open than the limit at any time.
#[test]
fn contributions_add_up_to_the_gain() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(dir.path(), "p.toml", &files, "max_positions = 2");
    let equity = dir.path().join("e.csv");
    let args = [
        "backtest", "-c", &cfg, "--set", "fast=4", "--set", "slow=20", "--json",
    ];
    let doc: serde_json::Value = serde_json::from_str(&run_ok(
        &[&args[..], &["--equity", equity.to_str().unwrap()]].concat(),
    ))
    .unwrap();
    let p = &doc["portfolio"];
    let pnl: f64 = p["instruments"]
        .as_object()
        .unwrap()
        .values()
        .map(|i| i["pnl"].as_f64().unwrap())
        .sum();
    let last = rows(&equity).last().unwrap()["equity"]
        .parse::<f64>()
        .unwrap();
    assert!(
        (pnl - (last - 10_000.0)).abs() <= 1e-9 * last,
        "{pnl} vs {last}"
    );
    assert_eq!(p["positions"]["max"].as_f64(), Some(2.0));
    let held = p["exposure"]["max"].as_f64().unwrap();
    assert!(held > 0.5 && held <= 1.0 + 1e-9, "{held}");
}

/// An optimize run's report shows the portfolio's instruments, and
/// `sieve report` rewrites it from the run folder (which reloads every
/// instrument).
#[test]
fn a_portfolio_run_reports_its_instruments() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cfg = config(dir.path(), "p.toml", &files, "max_positions = 2");
    let run = dir.path().join("run");
    let run = run.to_str().unwrap();
    run_ok(&[
        "optimize",
        "-c",
        &cfg,
        "--out",
        run,
        "-O",
        "optimize.iterations=1",
    ]);
    let report = Path::new(run).join("report.html");
    let first = std::fs::read_to_string(&report).unwrap();
    assert!(
        first.contains("Instruments of the portfolio") && first.contains("<th>instrument</th>")
    );
    assert!(
        first.contains("Gross exposure (positions"),
        "the chart of positions and exposure"
    );
    std::fs::remove_file(&report).unwrap();
    run_ok(&["report", run]);
    assert_eq!(std::fs::read_to_string(&report).unwrap(), first);
}

#[test]
fn what_a_portfolio_cannot_run_yet_is_refused_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let files = instruments(dir.path());
    let cases = [
        ("size = 0", "portfolio.size"),
        ("max_positions = 0", "portfolio.max_positions"),
        ("max_exposure = -1", "portfolio.max_exposure"),
        ("sizes = 1", "sizes"),
        ("[score]\naggregate = \"median\"", "score.aggregate"),
        ("[strategy]\nsize = 0.5", "strategy.size"),
        ("[backtest]\nmax_leverage = 2", "backtest.max_leverage"),
        (
            "[score]\naggregate_skip_undefined = true",
            "score.aggregate_skip_undefined",
        ),
        ("rank_by = \"close > open\"", "portfolio.rank_by"),
    ];
    for (k, (extra, key)) in cases.iter().enumerate() {
        // Sections already in the grid get their keys merged with -O.
        let cfg = config(dir.path(), &format!("bad{k}.toml"), &files, "");
        let args: Vec<String> = match extra.split_once('\n') {
            Some((section, kv)) => {
                let section = section.trim_matches(['[', ']']);
                vec!["-O".into(), format!("{section}.{kv}")]
            }
            None => vec!["-O".into(), format!("portfolio.{extra}")],
        };
        let mut all = vec![
            "backtest", "-c", &cfg, "--set", "fast=8", "--set", "slow=40",
        ];
        all.extend(args.iter().map(String::as_str));
        let out = run_err(&all);
        assert_refused(&out, key);
    }
}
