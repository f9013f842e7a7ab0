//! `robust.select = "plateau"` end to end: every aggregate in `plateau.csv`
//! against `sieve verify` of the neighbours the test finds itself (a
//! `values` axis, a zoomed grid, edges and a constraint), the surface in
//! `best.json` against `sieve verify`, the zoom anchored on the choice,
//! walk-forward folds choosing by the rule, and Ctrl-C then resume.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::{run_ok, sieve, stderr};

/// Two swept axes, one a `values` list; `fast < slow` removes neighbours
/// near the diagonal; two iterations, so the second grid is a zoom.
const CONFIG: &str = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { values = [3, 5, 8, 13, 21, 34] }
slow = { start = 10, stop = 120, step = 10 }
[score]
score_start = "60%"
holdout_start = "90%"
[verify]
top = 40
[optimize]
iterations = 2
refine_top = 5
[robust]
select = "plateau"
"#;

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A CSV as its header and rows of fields.
fn csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    (
        header,
        lines
            .map(|l| l.split(',').map(String::from).collect())
            .collect(),
    )
}

fn col(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

type Point = (u64, u64);

fn point(fast: f64, slow: f64) -> Point {
    (fast.to_bits(), slow.to_bits())
}

/// The exact objective of each point, from `sieve verify` on a candidates
/// file of them.
fn verify_points(
    dir: &Path,
    config: &str,
    data: &str,
    points: &[(f64, f64)],
) -> HashMap<Point, f64> {
    verify_windows(dir, config, data, points)
        .into_iter()
        .map(|(p, (score, _))| (p, score))
        .collect()
}

/// The exact score-window and holdout objectives of each point.
fn verify_windows(
    dir: &Path,
    config: &str,
    data: &str,
    points: &[(f64, f64)],
) -> HashMap<Point, (f64, f64)> {
    let list = dir.join("points.csv");
    let mut text = String::from("fast,slow\n");
    for (f, s) in points {
        text.push_str(&format!("{f},{s}\n"));
    }
    std::fs::write(&list, text).unwrap();
    let out = dir.join("points.verified.csv");
    let top = points.len().to_string();
    run_ok(&[
        "verify",
        "--config",
        config,
        "--data",
        data,
        "--candidates",
        list.to_str().unwrap(),
        "--top",
        &top,
        "--out",
        out.to_str().unwrap(),
    ]);
    let (h, rows) = csv(&out);
    let (f, s, score, holdout) = (
        col(&h, "fast"),
        col(&h, "slow"),
        col(&h, "score"),
        col(&h, "holdout_score"),
    );
    rows.iter()
        .map(|r| {
            (
                point(num(&r[f]), num(&r[s])),
                (num(&r[score]), num(&r[holdout])),
            )
        })
        .collect()
}

/// An iteration's grid from `run.json`: (fast values, slow values).
fn grid(iteration: &serde_json::Value) -> (Vec<f64>, Vec<f64>) {
    let axis = |i: usize| -> Vec<f64> {
        iteration["grid"][i]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    assert_eq!(iteration["grid"][0]["name"], "fast");
    assert_eq!(iteration["grid"][1]["name"], "slow");
    (axis(0), axis(1))
}

/// What the test counts while finding neighbours, so it can tell that each
/// case it means to cover was met.
#[derive(Default, Debug)]
struct Met {
    constraint_removed: usize,
    edge_left_out: usize,
    past_a_zoomed_edge: usize,
}

/// The documented neighbours of `at` on `values` (one step down and up; past
/// an end, one step further only while within the first grid's range).
fn along(values: &[f64], first: &[f64], at: f64, met: &mut Met) -> Vec<f64> {
    let i = values.iter().position(|&v| v == at).unwrap();
    let (lo, hi) = (first[0], first[first.len() - 1]);
    let n = values.len();
    let mut out = Vec::new();
    let mut edge = |v: f64, out: &mut Vec<f64>| {
        if v >= lo && v <= hi {
            met.past_a_zoomed_edge += 1;
            out.push(v);
        } else {
            met.edge_left_out += 1;
        }
    };
    if i == 0 {
        edge(at - (values[1] - values[0]), &mut out);
    } else {
        out.push(values[i - 1]);
    }
    if i + 1 == n {
        edge(at + (values[n - 1] - values[n - 2]), &mut out);
    } else {
        out.push(values[i + 1]);
    }
    out
}

fn neighbours(
    grid: &(Vec<f64>, Vec<f64>),
    first: &(Vec<f64>, Vec<f64>),
    (fast, slow): (f64, f64),
    met: &mut Met,
) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for f in along(&grid.0, &first.0, fast, met) {
        out.push((f, slow));
    }
    for s in along(&grid.1, &first.1, slow, met) {
        out.push((fast, s));
    }
    let before = out.len();
    out.retain(|(f, s)| f < s);
    met.constraint_removed += before - out.len();
    out
}

fn aggregate(own: f64, near: &[f64], how: &str) -> f64 {
    let all: Vec<f64> = std::iter::once(own)
        .chain(
            near.iter()
                .map(|&v| if v.is_nan() { f64::NEG_INFINITY } else { v }),
        )
        .collect();
    match how {
        "mean" => all.iter().sum::<f64>() / all.len() as f64,
        _ => all.iter().copied().fold(f64::INFINITY, f64::min),
    }
}

fn setup(dir: &Path, config_text: &str) -> (String, String) {
    let data = dir.join("bars.csv");
    run_ok(&[
        "synth",
        "--bars",
        "3000",
        "--seed",
        "11",
        "--out",
        data.to_str().unwrap(),
    ]);
    let config = dir.join("plateau.toml");
    std::fs::write(&config, config_text).unwrap();
    (
        config.to_str().unwrap().to_string(),
        data.to_str().unwrap().to_string(),
    )
}

fn each_aggregate_is_its_neighbours_verified(how: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config_text = format!("{CONFIG}neighbour_aggregate = \"{how}\"\n");
    let (config, data) = setup(dir.path(), &config_text);
    let out = dir.path().join("run");
    run_ok(&[
        "optimize",
        "--config",
        &config,
        "--data",
        &data,
        "--out",
        out.to_str().unwrap(),
    ]);
    let run = read_json(&out.join("run.json"));
    let iterations = run["iterations"].as_array().unwrap();
    assert_eq!(iterations.len(), 2, "the second grid is a zoom");
    let first = grid(&iterations[0]);
    let mut met = Met::default();
    let mut picks = Vec::new();
    for (k, it) in iterations.iter().enumerate() {
        let g = grid(it);
        let iter_dir = out.join(format!("iter-{:03}", k + 1));
        let (h, rows) = csv(&iter_dir.join("plateau.csv"));
        let (f, s, score, n, agg) = (
            col(&h, "fast"),
            col(&h, "slow"),
            col(&h, "score"),
            col(&h, "neighbours"),
            col(&h, "aggregate"),
        );
        // Every verified candidate is ranked.
        let (_, verified) = csv(&iter_dir.join("verified.csv"));
        assert_eq!(rows.len(), verified.len());
        // Each row's neighbours, found here, verified on their own.
        let hoods: Vec<Vec<(f64, f64)>> = rows
            .iter()
            .map(|r| neighbours(&g, &first, (num(&r[f]), num(&r[s])), &mut met))
            .collect();
        let points: Vec<(f64, f64)> = hoods.iter().flatten().copied().collect();
        let exact = verify_points(dir.path(), &config, &data, &points);
        let mut previous = f64::INFINITY;
        for (r, near) in rows.iter().zip(&hoods) {
            assert_eq!(num(&r[n]) as usize, near.len(), "row {r:?}");
            let scores: Vec<f64> = near.iter().map(|&(a, b)| exact[&point(a, b)]).collect();
            let want = aggregate(num(&r[score]), &scores, how);
            let got = num(&r[agg]);
            assert!(
                got == want || (got - want).abs() <= 1e-12 * want.abs(),
                "iteration {} row {r:?}: aggregate {got}, neighbours verified give {want}",
                k + 1
            );
            // Ranked by the aggregate, best first.
            assert!(got <= previous || got.is_nan(), "row {r:?} out of order");
            previous = got;
        }
        // The iteration's choice is the first row; the argmax is verified's.
        let chosen = (num(&rows[0][f]), num(&rows[0][s]));
        let best = &it["best"]["params"];
        assert_eq!(
            (best[0].as_f64().unwrap(), best[1].as_f64().unwrap()),
            chosen
        );
        let argmax = &it["argmax"]["params"];
        let vf = (num(&verified[0][2]), num(&verified[0][3]));
        assert_eq!(
            (argmax[0].as_f64().unwrap(), argmax[1].as_f64().unwrap()),
            vf
        );
        // The next grid is built around the choice.
        assert_eq!(it["refine_from"][0], it["best"]["params"]);
        picks.push((chosen, num(&rows[0][agg])));
    }
    // The zoom is anchored on iteration 1's choice: it lies inside the
    // second grid on both axes.
    let second = grid(&iterations[1]);
    let (c1, _) = picks[0];
    for (values, v) in [(&second.0, c1.0), (&second.1, c1.1)] {
        assert!(values.contains(&v), "{v} not in the zoomed grid {values:?}");
    }
    assert!(met.constraint_removed > 0, "{met:?}");
    assert!(met.edge_left_out > 0, "{met:?}");
    assert!(met.past_a_zoomed_edge > 0, "{met:?}");

    // best.json: the higher of the two choices' aggregates.
    let best = read_json(&out.join("best.json"));
    let sel = &best["selection"];
    assert_eq!(sel["rule"], format!("plateau ({how})"));
    let (want, _) = picks
        .iter()
        .copied()
        .fold(picks[0], |b, p| if p.1 > b.1 + 1e-9 { p } else { b });
    let chosen = &sel["chosen"]["params"];
    assert_eq!(
        (
            chosen["fast"].as_f64().unwrap(),
            chosen["slow"].as_f64().unwrap()
        ),
        want
    );
    // Both choices' objective and holdout, as `sieve verify` has them.
    for which in ["chosen", "argmax"] {
        let c = &sel[which];
        let p = (
            c["params"]["fast"].as_f64().unwrap(),
            c["params"]["slow"].as_f64().unwrap(),
        );
        let (score, holdout) = verify_windows(dir.path(), &config, &data, &[p])[&point(p.0, p.1)];
        assert_eq!(c["objective"].as_f64(), Some(score), "{which}");
        assert_eq!(c["holdout"].as_f64(), Some(holdout), "{which}");
    }
    // The surface: the exact objective along each axis through the choice.
    for slice in sel["surface"].as_array().unwrap() {
        let values: Vec<f64> = slice["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let points: Vec<(f64, f64)> = match slice["param"].as_str().unwrap() {
            "fast" => values
                .iter()
                .map(|&v| (v, want.1))
                .filter(|p| p.0 < p.1)
                .collect(),
            _ => values
                .iter()
                .map(|&v| (want.0, v))
                .filter(|p| p.0 < p.1)
                .collect(),
        };
        let exact = verify_points(dir.path(), &config, &data, &points);
        let objectives = slice["objectives"].as_array().unwrap();
        for (i, &v) in values.iter().enumerate() {
            let p = match slice["param"].as_str().unwrap() {
                "fast" => (v, want.1),
                _ => (want.0, v),
            };
            match exact.get(&point(p.0, p.1)) {
                Some(&e) if e.is_finite() => assert_eq!(objectives[i].as_f64(), Some(e), "{p:?}"),
                _ => assert!(!objectives[i].as_f64().is_some_and(f64::is_finite), "{p:?}"),
            }
        }
    }
}

#[test]
fn each_mean_aggregate_is_its_neighbours_verified() {
    each_aggregate_is_its_neighbours_verified("mean");
}

#[test]
fn each_min_aggregate_is_its_neighbours_verified() {
    each_aggregate_is_its_neighbours_verified("min");
}

/// Each walk-forward fold is an optimize run choosing by the rule: the
/// fold's parameters are the first row of its best iteration's
/// `plateau.csv`, and at least one fold chose otherwise than its argmax.
#[test]
fn walkforward_folds_choose_by_the_plateau_rule() {
    let dir = tempfile::tempdir().unwrap();
    let config_text = r#"
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 30, step = 4 }
slow = { start = 35, stop = 120, step = 15 }
[optimize]
iterations = 1
[robust]
select = "plateau"
[walkforward]
train = "1000"
test = "500"
"#;
    let (config, data) = setup(dir.path(), config_text);
    let out = dir.path().join("wf");
    run_ok(&[
        "walkforward",
        "--config",
        &config,
        "--data",
        &data,
        "--out",
        out.to_str().unwrap(),
    ]);
    let (h, folds) = csv(&out.join("walkforward.csv"));
    assert!(folds.len() >= 3, "{folds:?}");
    let (f, s) = (col(&h, "fast"), col(&h, "slow"));
    let mut differ = 0;
    for (i, fold) in folds.iter().enumerate() {
        let fold_dir = out.join(format!("fold-{:03}", i + 1));
        let best = read_json(&fold_dir.join("best.json"));
        assert_eq!(best["selection"]["rule"], "plateau (mean)");
        let (ph, rows) = csv(&fold_dir.join("iter-001/plateau.csv"));
        let first = (
            num(&rows[0][col(&ph, "fast")]),
            num(&rows[0][col(&ph, "slow")]),
        );
        assert_eq!((num(&fold[f]), num(&fold[s])), first, "fold {}", i + 1);
        let (vh, verified) = csv(&fold_dir.join("iter-001/verified.csv"));
        let argmax = (
            num(&verified[0][col(&vh, "fast")]),
            num(&verified[0][col(&vh, "slow")]),
        );
        differ += usize::from(argmax != first);
    }
    assert!(differ > 0, "every fold's plateau choice was its argmax");
}

