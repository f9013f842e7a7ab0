//! `sieve sweep` and `sieve merge` end to end: shards merged to the
//! unsharded file, Slurm's environment choosing the shard, merges refused
//! when parts are mixed or missing, the screen score equal to the
//! backtest objective.

use std::path::Path;

use crate::{run_err, run_ok, sieve, stderr};

/// A grid with a constraint (also the cluster tests').
pub(crate) const CONFIG: &str = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 60, step = 1 }
slow = { start = 10, stop = 300, step = 5 }
[score]
score_start = "2019-01-01"
"#;

fn setup(dir: &Path, config: &str) -> String {
    let path = dir.join("sweep.toml");
    std::fs::write(&path, config).unwrap();
    path.to_str().unwrap().to_string()
}

fn sweep(config: &str, out: &Path, extra: &[&str]) {
    let mut args = vec![
        "sweep",
        "--config",
        config,
        "--out",
        out.to_str().unwrap(),
        "--top",
        "300",
    ];
    args.extend_from_slice(extra);
    run_ok(&args);
}

/// The merged meta's statistics (objective and Sharpe, totals and trees)
/// are the unsharded meta's, bit for bit.
fn assert_same_statistics(merged: &serde_json::Value, whole: &serde_json::Value) {
    for key in [
        "objective_stats",
        "sharpe_stats",
        "objective_tree",
        "sharpe_tree",
    ] {
        assert!(!merged[key].is_null(), "{key} missing");
        assert_eq!(merged[key], whole[key], "{key}");
    }
}

#[test]
fn four_shard_processes_merge_to_the_unsharded_file_and_threads_agree() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let whole = dir.path().join("whole.csv");
    sweep(&config, &whole, &["--threads", "2"]);
    let one_thread = dir.path().join("one.csv");
    sweep(&config, &one_thread, &["--threads", "1"]);
    assert_eq!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&one_thread).unwrap()
    );

    // Four separate processes at once, as a job array would run them.
    let parts: Vec<_> = (0..4)
        .map(|k| dir.path().join(format!("part{k}.csv")))
        .collect();
    let children: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(k, p)| {
            sieve()
                .args([
                    "sweep",
                    "--config",
                    &config,
                    "--out",
                    p.to_str().unwrap(),
                    "--top",
                    "300",
                    "--shard",
                    &format!("{k}/4"),
                ])
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let merged = dir.path().join("merged.csv");
    let mut args = vec!["merge".to_string()];
    args.extend(parts.iter().rev().map(|p| p.to_str().unwrap().to_string()));
    args.extend(["--out".into(), merged.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_ok(&args);
    let merged_bytes = std::fs::read(&merged).unwrap();
    assert_eq!(merged_bytes, std::fs::read(&whole).unwrap());
    assert_eq!(
        String::from_utf8(merged_bytes).unwrap().lines().count(),
        301
    );

    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("merged.meta.json")).unwrap(),
    )
    .unwrap();
    let whole_meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("whole.meta.json")).unwrap())
            .unwrap();
    let evaluated = &meta["objective_stats"]["combinations_evaluated"];
    assert_eq!(
        evaluated,
        &whole_meta["objective_stats"]["combinations_evaluated"]
    );
    // Hand count: fast 2..=60 (59 values) × slow 10,15..=300 (59 values) with fast < slow.
    let by_hand: u64 = (2..=60u64)
        .map(|f| (10..=300u64).step_by(5).filter(|&s| f < s).count() as u64)
        .sum();
    assert_eq!(evaluated.as_u64(), Some(by_hand));
    // The statistics (the objective's, and the trials' Sharpe behind the
    // Deflated Sharpe's V) merge to the unsharded numbers bit for bit.
    assert!(meta["sharpe_stats"]["count"].as_u64().unwrap() > 1000);
    assert_same_statistics(&meta, &whole_meta);
}

