//! The cluster front ends: the Kubernetes Indexed Job `sieve kube-manifest`
//! prints (its fields, and its pods' commands sweeping shards that merge to
//! the unsharded file), and the clear errors of the Slurm executor and of
//! `sieve shard-job`.

use crate::sweep::CONFIG;
use crate::{run_err, run_ok, sieve, stderr};

#[test]
fn the_kubernetes_job_sweeps_shards_that_merge_to_the_unsharded_file() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().to_str().unwrap();
    let config = dir.path().join("sweep.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let text = run_ok(&[
        "kube-manifest",
        "--config",
        config.to_str().unwrap(),
        "--shards",
        "3",
        "--top",
        "300",
        "--image",
        "example.org/sieve:1",
        "--claim",
        "sieve-data",
        "--mount",
        mount,
        "--cpus",
        "1",
    ]);
    let job: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (job["apiVersion"].as_str(), job["kind"].as_str()),
        (Some("batch/v1"), Some("Job"))
    );
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        (spec["completions"].as_u64(), spec["parallelism"].as_u64()),
        (Some(3), Some(3))
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "sieve-data"
    );
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "example.org/sieve:1");
    assert_eq!(container["volumeMounts"][0]["mountPath"], mount);
    assert_eq!(
        container["volumeMounts"][0]["name"],
        pod["volumes"][0]["name"]
    );
    assert_eq!(container["env"][0]["name"], "SHARD");
    assert_eq!(
        container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    assert_eq!(container["command"][0], "sieve");

    // Each pod's command, its index put where Kubernetes puts it: the
    // parts merge to the unsharded sweep.
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert!(args.iter().any(|a| a == "$(SHARD)/3"), "{args:?}");
    for k in 0..3 {
        let pod_args: Vec<String> = args
            .iter()
            .map(|a| a.replace("$(SHARD)", &k.to_string()))
            .collect();
        let refs: Vec<&str> = pod_args.iter().map(String::as_str).collect();
        run_ok(&refs);
    }
    let parts: Vec<String> = (0..3)
        .map(|k| {
            dir.path()
                .join(format!("sieve-sweep-part-{k}.csv"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let merged = dir.path().join("merged.csv");
    let mut merge = vec!["merge"];
    merge.extend(parts.iter().map(String::as_str));
    merge.extend(["--out", merged.to_str().unwrap()]);
    run_ok(&merge);
    let whole = dir.path().join("whole.csv");
    run_ok(&[
        "sweep",
        "--config",
        config.to_str().unwrap(),
        "--top",
        "300",
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
}

#[test]
fn a_slurm_executor_without_sbatch_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, format!("{CONFIG}[executor]\nkind = \"slurm\"\n")).unwrap();
    let out = sieve()
        .args(["optimize", "--config", config.to_str().unwrap(), "--out"])
        .arg(dir.path().join("run"))
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("`sbatch` is not found") && err.contains("executor.kind"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_shard_job_says_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.json");
    let err = stderr(&run_err(&["shard-job", "--job", job.to_str().unwrap()]));
    assert!(err.contains("which shard?"), "{err}");
    std::fs::write(&job, r#"{"sieve_version": "0.0.1"}"#).unwrap();
    let err = stderr(&run_err(&[
        "shard-job",
        "--job",
        job.to_str().unwrap(),
        "--shard",
        "0",
    ]));
    assert!(err.contains("written by sieve 0.0.1"), "{err}");
}

#[test]
fn cluster_flags_that_cannot_apply_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let c = config.to_str().unwrap();
    let run = dir.path().join("run");
    let err = stderr(&run_err(&[
        "optimize",
        "--config",
        c,
        "--shards",
        "3",
        "--out",
        run.to_str().unwrap(),
    ]));
    assert!(
        err.contains("--shards") && err.contains("--executor slurm"),
        "{err}"
    );
    assert!(!run.exists(), "a refused run wrote {}", run.display());
    let kube = |extra: &[&str]| {
        let mut args = vec![
            "kube-manifest",
            "--shards",
            "2",
            "--image",
            "i",
            "--claim",
            "c",
        ];
        args.extend_from_slice(extra);
        stderr(&run_err(&args))
    };
    let err = kube(&["--config", "relative.toml"]);
    assert!(
        err.contains("--config relative.toml") && err.contains("from /"),
        "{err}"
    );
    let err = kube(&["--config", c, "--name", "Bad_Name"]);
    assert!(err.contains("--name \"Bad_Name\""), "{err}");
}
