//! Pinned outputs: a fixed set of runs — built-in strategies, a rule
//! strategy with definitions and a trailing stop, long/short with costs,
//! Parquet input, `optimize` with its report, a walk-forward — and the exact
//! text of config and data errors, pinned in `tests/golden/` by the binary
//! before the round-3 refactor. A refactor must leave every byte as it was.
//!
//! Files are pinned by size and FNV-1a hash (the outputs run to megabytes);
//! error texts verbatim. Timings (`*_s`, `*_per_s` in JSON, the seconds
//! columns of the report's iteration table) are masked. When an output is
//! meant to change, `SIEVE_BLESS=1 cargo test --test cli golden` rewrites
//! the pins; the commit says why.

use std::fmt::Write as _;
use std::path::Path;

use crate::{repo_file, run_err, run_ok, stderr};

/// FNV-1a, 64 bits: stable across Rust versions (unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A JSON file with every timing value set to 0 (keys ending in `_s`).
fn mask_json(text: &str) -> String {
    fn mask(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if k.ends_with("_s") && v.is_number() {
                        *v = serde_json::Value::from(0);
                    } else {
                        mask(v);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_str(text).expect("pinned JSON parses");
    mask(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

/// The report with the seconds columns of its iteration table masked.
fn mask_report(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_iterations = false;
    for line in text.split_inclusive('\n') {
        if line.contains("<th>sweep s</th>") {
            in_iterations = true;
        } else if in_iterations && line.starts_with("<tr><td>") {
            let mut cells: Vec<&str> = line.split("<td>").collect();
            // cells[0] is "<tr>"; sweep s and verify s are cells 4 and 6.
            for i in [4, 6] {
                if let Some(c) = cells.get_mut(i) {
                    *c = c.find("</td>").map_or(*c, |e| &c[e..]);
                }
            }
            out.push_str(&cells.join("<td>"));
            continue;
        } else if line.contains("</table>") {
            in_iterations = false;
        }
        out.push_str(line);
    }
    out
}

#[derive(Default)]
struct Pins {
    files: String,
    texts: String,
    /// The temporary folder's path, masked as `$TMP` wherever it is written.
    tmp: String,
}

impl Pins {
    fn file(&mut self, case: &str, path: &Path) {
        let name = path.file_name().unwrap().to_string_lossy();
        let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = || {
            String::from_utf8(raw.clone())
                .unwrap()
                .replace(&self.tmp, "$TMP")
        };
        let masked = if name.ends_with(".json") {
            mask_json(&text()).into_bytes()
        } else if name.ends_with(".html") {
            mask_report(&text()).into_bytes()
        } else if name.ends_with(".csv") {
            text().into_bytes()
        } else {
            raw
        };
        writeln!(
            self.files,
            "{case}/{name} {} {:016x}",
            masked.len(),
            fnv1a(&masked)
        )
        .unwrap();
    }

    /// Every file under `dir`, in path order.
    fn tree(&mut self, case: &str, dir: &Path) {
        let mut paths = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.file_name().is_some_and(|n| n == ".sieve.lock") {
                    continue; // the run folder's lock, not an output
                }
                if p.is_dir() {
                    stack.push(p);
                } else {
                    paths.push(p);
                }
            }
        }
        paths.sort();
        for p in paths {
            let rel = p.parent().unwrap().strip_prefix(dir).unwrap();
            let sub = if rel.as_os_str().is_empty() {
                case.to_string()
            } else {
                format!("{case}/{}", rel.display())
            };
            self.file(&sub, &p);
        }
    }

    fn text(&mut self, case: &str, text: &str) {
        writeln!(self.texts, "=== {case}\n{text}").unwrap();
    }

    /// Compares with (or, under `SIEVE_BLESS=1`, writes) the pinned files.
    fn check(self) {
        let dir = repo_file("tests/golden");
        let pairs = [("outputs.txt", &self.files), ("errors.txt", &self.texts)];
        if std::env::var_os("SIEVE_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            for (name, text) in pairs {
                std::fs::write(dir.join(name), text).unwrap();
            }
            return;
        }
        let mut changed = Vec::new();
        for (name, text) in pairs {
            let pinned = std::fs::read_to_string(dir.join(name))
                .unwrap_or_else(|e| panic!("tests/golden/{name}: {e}"));
            if pinned != *text {
                let (a, b): (Vec<_>, Vec<_>) = (pinned.lines().collect(), text.lines().collect());
                let mut diff = String::new();
                for i in 0..a.len().max(b.len()) {
                    let (x, y) = (a.get(i), b.get(i));
                    if x != y {
                        writeln!(
                            diff,
                            "  line {}:\n    pinned: {x:?}\n    now:    {y:?}",
                            i + 1
                        )
                        .unwrap();
                    }
                }
                changed.push(format!("tests/golden/{name}:\n{diff}"));
            }
        }
        assert!(
            changed.is_empty(),
            "outputs differ from the pinned ones:\n{}",
            changed.join("\n")
        );
    }
}

const SMA: &str = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 40, step = 2 }
slow = { start = 10, stop = 200, step = 10 }
[backtest]
fee = 0.0005
[score]
score_start = "50%"
holdout_start = "85%"
screen_window = "full"
min_trades = 3
"#;

