//! `[search] method = "random"`: seeded uniform samples of the grid,
//! deterministic whatever the threads, continued to the same run when the
//! budget is raised, never a combination twice or one the constraints
//! exclude.

use std::collections::HashSet;
use std::path::Path;

use crate::{assert_refused, run_err, run_ok};

const CONFIG: &str = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 120, step = 1 }
slow = { start = 10, stop = 300, step = 1 }
[score]
score_start = "2019-01-01"
[search]
method = "random"
seed = 11
evaluations = 1500
batch = 600
[verify]
top = 40
"#;

fn optimize(config: &str, out: &Path, threads: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "optimize",
        "-c",
        config,
        "--out",
        out.to_str().unwrap(),
        "--threads",
        threads,
    ];
    args.extend(extra);
    run_ok(&args);
    std::fs::read_to_string(out.join("best.json")).unwrap()
}

#[test]
fn random_search_is_deterministic_resumable_and_samples_each_allowed_combination_once() {
    sampled_search_is_deterministic_resumable_and_distinct("random");
}

#[test]
fn evolutionary_search_is_deterministic_resumable_and_samples_each_allowed_combination_once() {
    sampled_search_is_deterministic_resumable_and_distinct("evolve");
}

fn sampled_search_is_deterministic_resumable_and_distinct(method: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("search.toml");
    let text = CONFIG.replace("method = \"random\"", &format!("method = \"{method}\""));
    std::fs::write(&config, text).unwrap();
    let config = config.to_str().unwrap();
    let whole = dir.path().join("whole");
    let best = optimize(config, &whole, "2", &[]);
    let v: serde_json::Value = serde_json::from_str(&best).unwrap();
    // 1,500 rounded up to whole batches of 600: three iterations.
    assert_eq!(v["search"]["evaluated"], 1800);
    assert_eq!(v["search"]["grid_size"], 119 * 291);
    assert_eq!(v["search"]["method"], method);
    let report = std::fs::read_to_string(whole.join("report.html")).unwrap();
    assert_eq!(
        report.contains("from the first generation"),
        method == "evolve"
    );
    assert!(v["stop_reason"]
        .as_str()
        .unwrap()
        .contains("search.evaluations"));
    // One thread, and the budget raised in two steps: the same run.
    let stepped = dir.path().join("stepped");
    optimize(config, &stepped, "1", &["-O", "search.evaluations=700"]);
    let again = optimize(config, &stepped, "1", &[]);
    assert_eq!(again, best);
    for i in 1..=3 {
        let rel = format!("iter-{i:03}/verified.csv");
        assert_eq!(
            std::fs::read(whole.join(&rel)).unwrap(),
            std::fs::read(stepped.join(&rel)).unwrap(),
            "{rel}"
        );
    }
    // Every proposal distinct across iterations, inside the grid, and
    // allowed: each screened row has fast < slow.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(whole.join("run.json")).unwrap()).unwrap();
    let mut seen = HashSet::new();
    // Later iterations name the first one's grid rather than repeat it.
    let its = state["iterations"].as_array().unwrap();
    assert!(its[1..]
        .iter()
        .all(|it| it["grid_of"] == 1 && it["grid"] == serde_json::json!([])));
    for (k, it) in its.iter().enumerate() {
        // Each proposal beside run.json: ascending little-endian u64s.
        let bin = std::fs::read(whole.join(format!("iter-{:03}/indices.bin", k + 1))).unwrap();
        let indices: Vec<u64> = bin
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(it["indices_in"], indices.len());
        assert!(indices.windows(2).all(|w| w[0] < w[1]));
        for i in indices {
            assert!(i < 119 * 291);
            assert!(seen.insert(i), "index {i} screened twice");
            // Grid order: the last parameter fastest.
            let (fast, slow) = (2 + i / 291, 10 + i % 291);
            assert!(fast < slow, "index {i}: fast {fast} slow {slow}");
        }
    }
    assert_eq!(seen.len(), 1800);
    // Another seed samples other combinations.
    let other = optimize(
        config,
        &dir.path().join("other"),
        "2",
        &["-O", "search.seed=12"],
    );
    assert_ne!(other, best);
}

/// A grid smaller than the budget is screened whole, once, and the run
/// says so; spelled-out defaults are the same run.
#[test]
fn a_small_grid_is_screened_whole_and_defaults_spelled_out_resume() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("small.toml");
    let small = CONFIG
        .replace("stop = 120, step = 1", "stop = 20, step = 1")
        .replace("stop = 300, step = 1", "stop = 40, step = 1")
        .replace("seed = 11\n", "");
    std::fs::write(&config, small).unwrap();
    let config = config.to_str().unwrap();
    let out = dir.path().join("run");
    let best = optimize(config, &out, "2", &[]);
    let v: serde_json::Value = serde_json::from_str(&best).unwrap();
    // fast 2..20, slow 10..40, fast < slow.
    let allowed = (2..=20u64)
        .map(|f| (10..=40u64).filter(|s| f < *s).count() as u64)
        .sum::<u64>();
    assert_eq!(v["search"]["evaluated"], allowed);
    assert!(v["stop_reason"]
        .as_str()
        .unwrap()
        .contains("every combination"));
    let again = optimize(config, &out, "2", &["-O", "search.seed=0"]);
    assert_eq!(again, best);
}

