//! A Kubernetes Indexed Job that sweeps a grid in shards: pod K runs
//! `sieve sweep --shard K/N` (the same `--shard` a Slurm array or a shell
//! loop uses) into a shared volume, and `sieve merge` joins the parts.

use std::path::PathBuf;

use serde_json::{json, Value};
use sieve_core::{Error, Result};

/// What the manifest runs.
pub struct KubeSweep {
    pub name: String,
    pub image: String,
    /// The PersistentVolumeClaim every pod mounts at `mount`.
    pub claim: String,
    pub mount: PathBuf,
    /// The config and data as the pods see them.
    pub config: PathBuf,
    pub data: Option<PathBuf>,
    pub shards: u64,
    pub parallelism: Option<u64>,
    pub top: usize,
    pub cpus: u32,
}

impl KubeSweep {
    /// Where shard `k`'s part goes (`$(SHARD)` in the manifest): straight
    /// into the volume, named after the Job (no folder a pod would have to
    /// create first).
    pub fn part(&self, k: &str) -> String {
        format!("{}/{}-part-{k}.csv", self.mount.display(), self.name)
    }

    /// The arguments of the sieve in pod `k` (`$(SHARD)` in the manifest,
    /// which Kubernetes replaces by the pod's completion index).
    pub fn args(&self, k: &str) -> Vec<String> {
        let mut args = vec![
            "sweep".to_string(),
            "--config".into(),
            self.config.display().to_string(),
        ];
        if let Some(d) = &self.data {
            args.extend(["--data".into(), d.display().to_string()]);
        }
        args.extend([
            "--shard".into(),
            format!("{k}/{}", self.shards),
            "--top".into(),
            self.top.to_string(),
            "--threads".into(),
            self.cpus.to_string(),
            "--out".into(),
            self.part(k),
        ]);
        args
    }

    /// The Job, as JSON (which `kubectl apply -f` reads, YAML being a
    /// superset of it).
    pub fn manifest(&self) -> Result<Value> {
        if self.shards == 0 || self.cpus == 0 || self.parallelism == Some(0) {
            return Err(Error::Invalid(
                "shards, parallelism and cpus must be at least 1".into(),
            ));
        }
        // A Job's name is a DNS label: lowercase letters, digits and '-'.
        let label = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 63
            && self.name.chars().all(label)
            && !self.name.starts_with('-')
            && !self.name.ends_with('-');
        if !name_ok {
            return Err(Error::Invalid(format!(
                "--name {:?}: a Job's name is up to 63 lowercase letters, digits and '-', not starting or ending with '-'",
                self.name
            )));
        }
        // The pods read these paths: relative ones would be read from the
        // container's working folder.
        for (flag, path) in [
            ("--config", Some(&self.config)),
            ("--data", self.data.as_ref()),
            ("--mount", Some(&self.mount)),
        ] {
            if let Some(p) = path.filter(|p| !p.is_absolute()) {
                return Err(Error::Invalid(format!(
                    "{flag} {}: give the path as the pods see it, from / (e.g. under --mount)",
                    p.display()
                )));
            }
        }
        let volume = "sieve-work";
        Ok(json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": self.name},
            "spec": {
                "completionMode": "Indexed",
                "completions": self.shards,
                "parallelism": self.parallelism.unwrap_or(self.shards).min(self.shards),
                // A shard that fails is run again, up to this many times
                // per index (Kubernetes 1.29 and later).
                "backoffLimitPerIndex": 2,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{
                            "name": "sieve",
                            "image": self.image,
                            "command": ["sieve"],
                            "args": self.args("$(SHARD)"),
                            "env": [{
                                "name": "SHARD",
                                "valueFrom": {"fieldRef": {"fieldPath":
                                    "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
                            }],
                            "resources": {"requests": {"cpu": self.cpus.to_string()}},
                            "volumeMounts": [{"name": volume, "mountPath": self.mount.display().to_string()}]
                        }],
                        "volumes": [{"name": volume, "persistentVolumeClaim": {"claimName": self.claim}}]
                    }
                }
            }
        }))
    }
}