/// Ctrl-C while iteration 1 verifies (its candidates, then their
/// neighbours), then the same command: the same results, byte for byte, as
/// a run never stopped.
#[test]
fn a_plateau_run_stopped_while_verifying_resumes_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bars.csv");
    run_ok(&[
        "synth",
        "--bars",
        "20000",
        "--seed",
        "5",
        "--out",
        data.to_str().unwrap(),
    ]);
    let data = data.to_str().unwrap();
    let args = |out: &Path| -> Vec<String> {
        [
            "optimize",
            "--data",
            data,
            "--threads",
            "1",
            "--strategy",
            "sma_cross",
            "-O",
            "strategy.params.fast={start=2,stop=300,step=2}",
            "-O",
            "strategy.params.slow={start=10,stop=600,step=5}",
            "-O",
            "verify.top=1500",
            "-O",
            "optimize.refine_top=50",
            "-O",
            "optimize.iterations=2",
            "-O",
            "robust.select=\"plateau\"",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let whole = dir.path().join("whole");
    run_ok(&args(&whole).iter().map(String::as_str).collect::<Vec<_>>());
    // Once as the verify stage starts (among its candidates), once as it
    // says it verifies their neighbours.
    for (n, wait_for) in ["", "neighbours of the"].into_iter().enumerate() {
        let out = dir.path().join(format!("stopped-{n}"));
        let mut child = sieve()
            .args(args(&out))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        if wait_for.is_empty() {
            while !std::fs::read_to_string(out.join("run.json"))
                .is_ok_and(|t| t.contains("\"stage\": \"verify\""))
            {
                assert!(
                    Instant::now() < deadline,
                    "iteration 1 never reached verify"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        } else {
            let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
            let said = lines
                .by_ref()
                .map_while(Result::ok)
                .any(|l| l.contains(wait_for));
            assert!(said, "no line said \"{wait_for}\"");
            // Keep reading so the run never blocks on a full pipe.
            std::thread::spawn(move || lines.for_each(drop));
        }
        let killed = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
        let run = read_json(&out.join("run.json"));
        assert_eq!(
            run["iterations"][0]["stage"], "verify",
            "stopped at \"{wait_for}\""
        );
        assert!(!out.join("iter-001/plateau.csv").exists());

        let resumed = sieve().args(args(&out)).output().unwrap();
        assert!(resumed.status.success(), "{}", stderr(&resumed));
        for file in [
            "best.json",
            "iter-001/verified.csv",
            "iter-001/plateau.csv",
            "iter-002/plateau.csv",
        ] {
            assert_eq!(
                std::fs::read(out.join(file)).unwrap(),
                std::fs::read(whole.join(file)).unwrap(),
                "{file} after a stop at \"{wait_for}\""
            );
        }
    }
}

/// The selection rule decides each iteration's best and the zoom: a run
/// folder of one rule is refused to the other, naming the key, and
/// `--restart` redoes it under the new rule.
#[test]
fn another_selection_rule_is_another_run() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = setup(dir.path(), CONFIG);
    let out = dir.path().join("run");
    let out = out.to_str().unwrap();
    let args = |select: &'static str| {
        vec![
            "optimize", "--config", &config, "--data", &data, "--out", out, "-O", select,
        ]
    };
    run_ok(&args("robust.select=\"plateau\""));
    let refused = crate::run_err(&args("robust.select=\"argmax\""));
    crate::assert_refused(&refused, "changed: robust.select");
    let mut restart = args("robust.select=\"argmax\"");
    restart.push("--restart");
    run_ok(&restart);
    let best = read_json(&Path::new(out).join("best.json"));
    assert!(best.get("selection").is_none_or(|s| s.is_null()), "{best}");
    assert!(!Path::new(out).join("iter-001/plateau.csv").exists());
}