#[test]
fn search_keys_are_checked() {
    for (option, key) in [
        ("search.method=\"annealing\"", "search.method"),
        ("search.evaluations=0", "search.evaluations"),
        ("search.batch=0", "search.batch"),
    ] {
        let out = run_err(&["optimize", "--out", "/nonexistent/x", "-O", option]);
        assert_refused(&out, key);
    }
    // A seed means nothing to the grid.
    let out = run_err(&["optimize", "--out", "/nonexistent/x", "-O", "search.seed=3"]);
    assert_refused(&out, "search.seed");
}

/// A proposal's file cut short: the run is refused, naming the file, and
/// `--restart` discards it and runs again to the same result.
#[test]
fn a_damaged_proposal_is_refused_and_restart_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("random.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let config = config.to_str().unwrap();
    let out = dir.path().join("run");
    let best = optimize(config, &out, "2", &[]);
    let file = out.join("iter-002/indices.bin");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..100]).unwrap();
    let args = ["optimize", "-c", config, "--out", out.to_str().unwrap()];
    let refused = run_err(&args);
    assert_refused(&refused, "indices.bin");
    assert_refused(&refused, "damaged");
    let again = optimize(config, &out, "2", &["--restart"]);
    assert_eq!(again, best);
}

/// A walk-forward runs the sampled search in every fold (the evolutionary
/// one: its second generation reads the fold's first) and says so.
#[test]
fn a_walkforward_samples_in_every_fold_and_names_the_search() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wf.toml");
    let wf = CONFIG.replace(
        "[verify]",
        "[walkforward]\ntrain = \"3y\"\ntest = \"1y\"\n[verify]",
    );
    std::fs::write(&config, wf).unwrap();
    let out = dir.path().join("wf");
    run_ok(&[
        "walkforward",
        "-c",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-O",
        "search.method=\"evolve\"",
        "-O",
        "search.evaluations=1200",
    ]);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("walkforward.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["search"],
        "evolve (seed 11, 1200 evaluations per fold)"
    );
    let fold: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fold-001/best.json")).unwrap())
            .unwrap();
    assert_eq!(fold["search"]["evaluated"], 1200);
    assert_eq!(fold["search"]["method"], "evolve");
}

/// Bars whose next return is +1 % exactly when the bar's volume lies in
/// 60..=110 and −1 % otherwise (volumes 0..199, drawn by a fixed LCG): a
/// strategy holding while `lo ≤ volume ≤ hi` makes the most at lo = 60,
/// hi = 110 and less at any other band.
fn planted_band(path: &Path) {
    let mut csv = String::from("date,open,high,low,close,volume\n");
    let (mut state, mut price, mut volume) = (12345u64, 100.0f64, 0u64);
    for day in 0..2000u64 {
        let open = price;
        let r = if (60..=110).contains(&volume) {
            0.01
        } else {
            -0.01
        };
        let close = open * (1.0 + r);
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        volume = (state >> 33) % 200;
        let date = chrono_like(day);
        csv.push_str(&format!(
            "{date},{open},{},{},{close},{volume}\n",
            open.max(close),
            open.min(close)
        ));
        price = close;
    }
    std::fs::write(path, csv).unwrap();
}

/// Day `n` after 2000-01-01 as YYYY-MM-DD (a calendar without a crate).
fn chrono_like(n: u64) -> String {
    let (mut y, mut d) = (2000u64, n);
    loop {
        let len = if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) {
            366
        } else {
            365
        };
        if d < len {
            break;
        }
        d -= len;
        y += 1;
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let months = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut m = 0;
    while d >= months[m] {
        d -= months[m];
        m += 1;
    }
    format!("{y}-{:02}-{:02}", m + 1, d + 1)
}

/// The planted band is found by every method: the grid screens it all,
/// the random sampler with a budget of the whole grid, the evolutionary
/// search with a twentieth of it.
#[test]
fn each_search_method_finds_a_planted_edge() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("band.csv");
    planted_band(&data);
    let config = dir.path().join("band.toml");
    std::fs::write(
        &config,
        r#"
[strategy]
name = "band"
entry = "volume >= lo and volume <= hi"
exit = "volume < lo or volume > hi"
constraints = ["lo <= hi"]
[strategy.params]
lo = { start = 0, stop = 199, step = 1 }
hi = { start = 0, stop = 199, step = 1 }
[score]
objective = "total_return"
[verify]
top = 20
"#,
    )
    .unwrap();
    let allowed = 200 * 201 / 2;
    for (method, evaluations, batch) in [
        ("grid", None, None),
        ("random", Some(allowed), Some(5_000)),
        ("evolve", Some(allowed / 20), Some(250)),
    ] {
        let out = dir.path().join(method);
        let mut extra = vec![
            "--data".to_string(),
            data.to_str().unwrap().to_string(),
            "-O".to_string(),
            format!("search.method=\"{method}\""),
        ];
        for (key, v) in [("evaluations", evaluations), ("batch", batch)] {
            if let Some(v) = v {
                extra.extend(["-O".to_string(), format!("search.{key}={v}")]);
            }
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let best = optimize(config.to_str().unwrap(), &out, "2", &extra);
        let v: serde_json::Value = serde_json::from_str(&best).unwrap();
        let params = &v["params"];
        assert_eq!(
            (params["lo"].as_f64(), params["hi"].as_f64()),
            (Some(60.0), Some(110.0)),
            "{method}: {params}"
        );
    }
}