const WALKFORWARD: &str = r#"
[strategy]
name = "sma_cross"
[strategy.params]
fast = { start = 2, stop = 30, step = 4 }
slow = { start = 35, stop = 120, step = 15 }
[backtest]
fee = 0.001
[score]
holdout_start = "2025-01-01"
[optimize]
iterations = 2
[walkforward]
train = "3y"
test = "1y"
"#;

/// A rule strategy with every trade-management key swept.
const MANAGED: &str = r#"
[strategy]
name = "managed"
entry = "cross_above(ema(close, fast), sma(close, slow))"
exit = "cross_below(ema(close, fast), sma(close, slow))"
stop_loss = "sl"
take_profit = "tp"
size = "frac"
max_bars = "hold"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 4, stop = 16, step = 4 }
slow = { values = [20, 40, 60] }
sl = { values = [0.02, 0.05] }
tp = { values = [0.04, 0.12] }
frac = { values = [0.5, 1.0] }
hold = { values = [5, 30] }
[backtest]
fee = 0.0005
direction = "long_short"
[score]
score_start = "50%"
min_trades = 2
"#;

/// A user column read by name.
const USER_COLUMN: &str = r#"
[strategy]
name = "mood"
entry = "col('Crowd Mood') > level and close > sma(close, n)"
exit = "col('Crowd Mood') < 0"
[strategy.params]
level = { start = -2, stop = 4, step = 1 }
n = { values = [10, 20, 50] }
[score]
score_start = "40%"
"#;

/// Plateau selection over two zoomed iterations.
const PLATEAU: &str = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 30, step = 4 }
slow = { start = 20, stop = 120, step = 20 }
[backtest]
fee = 0.001
[score]
score_start = "40%"
holdout_start = "90%"
[optimize]
iterations = 2
max_combinations = 120
[verify]
top = 12
[robust]
select = "plateau"
"#;

/// Configs that must fail, each with its exact message.
const BAD_CONFIGS: &[(&str, &str)] = &[
    ("unknown key", "[score]\nobjectiv = \"sharpe\"\n"),
    ("bad value", "[backtest]\nfee = -1\n"),
    ("unknown strategy", "[strategy]\nname = \"sma_crosss\"\n"),
    (
        "rule syntax",
        "[strategy]\nname = \"r\"\nentry = \"close > sma(close, n\"\nexit = \"close < open\"\n[strategy.params]\nn = 5\n",
    ),
    (
        "unknown function",
        "[strategy]\nname = \"r\"\nentry = \"close > smaa(close, n)\"\nexit = \"close < open\"\n[strategy.params]\nn = 5\n",
    ),
    (
        "rule type",
        "[strategy]\nname = \"r\"\nentry = \"sma(close, n)\"\nexit = \"close < open\"\n[strategy.params]\nn = 5\n",
    ),
    (
        "unused define",
        "[strategy]\nname = \"r\"\nentry = \"close > open\"\nexit = \"close < open\"\n[strategy.define]\nx = \"sma(close, 3)\"\n",
    ),
    (
        "bad constraint",
        "[strategy]\nname = \"sma_cross\"\nconstraints = [\"fast < slw\"]\n",
    ),
    (
        "bad grid",
        "[strategy]\nname = \"sma_cross\"\n[strategy.params]\nfast = { start = 10, stop = 2, step = 1 }\n",
    ),
    (
        "unknown objective",
        "[score]\nobjective = \"sharp\"\n",
    ),
    // Several mistakes: the one reported first stays the same.
    (
        "rule text before grid values",
        "[strategy]\nname = \"r\"\nentry = \"close > smaa(close, n)\"\nexit = \"close < open\"\n[strategy.params]\nn = \"ten\"\n",
    ),
    (
        "unused before its bad range",
        "[strategy]\nname = \"r\"\nentry = \"close > open\"\nexit = \"close < open\"\n[strategy.params]\np = { start = 5, stop = 1, step = 1 }\n",
    ),
    (
        "built-in name before grid values",
        "[strategy]\nname = \"sma_cross\"\nentry = \"close > sma(close, n)\"\nexit = \"close < open\"\n[strategy.params]\nn = \"ten\"\n",
    ),
    (
        "first grid entry first",
        "[strategy]\nname = \"sma_cross\"\n[strategy.params]\nfast = { values = [0] }\nslow = \"ten\"\n",
    ),
];

