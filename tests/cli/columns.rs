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
