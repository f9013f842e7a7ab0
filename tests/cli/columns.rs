//! Your own columns: a rule reading an extra column of the data gives
//! exactly what the same values computed by the rule language give, in
//! every file format; a missing or non-numeric column is a clear error
//! that lists the data's columns, for every instrument.

use std::path::{Path, PathBuf};

use sieve_core::data::{synth, write_bars, Bars, ExtraColumn};

use crate::{run_err, run_ok, stderr};

/// The spread the language computes, as a column the rules can read.
const SPREAD: &str = "sma(close, 10) - ema(close, 30)";

fn with_spread(bars: &Bars) -> Bars {
    let values = sieve_core::rules::values(SPREAD, bars, &Default::default()).unwrap();
    let mut out = bars.clone();
    out.extra = vec![
        ExtraColumn {
            name: "spread".into(),
            values: values.clone(),
            problem: None,
        },
        ExtraColumn {
            name: "My Spread".into(),
            values,
            problem: None,
        },
    ];
    out
}

fn config(dir: &Path, name: &str, data: &str, entry: &str, exit: &str) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        "[data]\n{data}\n\n[strategy]\nname = \"spread\"\nentry = \"{entry}\"\nexit = \"{exit}\"\n\n\
         [strategy.params]\nk = {{ start = -2, stop = 2, step = 0.25 }}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn sweep(config: &Path, out: &Path) -> Vec<u8> {
    run_ok(&[
        "sweep",
        "--config",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--top",
        "100",
    ]);
    std::fs::read(out).unwrap()
}

#[test]
fn a_column_of_the_data_reads_as_the_rule_language_computing_it() {
    let dir = tempfile::tempdir().unwrap();
    let bars = with_spread(&synth(1500, 21));
    let computed = config(
        dir.path(),
        "computed.toml",
        "path = \"prices.csv\"",
        &format!("{SPREAD} > k"),
        &format!("{SPREAD} < k"),
    );
    write_bars(&bars, &dir.path().join("prices.csv")).unwrap();
    let want = sweep(&computed, &dir.path().join("computed.csv"));
    assert!(want.len() > 500, "a sweep of 17 rows");
    for file in ["prices.csv", "prices.parquet", "prices.feather"] {
        write_bars(&bars, &dir.path().join(file)).unwrap();
        let read = config(
            dir.path(),
            "read.toml",
            &format!("path = \"{file}\""),
            "spread > k",
            "col('My Spread') < k",
        );
        let got = sweep(&read, &dir.path().join("read.csv"));
        assert_eq!(got, want, "{file}");
    }
}

#[test]
fn column_mistakes_name_the_rule_and_list_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut bars = with_spread(&synth(300, 4));
    write_bars(&bars, &dir.path().join("a.csv")).unwrap();
    let one = "path = \"a.csv\"";
    let refused = |entry: &str, data: &str| {
        let c = config(dir.path(), "bad.toml", data, entry, "close < 0");
        stderr(&run_err(&[
            "sweep",
            "--config",
            c.to_str().unwrap(),
            "--out",
            dir.path().join("x.csv").to_str().unwrap(),
        ]))
    };
    let e = refused("sprea > k", one);
    for want in [
        "bad.toml (strategy.entry, column 1)",
        "unknown name 'sprea'",
        "did you mean 'spread'",
        "spread, My Spread",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
    let e = refused("col('my spread') > k", one);
    assert!(
        e.contains("no column 'my spread'") && e.contains("'My Spread'"),
        "{e}"
    );
    // A window cannot be a column: a bare name there is said at once.
    let e = refused("sma(close, spread) > k", one);
    assert!(e.contains("unknown name 'spread'"), "{e}");
    // Text in a column a rule reads.
    let csv = std::fs::read_to_string(dir.path().join("a.csv")).unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    lines[0].push_str(",label");
    for l in &mut lines[1..] {
        l.push_str(",up");
    }
    std::fs::write(dir.path().join("t.csv"), lines.join("\n")).unwrap();
    let e = refused("label > k", "path = \"t.csv\"");
    assert!(
        e.contains("'label' is not numbers") && e.contains("line 2"),
        "{e}"
    );
    // The same name twice; a column the loader reads itself; a boolean
    // needed where a column stands; a parameter nearly spelt by a name.
    let twice = csv
        .replacen(",spread,", ",twin,", 1)
        .replacen(",My Spread", ",twin", 1);
    std::fs::write(dir.path().join("twice.csv"), twice).unwrap();
    let e = refused("twin > k", "path = \"twice.csv\"");
    assert!(e.contains("two columns named 'twin'"), "{e}");
    let e = refused("col('Adj Close') > k", one);
    assert!(e.contains("the data's adjusted close"), "{e}");
    let e = refused("spread", one);
    assert!(e.contains("write spread > 0"), "{e}");
    let c = dir.path().join("typo.toml");
    std::fs::write(
        &c,
        "[data]\npath = \"a.csv\"\n[strategy]\nname = \"s\"\nentry = \"sprd > 0\"\nexit = \"close < 0\"\n[strategy.params]\nspread_k = 1\nsprd2 = 3\n",
    )
    .unwrap();
    let e = stderr(&run_err(&[
        "sweep",
        "--config",
        c.to_str().unwrap(),
        "--out",
        "x.csv",
    ]));
    assert!(
        e.contains("strategy.params.sprd2") && e.contains("typo of 'sprd2'"),
        "{e}"
    );
    // Several instruments: each must have the column, named in the error.
    bars.extra.clear();
    write_bars(&bars, &dir.path().join("b.csv")).unwrap();
    let e = refused("spread > k", "paths = [\"a.csv\", \"b.csv\"]");
    assert!(
        e.contains("instrument 'b'") && e.contains("no columns beyond"),
        "{e}"
    );
}

