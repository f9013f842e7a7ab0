//! Rule strategies end to end: the rule versions of built-ins sweep exactly
//! like them, every class of mistake is one clear error (status 2, the key
//! and the column), and `strategies` / `backtest` know rule parameters.

use std::path::Path;

use crate::{repo_file, run_err, run_ok, sieve, stderr};

/// The built-in `name` over the example's grid and constraints.
fn builtin_twin(example: &Path, name: &str, dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(example).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let rules = table["strategy"].as_table().unwrap();
    let mut strategy = toml::Table::new();
    strategy.insert("name".into(), name.into());
    for key in ["params", "constraints"] {
        if let Some(v) = rules.get(key) {
            strategy.insert(key.into(), v.clone());
        }
    }
    let mut out = toml::Table::new();
    out.insert("strategy".into(), strategy.into());
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml::to_string(&out).unwrap()).unwrap();
    path
}

/// The text of the whole sweep of `config` in `direction`, written to `out`.
fn sweep_rows(config: &Path, direction: &str, out: &Path) -> String {
    let o = format!("backtest.direction=\"{direction}\"");
    run_ok(&[
        "sweep",
        "-c",
        config.to_str().unwrap(),
        "-O",
        &o,
        "--top",
        "1000000",
        "--out",
        out.to_str().unwrap(),
    ]);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn rule_versions_of_builtins_sweep_identically() {
    let dir = tempfile::tempdir().unwrap();
    for (example, name) in [
        ("sma_cross", "sma_cross"),
        ("ema_cross", "ema_cross"),
        ("rsi_reversion", "rsi_reversion"),
    ] {
        let rules = repo_file(&format!("examples/strategies/{example}.toml"));
        let builtin = builtin_twin(&rules, name, dir.path());
        for direction in ["long", "long_short"] {
            let sweep =
                |config: &Path, out: &str| sweep_rows(config, direction, &dir.path().join(out));
            let (a, b) = (sweep(&rules, "rules.csv"), sweep(&builtin, "builtin.csv"));
            assert!(
                a.lines().count() > 900,
                "{example}: {} rows",
                a.lines().count()
            );
            assert!(a == b, "{example} {direction}: the sweep files differ");
        }
    }
}

/// Writes a config whose `[strategy]` holds `keys`, runs `sweep`, and
/// checks the one clear error: status 2, the key, the column, the words.
fn refused(keys: &str, params: &str, key: &str, column: Option<usize>, words: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        format!("[strategy]\nname = \"mine\"\n{keys}\n[strategy.params]\n{params}\n"),
    )
    .unwrap();
    let out_csv = dir.path().join("out.csv");
    let out = run_err(&[
        "sweep",
        "-c",
        path.to_str().unwrap(),
        "--out",
        out_csv.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{keys}: {err}");
    let at = match column {
        Some(c) => format!("{key}, column {c}"),
        None => key.to_string(),
    };
    assert!(err.contains(&at), "{keys}: wanted '{at}' in: {err}");
    assert!(err.contains(words), "{keys}: wanted '{words}' in: {err}");
    assert!(!out_csv.exists(), "{keys}: nothing is written");
}

#[test]
fn every_mistake_is_one_clear_error_with_key_and_column() {
    let exit = "exit = \"false\"";
    let cases: &[(&str, &str, &str, Option<usize>, &str)] = &[
        (
            &format!("entry = \"smaa(close, n) > 1\"\n{exit}"),
            "n = 5",
            "strategy.entry",
            Some(1),
            "unknown function 'smaa' (did you mean 'sma'?)",
        ),
        (
            &format!("entry = \"close > clsoe\"\n{exit}"),
            "",
            "strategy.entry",
            Some(9),
            "unknown name 'clsoe' (did you mean 'close'?)",
        ),
        (
            &format!("entry = \"close > sma(close)\"\n{exit}"),
            "",
            "strategy.entry",
            Some(9),
            "sma takes 2 arguments, got 1",
        ),
        (
            &format!("entry = \"close > 1 and 2\"\n{exit}"),
            "",
            "strategy.entry",
            Some(15),
            "needs true/false",
        ),
        (
            &format!("entry = \"sma(close > 1, 3) > 1\"\n{exit}"),
            "",
            "strategy.entry",
            Some(5),
            "needs a number",
        ),
        (
            &format!("entry = \"sma(close, 3)\"\n{exit}"),
            "",
            "strategy.entry",
            Some(1),
            "must be true/false",
        ),
        (
            &format!("entry = \"close > shift(close, -1)\"\n{exit}"),
            "",
            "strategy.entry",
            Some(22),
            "look-ahead",
        ),
        (
            &format!("entry = \"close > shift(close, n)\"\n{exit}"),
            "n = { values = [1, -2] }",
            "strategy.params.n",
            None,
            "look-ahead",
        ),
        (
            &format!("entry = \"close > sma(close, n)\"\n{exit}"),
            "n = { values = [5, 7.5] }",
            "strategy.params.n",
            None,
            "whole numbers, but the grid has 7.5",
        ),
        (
            &format!("entry = \"close > sma(close, n / 2)\"\n{exit}"),
            "n = 10",
            "strategy.entry",
            Some(20),
            "must be a whole number",
        ),
        (
            &format!("entry = \"(close > sma(close, 3)\"\n{exit}"),
            "",
            "strategy.entry",
            Some(1),
            "unclosed '('",
        ),
        (
            &format!("entry = \"close > sma(close, 3))\"\n{exit}"),
            "",
            "strategy.entry",
            Some(22),
            "unmatched ')'",
        ),
        (
            &format!("entry = \"\"\n{exit}"),
            "",
            "strategy.entry",
            Some(1),
            "the rule is empty",
        ),
        (
            &format!("entry = \"  \"\n{exit}"),
            "",
            "strategy.entry",
            Some(1),
            "the rule is empty",
        ),
        (
            &format!("entry = \"x > 1\"\n{exit}\ndefine = {{ x = \"x + 1\" }}"),
            "",
            "strategy.define.x",
            Some(1),
            "refers to itself",
        ),
        (
            &format!("entry = \"x > 1\"\n{exit}\ndefine = {{ x = \"y + 1\", y = \"close\" }}"),
            "",
            "strategy.define.x",
            Some(1),
            "defined after",
        ),
        (
            &format!("entry = \"close > 1 > 0\"\n{exit}"),
            "",
            "strategy.entry",
            Some(11),
            "cannot be chained",
        ),
        (
            "entry = \"close > 1\"",
            "",
            "strategy.exit",
            None,
            "missing",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}"),
            "n = 3",
            "strategy.params.n",
            None,
            "not used",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\ndefine = {{ u = \"sma(close, q)\" }}"),
            "q = { values = [2, 3] }",
            "strategy.define.u",
            None,
            "not used by any rule",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\ndefine = {{ \"x-y\" = \"close\" }}"),
            "",
            "strategy.define.x-y",
            None,
            "not a name a rule can use",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}"),
            "close = 3",
            "strategy.params.close",
            None,
            "already a column",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}"),
            "sum = 3",
            "strategy.params.sum",
            None,
            "'sum' is already a column, function or keyword",
        ),
        // A name a newer sieve made a function: the error says to rename.
        (
            &format!("entry = \"close > adx\"\n{exit}\n[strategy.define]\nadx = \"sma(close, 3)\""),
            "",
            "strategy.define.adx",
            None,
            "rename it, e.g. 'my_adx'",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nstop_loss = 0.05\nstop_distance = 2"),
            "",
            "strategy.stop_distance",
            None,
            "at most one of stop_loss and stop_distance",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\ntake_profit = \"close > 1\""),
            "",
            "strategy.take_profit",
            Some(1),
            "must be a number",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nmax_bars = \"hold +\""),
            "",
            "strategy.max_bars",
            Some(7),
            "ends where a value is expected",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nsize = true"),
            "",
            "strategy.size",
            None,
            "must be a number or an expression in quotes",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nstop_loss = \"sl\""),
            "sl = { values = [0.01, 0.02] }\nk = 3",
            "strategy.params.k",
            None,
            "not used",
        ),
        // Trade-management numbers: the rule Python's arrays follow too.
        (
            &format!("entry = \"close > 1\"\n{exit}\nstop_loss = 5"),
            "",
            "strategy.stop_loss",
            None,
            "must be below 1 (a fraction of the entry price: 0.05 is 5 %)",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nstop_loss = -0.05"),
            "",
            "strategy.stop_loss",
            None,
            "must be above 0",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\ntake_profit = \"0\""),
            "",
            "strategy.take_profit",
            None,
            "must be above 0",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nstop_distance = -2"),
            "",
            "strategy.stop_distance",
            None,
            "must be above 0 (a distance in price units)",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nsize = 0"),
            "",
            "strategy.size",
            None,
            "must be above 0 (a fraction of equity",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nsize = 2"),
            "",
            "strategy.size",
            None,
            "2 is above backtest.max_leverage = 1",
        ),
        // A key that is one parameter: each value of its grid.
        (
            &format!("entry = \"close > 1\"\n{exit}\nstop_loss = \"sl\""),
            "sl = { values = [0.02, 5] }",
            "strategy.params.sl",
            None,
            "5, read by strategy.stop_loss = \"sl\": must be below 1",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nmax_bars = \"m\""),
            "m = { start = 1.5, stop = 3.5, step = 1 }",
            "strategy.params.m",
            None,
            "must be a whole number of bars ≥ 0, got 1.5",
        ),
        (
            &format!("entry = \"close > 1\"\n{exit}\nmax_bars = -3"),
            "",
            "strategy.max_bars",
            None,
            "must be a whole number of bars ≥ 0, got -3",
        ),
    ];
    for (keys, params, key, column, words) in cases {
        refused(keys, params, key, *column, words);
    }
    // A built-in's keys read their own parameters, not the built-in's.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("builtin_stop.toml");
    std::fs::write(
        &path,
        "[strategy]\nname = \"sma_cross\"\nstop_distance = \"atr(slow)\"\n",
    )
    .unwrap();
    let out = run_err(&["strategies", "-c", path.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(
        err.contains("strategy.stop_distance")
            && err.contains("'slow' is sma_cross's own parameter"),
        "{err}"
    );
    // A key naming the built-in's own parameter (which is in
    // [strategy.params]) says so, not "not a parameter".
    let path = dir.path().join("builtin_own.toml");
    std::fs::write(
        &path,
        "[strategy]\nname = \"sma_cross\"\nstop_loss = \"fast\"\n[strategy.params]\nfast = 10\nslow = 30\n",
    )
    .unwrap();
    let err = stderr(&run_err(&["strategies", "-c", path.to_str().unwrap()]));
    assert!(
        err.contains("strategy.stop_loss")
            && err.contains(
                "'fast' is sma_cross's own parameter, which a trade-management key cannot read"
            )
            && !err.contains("not a parameter"),
        "{err}"
    );
    let path = dir.path().join("leverage_huge.toml");
    std::fs::write(&path, "[backtest]\nmax_leverage = 1e308\n").unwrap();
    let err = stderr(&run_err(&["strategies", "-c", path.to_str().unwrap()]));
    assert!(
        err.contains("backtest.max_leverage") && err.contains("must be at most 1000"),
        "{err}"
    );
    let path = dir.path().join("leverage.toml");
    std::fs::write(&path, "[backtest]\nmax_leverage = 0\n").unwrap();
    let out = run_err(&["strategies", "-c", path.to_str().unwrap()]);
    assert!(
        stderr(&out).contains("backtest.max_leverage"),
        "{}",
        stderr(&out)
    );
    // A built-in's name is not free for rules.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("named.toml");
    std::fs::write(
        &path,
        "[strategy]\nname = \"sma_cross\"\nentry = \"close > 1\"\nexit = \"false\"\n",
    )
    .unwrap();
    let out = run_err(&["strategies", "-c", path.to_str().unwrap()]);
    assert!(stderr(&out).contains("built-in"), "{}", stderr(&out));
}

#[test]
fn strategies_describes_a_rule_strategy_and_its_shared_settings() {
    let text = run_ok(&[
        "strategies",
        "-c",
        repo_file("examples/strategies/macd.toml").to_str().unwrap(),
    ]);
    for want in [
        "macd_trend",
        "macd = ema(close, fast) - ema(close, slow)",
        "fast         int (a window length), 14 values",
        "trend        int (a window length), 26 values",
        // fast 4..30 by 2 and slow 20..80 by 5 with fast < slow: slow 20
        // allows 8 fasts, 25 allows 11, 30 allows 13, the ten from 35 all 14.
        "macd                                     172 settings (fast × slow)",
        "signal                                   516 settings (fast × slow × sig)",
    ] {
        assert!(text.contains(want), "missing '{want}' in:\n{text}");
    }
}

#[test]
fn backtest_sets_a_rule_parameter_without_a_grid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.toml");
    std::fs::write(
        &path,
        "[strategy]\nname = \"dip\"\nentry = \"close < sma(close, n) * (1 - d)\"\nexit = \"close > sma(close, n)\"\n[strategy.params]\nd = { values = [0.01, 0.02] }\n",
    )
    .unwrap();
    let config = path.to_str().unwrap();
    // Without a value for n: the error names it.
    let out = run_err(&["backtest", "-c", config]);
    assert!(
        stderr(&out).contains("unknown name 'n'"),
        "{}",
        stderr(&out)
    );
    // With --set: the same as giving n a fixed value in the config.
    let set = run_ok(&[
        "backtest", "-c", config, "--set", "n=20", "--set", "d=0.02", "--json",
    ]);
    let fixed = run_ok(&[
        "backtest",
        "-c",
        config,
        "-O",
        "strategy.params.n=20",
        "-O",
        "strategy.params.d=0.02",
        "--json",
    ]);
    assert_eq!(set, fixed);
    assert!(set.contains("\"n\": 20.0"), "{set}");
    // A parameter left unset takes its grid's first value, and says so.
    let out = sieve()
        .args(["backtest", "-c", config, "--set", "n=20"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("d is not --set; using 0.01"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn over_the_series_budget_the_sweep_is_grouped_and_identical() {
    let dir = tempfile::tempdir().unwrap();
    let macd = repo_file("examples/strategies/macd.toml");
    let sweep = |extra: &[&str], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec![
            "sweep",
            "-c",
            macd.to_str().unwrap(),
            "-v",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let o = sieve().args(&args).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        (std::fs::read_to_string(out).unwrap(), stderr(&o))
    };
    let (whole, note) = sweep(&[], "whole.csv");
    assert!(note.contains("computed once for the whole grid"), "{note}");
    let (grouped, note) = sweep(&["-O", "sweep.series_memory_mb=1"], "grouped.csv");
    assert!(
        note.contains("computed for groups of combinations in grid order, at most"),
        "{note}"
    );
    assert!(whole == grouped, "grouped shared series change the sweep");
}

#[test]
fn short_rules_with_a_long_direction_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "[strategy]\nname = \"s\"\nentry = \"close > sma(close, 20)\"\nexit = \"close < sma(close, 20)\"\nshort_entry = \"close < sma(close, 20)\"\nshort_exit = \"close > sma(close, 20)\"\n",
    )
    .unwrap();
    let out = sieve()
        .args(["backtest", "-c", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("short_entry and short_exit are ignored"),
        "{}",
        stderr(&out)
    );
    let out = sieve()
        .args([
            "backtest",
            "-c",
            path.to_str().unwrap(),
            "-O",
            "backtest.direction=\"long_short\"",
        ])
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("are ignored"), "{}", stderr(&out));
}

/// `--emit-wgsl` writes the kernel generated for a rule strategy (any
/// backend); a built-in has none to write, and says so.
#[test]
fn emit_wgsl_writes_the_generated_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let wgsl = dir.path().join("macd.wgsl");
    let out = dir.path().join("sweep.csv");
    let macd = repo_file("examples/strategies/macd.toml");
    let run = sieve()
        .args(["sweep", "-c", macd.to_str().unwrap(), "--top", "5"])
        .args([
            "--out",
            out.to_str().unwrap(),
            "--emit-wgsl",
            wgsl.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let text = std::fs::read_to_string(&wgsl).unwrap();
    // The engine prelude, then the rules' entry point with their text.
    assert!(text.contains("fn bar_step("), "no engine prelude");
    assert!(
        text.contains("fn rules(@builtin(global_invocation_id)"),
        "no entry point"
    );
    assert!(text.contains("cross_above("), "the rules are not named");
    assert!(stderr(&run).contains("bytes of WGSL"), "{}", stderr(&run));
    let e = run_err(&[
        "sweep",
        "--strategy",
        "sma_cross",
        "--out",
        out.to_str().unwrap(),
        "--emit-wgsl",
        wgsl.to_str().unwrap(),
    ]);
    assert!(stderr(&e).contains("built-in strategy"), "{}", stderr(&e));
}

/// The trade-management examples: `sieve strategies --config` shows their
/// keys; a sweep's screened scores equal the verified ones; the trades say
/// why they ended.
#[test]
fn trade_management_examples_screen_exactly_and_say_why_trades_end() {
    let dir = tempfile::tempdir().unwrap();
    for (example, reasons) in [
        ("sma_cross_bracket", &["stop_loss", "take_profit"][..]),
        ("turtle_breakout", &["stop_loss"][..]),
        ("vol_target_trend", &["max_bars"][..]),
        ("classics/chandelier", &["stop_level"][..]),
        ("classics/turtle_original", &["stop_loss", "rule"][..]),
    ] {
        let config = repo_file(&format!("examples/strategies/{example}.toml"));
        let config = config.to_str().unwrap();
        let shown = run_ok(&["strategies", "-c", config]);
        assert!(shown.contains("trade management"), "{shown}");
        let file = example.replace('/', "-");
        let sweep = dir.path().join(format!("{file}.csv"));
        let verified = dir.path().join(format!("{file}-verified.csv"));
        run_ok(&[
            "sweep",
            "-c",
            config,
            "--top",
            "20",
            "--out",
            sweep.to_str().unwrap(),
        ]);
        run_ok(&[
            "verify",
            "-c",
            config,
            "--candidates",
            sweep.to_str().unwrap(),
            "--out",
            verified.to_str().unwrap(),
        ]);
        // (header, rows) of a CSV file.
        let table = |path: &std::path::Path| -> (Vec<String>, Vec<Vec<String>>) {
            let text = std::fs::read_to_string(path).unwrap();
            let mut lines = text
                .lines()
                .map(|l| l.split(',').map(str::to_string).collect());
            (lines.next().unwrap(), lines.collect())
        };
        let (sh, screened) = table(&sweep);
        let (vh, exact) = table(&verified);
        let col = |h: &[String], name: &str| h.iter().position(|c| c == name).unwrap();
        assert_eq!(screened.len(), exact.len(), "{example}");
        for row in &exact {
            let twin = screened
                .iter()
                .find(|s| s[col(&sh, "grid_index")] == row[col(&vh, "grid_index")])
                .unwrap();
            assert_eq!(
                twin[col(&sh, "score")],
                row[col(&vh, "score")],
                "{example}: screen == exact"
            );
        }
        // The verified candidates' trades, with their exit reasons: the
        // parameters are the columns between grid_index and screen_rank.
        let mut seen = String::new();
        for (r, row) in exact.iter().enumerate() {
            let mut args = vec!["backtest".to_string(), "-c".into(), config.into()];
            for i in col(&vh, "grid_index") + 1..col(&vh, "screen_rank") {
                args.extend(["--set".into(), format!("{}={}", vh[i], row[i])]);
            }
            let trades = dir.path().join(format!("{file}-{r}-trades.csv"));
            args.extend(["--trades".into(), trades.to_str().unwrap().into()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_ok(&args);
            let text = std::fs::read_to_string(&trades).unwrap();
            assert!(text
                .lines()
                .next()
                .unwrap()
                .ends_with(",exit_reason,entry_reason"));
            seen.push_str(&text);
        }
        for reason in reasons {
            assert!(
                seen.contains(&format!(",{reason},")),
                "{example}: no {reason} among the verified candidates' trades"
            );
        }
    }
}

/// A built-in with a stop-loss and a take-profit trades exactly as its rule
/// version with the same keys: after a stop, the built-in waits for its
/// next target change as the rule waits for its next crossing.
#[test]
fn a_builtin_with_trade_management_equals_its_rule_version() {
    let dir = tempfile::tempdir().unwrap();
    let grid = "[strategy.params]\nfast = { start = 4, stop = 40, step = 6 }\nslow = { start = 20, stop = 120, step = 20 }\nsl = { values = [0.02, 0.05] }\ntp = { values = [0.05, 0.15] }\n";
    let keys = "stop_loss = \"sl\"\ntake_profit = \"tp\"\nconstraints = [\"fast < slow\"]\n";
    let builtin = dir.path().join("builtin.toml");
    std::fs::write(
        &builtin,
        format!("[strategy]\nname = \"sma_cross\"\n{keys}{grid}"),
    )
    .unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        format!("[strategy]\nname = \"sma_rules\"\nentry = \"cross_above(sma(close, fast), sma(close, slow))\"\nexit = \"cross_below(sma(close, fast), sma(close, slow))\"\n{keys}{grid}"),
    )
    .unwrap();
    let shown = run_ok(&["strategies", "-c", builtin.to_str().unwrap()]);
    assert!(
        shown.contains("trade management") && shown.contains("sl"),
        "{shown}"
    );
    for direction in ["long", "long_short"] {
        let sweep = |config: &Path, out: &str| sweep_rows(config, direction, &dir.path().join(out));
        let (a, b) = (sweep(&builtin, "b.csv"), sweep(&rules, "r.csv"));
        assert!(a.lines().count() > 100, "{}", a.lines().count());
        assert!(a == b, "{direction}: the built-in and the rules differ");
    }
}