/// More shards than the grid has chunks of 256: some shards are empty, and
/// the merge still gives the unsharded statistics, the Sharpe's included.
#[test]
fn empty_shards_merge_to_the_unsharded_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let whole = dir.path().join("whole.csv");
    sweep(&config, &whole, &[]);
    let count = 20; // the grid's 3,481 indices make 14 chunks
    let mut args = vec!["merge".to_string()];
    for k in 0..count {
        let part = dir.path().join(format!("p{k}.csv"));
        sweep(&config, &part, &["--shard", &format!("{k}/{count}")]);
        args.push(part.to_str().unwrap().to_string());
    }
    let merged = dir.path().join("merged.csv");
    args.extend(["--out".into(), merged.to_str().unwrap().into()]);
    run_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(p)).unwrap()).unwrap()
    };
    let (meta, whole_meta) = (read("merged.meta.json"), read("whole.meta.json"));
    let empty = (0..count)
        .filter(|k| {
            read(&format!("p{k}.meta.json"))["objective_stats"]["combinations_evaluated"] == 0
        })
        .count();
    assert!(
        empty >= 6,
        "only {empty} empty shards: the test would not test"
    );
    assert_same_statistics(&meta, &whole_meta);
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
}

#[test]
fn slurm_environment_selects_the_shard() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let flag = dir.path().join("flag.csv");
    sweep(&config, &flag, &["--shard", "2/3"]);
    let env = dir.path().join("env.csv");
    let out = sieve()
        .args([
            "sweep",
            "--config",
            &config,
            "--out",
            env.to_str().unwrap(),
            "--top",
            "300",
        ])
        .env("SLURM_ARRAY_TASK_ID", "2")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&flag).unwrap(), std::fs::read(&env).unwrap());
    let k8s = dir.path().join("k8s.csv");
    let out = sieve()
        .args([
            "sweep",
            "--config",
            &config,
            "--out",
            k8s.to_str().unwrap(),
            "--top",
            "300",
            "--shards",
            "3",
        ])
        .env("JOB_COMPLETION_INDEX", "2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&flag).unwrap(), std::fs::read(&k8s).unwrap());
}

#[test]
fn merge_refuses_mixed_missing_and_duplicated_parts() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for k in 0..3 {
        sweep(
            &config,
            Path::new(&p(&format!("a{k}.csv"))),
            &["--shard", &format!("{k}/3")],
        );
    }
    // Same grid, different fee: a different config.
    sweep(
        &config,
        Path::new(&p("b1.csv")),
        &["--shard", "1/3", "-O", "backtest.fee=0.001"],
    );
    let out_path = p("merged.csv");
    for (parts, want) in [
        (
            vec![p("a0.csv"), p("b1.csv"), p("a2.csv")],
            "different sweeps",
        ),
        (vec![p("a0.csv"), p("a2.csv")], "missing shard(s) 1/3"),
        (
            vec![p("a0.csv"), p("a1.csv"), p("a1.csv"), p("a2.csv")],
            "given twice",
        ),
        (vec![p("a0.csv"), p("nope.csv")], "nope"),
    ] {
        let mut args = vec!["merge"];
        args.extend(parts.iter().map(String::as_str));
        args.extend(["--out", &out_path]);
        let out = run_err(&args);
        assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
        assert!(
            !Path::new(&out_path).exists(),
            "no output after a refused merge"
        );
    }
    // An output on an input: the merged CSV or its meta file on a part's
    // CSV or meta file, named with or without an extension. Refused, and
    // the parts are left as they were.
    let parts = [p("a0.csv"), p("a1.csv"), p("a2.csv")];
    let before: Vec<Vec<u8>> = ["a0.csv", "a0.meta.json", "a1.csv", "a1.meta.json"]
        .iter()
        .map(|f| std::fs::read(p(f)).unwrap())
        .collect();
    for out_path in [p("a0"), p("a0.meta.json"), p("a1.csv")] {
        let mut args = vec!["merge"];
        args.extend(parts.iter().map(String::as_str));
        args.extend(["--out", &out_path]);
        let out = run_err(&args);
        assert!(
            stderr(&out).contains("a new name") || stderr(&out).contains("overwrite an input"),
            "{out_path}: {}",
            stderr(&out)
        );
    }
    let after: Vec<Vec<u8>> = ["a0.csv", "a0.meta.json", "a1.csv", "a1.meta.json"]
        .iter()
        .map(|f| std::fs::read(p(f)).unwrap())
        .collect();
    assert!(before == after, "a refused merge changed a part");
}