/// Close-only data (one price column, as many downloads are) is read as
/// open = high = low = close, with a note saying what that means, and
/// backtests exactly as the same file with the four columns written out
/// (issue 47, item 16).
#[test]
fn close_only_data_reads_as_four_equal_prices_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let bars = synth(300, 7);
    let mut text = String::from("date,Close\n");
    let mut four = String::from("date,open,high,low,close\n");
    for (t, c) in bars.time.iter().zip(&bars.close) {
        let day = sieve_core::format::time(*t);
        text.push_str(&format!("{day},{c}\n"));
        four.push_str(&format!("{day},{c},{c},{c},{c}\n"));
    }
    let (close_only, written_out) = (dir.path().join("close.csv"), dir.path().join("four.csv"));
    std::fs::write(&close_only, text).unwrap();
    std::fs::write(&written_out, four).unwrap();
    let run = |path: &Path| {
        let out = crate::sieve()
            .args(["backtest", "--strategy", "sma_cross", "--data"])
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    let (a, b) = (run(&close_only), run(&written_out));
    // The same figures (the first line names the file).
    let figures = |o: &std::process::Output| {
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    };
    assert!(figures(&a).contains("total_return"), "{}", figures(&a));
    assert_eq!(figures(&a), figures(&b));
    let err = stderr(&a);
    assert!(
        err.contains("only one price column ('Close'): open, high and low are taken to equal it"),
        "{err}"
    );
    assert!(!stderr(&b).contains("only one price column"));
}

/// A column the rules read that holds one value on every bar (an index's
/// volume of 0) is warned about: every rule on it is constant (item 15).
#[test]
fn a_constant_column_the_rules_read_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let mut bars = synth(300, 7);
    bars.volume = Some(vec![0.0; bars.len()]);
    let data = dir.path().join("flat_volume.csv");
    write_bars(&bars, &data).unwrap();
    let cfg = dir.path().join("vwap.toml");
    std::fs::write(
        &cfg,
        "[strategy]\nname = \"vol\"\nentry = \"volume > sma(volume, n)\"\nexit = \"volume < sma(volume, n)\"\n\
         [strategy.params]\nn = 5\n",
    )
    .unwrap();
    let out = crate::sieve()
        .args(["backtest", "-c"])
        .arg(&cfg)
        .arg("--data")
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("volume is 0 on every bar and the rules read it"),
        "{}",
        stderr(&out)
    );
    // The same rules on a volume that moves: no such warning.
    let moving = dir.path().join("volume.csv");
    write_bars(&synth(300, 7), &moving).unwrap();
    let out = crate::sieve()
        .args(["backtest", "-c"])
        .arg(&cfg)
        .arg("--data")
        .arg(&moving)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("on every bar"), "{}", stderr(&out));
}