/// `sieve sweep` with `args` (config and data) into `dir/sweep.0`, keeping
/// the best `sweep.1`, then `sieve verify` of `verify.1` of its rows into
/// `dir/verify.0`; both files pinned under `case`, and the sweep's meta
/// file too with `meta`.
fn sweep_and_verify(
    pins: &mut Pins,
    dir: &Path,
    case: &str,
    args: &[&str],
    (sweep, meta): ((&str, &str), bool),
    verify: (&str, &str),
) {
    let (swept, verified) = (dir.join(sweep.0), dir.join(verify.0));
    let (swept_s, verified_s) = (swept.to_str().unwrap(), verified.to_str().unwrap());
    run_ok(&[&["sweep"], args, &["--out", swept_s, "--top", sweep.1]].concat());
    pins.file(case, &swept);
    if meta {
        pins.file(case, &swept.with_extension("meta.json"));
    }
    let candidates = [
        "--candidates",
        swept_s,
        "--out",
        verified_s,
        "--top",
        verify.1,
    ];
    run_ok(&[&["verify"], args, &candidates[..]].concat());
    pins.file(case, &verified);
}

#[test]
fn outputs_are_byte_identical_to_the_pinned_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let mut pins = Pins {
        tmp: s(dir),
        ..Pins::default()
    };

    let bars = dir.join("bars.csv");
    run_ok(&[
        "synth",
        "--bars",
        "1500",
        "--seed",
        "11",
        "--out",
        &s(&bars),
    ]);
    pins.file("synth", &bars);

    // A built-in on two windows, the screen ranking by the full one.
    let sma = dir.join("sma.toml");
    std::fs::write(&sma, SMA).unwrap();
    let common = ["--config", &s(&sma), "--data", &s(&bars)];
    let sweep = (("sweep.csv", "60"), true);
    sweep_and_verify(
        &mut pins,
        dir,
        "sma",
        &common,
        sweep,
        ("verified.csv", "30"),
    );

    // `activation` with its defaults, through the exact engine.
    let (trades, equity) = (dir.join("trades.csv"), dir.join("equity.csv"));
    let out = run_ok(&[
        "backtest",
        "--data",
        &s(&bars),
        "--strategy",
        "activation",
        "--json",
        "--trades",
        &s(&trades),
        "--equity",
        &s(&equity),
    ]);
    pins.text("activation backtest --json", &out);
    pins.file("activation", &trades);
    pins.file("activation", &equity);

    // Rules with definitions and a trailing stop, long/short, with costs.
    let rules = repo_file("examples/strategies/weighted_score.toml");
    let rule_args = [
        "--config",
        rules.to_str().unwrap(),
        "--data",
        &s(&bars),
        "-O",
        "backtest.direction=\"long_short\"",
        "-O",
        "backtest.slippage=0.0005",
        "-O",
        "backtest.lot_size=1",
    ];
    let sweep = (("rules-sweep.csv", "40"), false);
    sweep_and_verify(
        &mut pins,
        dir,
        "rules",
        &rule_args,
        sweep,
        ("rules-verified.csv", "20"),
    );
    let rtrades = dir.join("rules-trades.csv");
    let out = run_ok(
        &[
            &["backtest"],
            &rule_args[..],
            &[
                "--json",
                "--set",
                "trend_len=50",
                "--set",
                "stop_atr=2",
                "--trades",
                &s(&rtrades),
            ],
        ]
        .concat(),
    );
    pins.text("rules backtest --json", &out);
    pins.file("rules", &rtrades);
    pins.text(
        "strategies --config weighted_score",
        &run_ok(&["strategies", "--config", rules.to_str().unwrap()]),
    );

    // Parquet input.
    let parquet = repo_file("tests/data/columnar/pandas_utc.parquet");
    let ptrades = dir.join("parquet-trades.csv");
    let out = run_ok(&[
        "backtest",
        "--data",
        parquet.to_str().unwrap(),
        "--strategy",
        "rsi_reversion",
        "--json",
        "--trades",
        &s(&ptrades),
    ]);
    pins.text("parquet backtest --json", &out);
    pins.file("parquet", &ptrades);

    // The built-in example, whole, and its report rewritten.
    let run = dir.join("run");
    run_ok(&["optimize", "--out", &s(&run), "--threads", "2"]);
    pins.tree("optimize", &run);
    std::fs::remove_file(run.join("report.html")).unwrap();
    run_ok(&["report", &s(&run)]);
    pins.file("report", &run.join("report.html"));

    // A walk-forward on the built-in data.
    let wf = dir.join("wf.toml");
    std::fs::write(&wf, WALKFORWARD).unwrap();
    let wf_out = dir.join("wf");
    run_ok(&["walkforward", "--config", &s(&wf), "--out", &s(&wf_out)]);
    for name in ["walkforward.csv", "walkforward.json", "report.html"] {
        pins.file("walkforward", &wf_out.join(name));
    }

    // Trade management: a stop, a target, a size and a bar limit, all swept.
    let managed = dir.join("managed.toml");
    std::fs::write(&managed, MANAGED).unwrap();
    let managed_args = ["--config", &s(&managed), "--data", &s(&bars)];
    let sweep = (("managed-sweep.csv", "40"), false);
    sweep_and_verify(
        &mut pins,
        dir,
        "managed",
        &managed_args,
        sweep,
        ("managed-verified.csv", "20"),
    );
    let (mtrades, mequity) = (
        dir.join("managed-trades.csv"),
        dir.join("managed-equity.csv"),
    );
    let out = run_ok(
        &[
            &["backtest"],
            &managed_args[..],
            &[
                "--json",
                "--set",
                "fast=10",
                "--set",
                "slow=40",
                "--set",
                "sl=0.03",
                "--set",
                "tp=0.08",
                "--set",
                "frac=0.6",
                "--set",
                "hold=12",
                "--trades",
                &s(&mtrades),
                "--equity",
                &s(&mequity),
            ],
        ]
        .concat(),
    );
    pins.text("managed backtest --json", &out);
    pins.file("managed", &mtrades);
    pins.file("managed", &mequity);

    // A user column (a name with a space) read by `col()`.
    let with_column = dir.join("bars-with-column.csv");
    let text = std::fs::read_to_string(&bars).unwrap();
    let mut lines = text.lines();
    let mut extended = format!("{},Crowd Mood\n", lines.next().unwrap());
    for (i, line) in lines.enumerate() {
        // A fixed, bounded pattern with runs of highs and lows.
        writeln!(extended, "{line},{}", (i * 7 % 23) as f64 / 2.0 - 5.0).unwrap();
    }
    std::fs::write(&with_column, extended).unwrap();
    pins.file("column", &with_column);
    let column = dir.join("column.toml");
    std::fs::write(&column, USER_COLUMN).unwrap();
    let column_args = ["--config", &s(&column), "--data", &s(&with_column)];
    let csweep = dir.join("column-sweep.csv");
    run_ok(
        &[
            &["sweep"],
            &column_args[..],
            &["--out", &s(&csweep), "--top", "30"],
        ]
        .concat(),
    );
    pins.file("column", &csweep);
    let ctrades = dir.join("column-trades.csv");
    let out = run_ok(
        &[
            &["backtest"],
            &column_args[..],
            &[
                "--json",
                "--set",
                "level=1",
                "--set",
                "n=20",
                "--trades",
                &s(&ctrades),
            ],
        ]
        .concat(),
    );
    pins.text("column backtest --json", &out);
    pins.file("column", &ctrades);

    // `robust.select = "plateau"`: the whole run folder, plateau.csv included.
    let plateau = dir.join("plateau.toml");
    std::fs::write(&plateau, PLATEAU).unwrap();
    let plateau_out = dir.join("plateau");
    run_ok(&[
        "optimize",
        "--config",
        &s(&plateau),
        "--data",
        &s(&bars),
        "--out",
        &s(&plateau_out),
        "--threads",
        "2",
    ]);
    pins.tree("plateau", &plateau_out);

    // Errors, word for word (the temporary folder's path masked).
    let dir_text = s(dir);
    for (case, text) in BAD_CONFIGS {
        let path = dir.join("bad.toml");
        std::fs::write(&path, text).unwrap();
        let out = run_err(&["backtest", "--config", &s(&path), "--data", &s(&bars)]);
        pins.text(case, &stderr(&out).replace(&dir_text, "$TMP"));
    }
    let bad_csv = dir.join("bad.csv");
    std::fs::write(
        &bad_csv,
        "date,open,high,low,close\n2020-01-01,1,2,0.5,1.5\n2020-01-02,1,2,0.5,x\n",
    )
    .unwrap();
    let out = run_err(&["backtest", "--data", &s(&bad_csv)]);
    pins.text("bad data row", &stderr(&out).replace(&dir_text, "$TMP"));
    let out = run_err(&["backtest", "--data", &s(&bars), "-O", "score.min_trades=x"]);
    pins.text("bad override", &stderr(&out).replace(&dir_text, "$TMP"));

    pins.check();
}
