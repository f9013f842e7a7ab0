use std::path::Path;

use crate::{run_err, run_ok, sieve, stderr};

const CONFIG: &str = r#"
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
    // The trials' Sharpe statistics (the Deflated Sharpe's V) merge too.
    let (ms, ws) = (&meta["sharpe_stats"], &whole_meta["sharpe_stats"]);
    assert_eq!(ms["count"], ws["count"]);
    assert!(ms["count"].as_u64().unwrap() > 1000);
    for key in ["mean", "variance", "m2"] {
        let (a, b) = (ms[key].as_f64().unwrap(), ws[key].as_f64().unwrap());
        assert!(
            (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
            "{key}: {a} vs {b}"
        );
    }
    let (a, b) = (
        meta["objective_stats"]["mean"].as_f64().unwrap(),
        whole_meta["objective_stats"]["mean"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 1e-12 * b.abs());
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