#[test]
fn screen_score_is_the_backtest_objective() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let out = dir.path().join("s.csv");
    sweep(&config, &out, &[]);
    let text = std::fs::read_to_string(&out).unwrap();
    for line in text.lines().skip(1).step_by(97).take(4) {
        let f: Vec<&str> = line.split(',').collect();
        let v: serde_json::Value = serde_json::from_str(&run_ok(&[
            "backtest",
            "--config",
            &config,
            "--json",
            "--set",
            &format!("fast={}", f[2]),
            "--set",
            &format!("slow={}", f[3]),
        ]))
        .unwrap();
        assert_eq!(
            v["windows"]["score"]["objective"].as_f64(),
            Some(f[4].parse::<f64>().unwrap()),
            "{line}"
        );
    }
}

#[test]
fn gpu_without_the_feature_is_a_clear_error() {
    if cfg!(feature = "gpu") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run_err(&[
        "sweep",
        "--out",
        dir.path().join("x.csv").to_str().unwrap(),
        "--backend",
        "gpu",
    ]);
    assert!(stderr(&out).contains("--features gpu"), "{}", stderr(&out));
}

/// A shard's CSV swapped for another sweep's, edited, or with rows that
/// are not its shard's (even with its meta's hash fixed up to match), a
/// meta from another version or with counts that wrap: each is refused
/// naming the part, and nothing is written. All merged with exit 0 before.
#[test]
fn merge_refuses_tampered_parts() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let p = |name: &str| dir.path().join(name);
    for k in 0..2 {
        sweep(
            &config,
            &p(&format!("a{k}.csv")),
            &["--shard", &format!("{k}/2")],
        );
    }
    sweep(
        &config,
        &p("fee1.csv"),
        &["--shard", "1/2", "-O", "backtest.fee=0.001"],
    );
    let (a0, a1) = (p("a0.csv"), p("a1.csv"));
    let text = std::fs::read_to_string(&a1).unwrap();
    let meta_path = p("a1.meta.json");
    let meta = std::fs::read_to_string(&meta_path).unwrap();
    let out = p("merged.csv");
    // Writes part 1 as `csv`, its meta as `edit` makes it, and merges.
    let merge = |csv: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        std::fs::write(&a1, csv).unwrap();
        let mut m: serde_json::Value = serde_json::from_str(&meta).unwrap();
        edit(&mut m);
        std::fs::write(&meta_path, m.to_string()).unwrap();
        let o = run_err(&[
            "merge",
            a0.to_str().unwrap(),
            a1.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(!out.exists(), "a refused merge wrote its output");
        stderr(&o)
    };
    // The hash a tamperer would write to match an edited file.
    let rehash = |csv: String| {
        move |m: &mut serde_json::Value| {
            m["csv_sha256"] = sha256(&csv).into();
            m["rows"] = (csv.lines().count() as u64 - 1).into();
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let keep = |_: &mut serde_json::Value| {};
    // Another config's shard CSV under this one's meta.
    let other = std::fs::read_to_string(p("fee1.csv")).unwrap();
    assert!(merge(&other, &keep).contains("another SHA-256"));
    // A score edited.
    let edited = text.replacen(",0.", ",9.", 1);
    assert_ne!(edited, text);
    assert!(merge(&edited, &keep).contains("another SHA-256"));
    // A row repeated, with the meta fixed up.
    let twice = format!("{}\n{}\n", lines.join("\n"), lines[1]);
    let e = merge(&twice, &rehash(twice.clone()));
    assert!(
        e.contains("appears twice") || e.contains("rows where"),
        "{e}"
    );
    // A row of the other shard (grid index 0 lies in shard 0/2).
    let mut f: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    f[1] = "0".into();
    let outside = format!("{}\n{}\n", lines[0], f.join(","));
    let e = merge(&outside, &rehash(outside.clone()));
    assert!(e.contains("grid index 0 is outside shard 1/2"), "{e}");
    // Parameters that are not the grid index's.
    let mut f: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    f[2] = format!("{}", f[2].parse::<f64>().unwrap() + 1.0);
    let moved = format!("{}\n{}\n", lines[0], f.join(","));
    let e = merge(&moved, &rehash(moved.clone()));
    assert!(e.contains("are not those of grid index"), "{e}");
    // A row taken out, the meta fixed up: a shard keeps min(top, evaluated).
    let fewer = format!("{}\n", lines[..lines.len() - 1].join("\n"));
    let e = merge(&fewer, &rehash(fewer.clone()));
    assert!(e.contains("keeps"), "{e}");
    // Another version of sieve.
    let e = merge(&text, &|m| m["sieve_version"] = "0.0.1".into());
    assert!(e.contains("written by sieve 0.0.1"), "{e}");
    // Counts that wrap when summed.
    let e = merge(&text, &|m| {
        let max = serde_json::Value::from(u64::MAX);
        m["objective_stats"]["combinations_evaluated"] = max.clone();
        m["objective_stats"]["nan"] = max.clone();
    });
    assert!(
        e.contains("overflow") || e.contains("counted") || e.contains("does not add up"),
        "{e}"
    );
    // Untouched, it merges.
    std::fs::write(&a1, &text).unwrap();
    std::fs::write(&meta_path, &meta).unwrap();
    run_ok(&[
        "merge",
        a0.to_str().unwrap(),
        a1.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// SHA-256 in hex, by `sha256sum` (an independent implementation).
fn sha256(text: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// `verify` refuses a candidates file that names one grid index twice.
#[test]
fn verify_refuses_a_grid_index_twice() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), CONFIG);
    let cands = dir.path().join("c.csv");
    std::fs::write(
        &cands,
        "rank,grid_index,fast,slow,score,trades\n1,7,2,45,1,3\n2,9,2,55,1,3\n3,7,2,45,1,3\n",
    )
    .unwrap();
    let o = run_err(&[
        "verify",
        "--config",
        &config,
        "--candidates",
        cands.to_str().unwrap(),
        "--out",
        dir.path().join("v.csv").to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("line 4: grid index 7 appears again (first on line 2)"),
        "{}",
        stderr(&o)
    );
}

/// `-v` says how the CPU screen runs: in lanes, or one combination at a
/// time and why, and whether the two windows share a pass.
#[test]
fn verbose_says_which_screen_path_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bars.csv");
    run_ok(&["synth", "--bars", "600", "--out", data.to_str().unwrap()]);
    let out = dir.path().join("s.csv");
    let said = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "-v",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = sieve().args(&args).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let line = stderr(&o)
            .lines()
            .find(|l| l.starts_with("screen: "))
            .map(String::from);
        line.unwrap_or_else(|| panic!("no screen line: {}", stderr(&o)))
    };
    let portable = std::env::var("SIEVE_SIMD").is_ok_and(|v| v == "portable");
    let cross = said(&["--strategy", "sma_cross", "-O", "score.score_start=\"40%\""]);
    assert_eq!(
        cross.contains("lanes: the crossings' scan"),
        !portable,
        "{cross}"
    );
    assert!(cross.contains("same bars"), "{cross}");
    let full = said(&[
        "--strategy",
        "sma_cross",
        "-O",
        "score.score_start=\"40%\"",
        "-O",
        "score.screen_window=\"full\"",
    ]);
    assert!(full.contains("accumulated in the same pass"), "{full}");
    let managed = said(&["--strategy", "sma_cross", "-O", "strategy.stop_loss=0.05"]);
    assert!(
        managed.contains("one combination at a time: trade management"),
        "{managed}"
    );
    // A managed rule strategy whose rules wait on crossings of fewer
    // parameters: read at those crossings only.
    let config = dir.path().join("bracket.toml");
    std::fs::write(
        &config,
        r#"
[strategy]
name = "bracket"
entry = "cross_above(sma(close, fast), sma(close, slow))"
exit = "cross_below(sma(close, fast), sma(close, slow))"
stop_loss = "sl"
[strategy.params]
fast = { values = [5, 10] }
slow = { values = [20, 40] }
sl = { values = [0.02, 0.05] }
"#,
    )
    .unwrap();
    let gated = said(&["--config", config.to_str().unwrap()]);
    assert!(
        gated.contains("trade management") && gated.contains("2 crossing(s)"),
        "{gated}"
    );
}
