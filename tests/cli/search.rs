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
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("random.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let config = config.to_str().unwrap();
    let whole = dir.path().join("whole");
    let best = optimize(config, &whole, "2", &[]);
    let v: serde_json::Value = serde_json::from_str(&best).unwrap();
    // 1,500 rounded up to whole batches of 600: three iterations.
    assert_eq!(v["search"]["evaluated"], 1800);
    assert_eq!(v["search"]["grid_size"], 119 * 291);
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
    for it in its {
        for i in it["indices"].as_array().unwrap() {
            let i = i.as_u64().unwrap();
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

/// A walk-forward runs the sampled search in every fold and says so.
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
        "search.evaluations=600",
    ]);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("walkforward.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["search"],
        "random (seed 11, 600 evaluations per fold)"
    );
    let fold: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fold-001/best.json")).unwrap())
            .unwrap();
    assert_eq!(fold["search"]["evaluated"], 600);
}
