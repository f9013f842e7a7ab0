//! Shards as a Slurm job array: `sbatch --array` of `sieve shard-job`,
//! followed with `squeue` (not `sacct`: not every cluster keeps
//! accounting). The job's folder must be on a file system the nodes share.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sieve_core::{Error, Result};

use super::cluster::{Phase, ShardRunner};
use super::job::JobDir;
use crate::settings::ExecutorSettings;

/// Submits shard jobs with `sbatch` and follows them with `squeue`.
pub struct Slurm {
    pub settings: ExecutorSettings,
    /// The sieve each shard job runs (this one).
    pub program: PathBuf,
}

impl Slurm {
    /// The name every task of a job's arrays carries: how `squeue` finds
    /// them, whatever their ids.
    fn job_name(job: &JobDir) -> String {
        let name = job.dir.file_name().map(|n| n.to_string_lossy().to_string());
        format!("sieve-{}", name.unwrap_or_default())
    }

    /// The `sbatch` arguments for `shards` of `job`.
    pub fn sbatch_args(&self, job: &JobDir, shards: &[u64]) -> Vec<String> {
        let s = &self.settings;
        let mut args = vec![
            "--parsable".to_string(),
            format!("--array={}", array_spec(shards)),
            format!("--job-name={}", Slurm::job_name(job)),
            format!("--output={}", job.dir.join("slurm-%A_%a.log").display()),
            format!("--chdir={}", job.dir.display()),
        ];
        if let Some(p) = &s.partition {
            args.push(format!("--partition={p}"));
        }
        if let Some(t) = &s.time_limit {
            args.push(format!("--time={t}"));
        }
        if let Some(c) = s.cpus_per_task {
            args.push(format!("--cpus-per-task={c}"));
        }
        args.extend(s.sbatch_options.iter().cloned());
        args.push(format!(
            "--wrap={} shard-job --job {}",
            quote(&self.program),
            quote(&job.job_path())
        ));
        args
    }
}

/// `0-3`, `1,3,5-7`: an `--array` list of the shards.
pub fn array_spec(shards: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < shards.len() {
        let mut j = i;
        while j + 1 < shards.len() && shards[j + 1] == shards[j] + 1 {
            j += 1;
        }
        parts.push(match i == j {
            true => shards[i].to_string(),
            false => format!("{}-{}", shards[i], shards[j]),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A path as one shell word.
fn quote(p: &Path) -> String {
    shell_word(&p.display().to_string())
}

/// `s` as one shell word (quoted where it needs to be).
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,%@+".contains(c);
    match !s.is_empty() && s.chars().all(plain) {
        true => s.to_string(),
        false => format!("'{}'", s.replace('\'', r"'\''")),
    }
}

/// Runs a Slurm command, its missing or failing a clear error.
fn slurm(program: &str, args: &[String]) -> Result<String> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        Error::Invalid(match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "executor.kind = \"slurm\", but `{program}` is not found: run sieve on a machine that submits Slurm jobs (a login node), or set executor.kind = \"local\""
            ),
            _ => format!("could not run `{program}`: {e}"),
        })
    })?;
    if !out.status.success() {
        return Err(Error::Invalid(format!(
            "`{program} {}` failed ({}): {}",
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

impl ShardRunner for Slurm {
    fn kind(&self) -> &str {
        "slurm"
    }

    fn submit(&self, job: &JobDir, shards: &[u64]) -> Result<Vec<String>> {
        let out = slurm("sbatch", &self.sbatch_args(job, shards))?;
        // `--parsable`: "<job id>" or "<job id>;<cluster>".
        let id = out
            .trim()
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
            return Err(Error::Invalid(format!(
                "sbatch answered {:?}, not a job id",
                out.trim()
            )));
        }
        Ok(shards.iter().map(|k| format!("{id}_{k}")).collect())
    }

    fn active(&self, job: &JobDir, ids: &[String]) -> Result<HashMap<String, Phase>> {
        let args = [
            "--noheader".to_string(),
            "--array".to_string(),
            format!("--name={}", Slurm::job_name(job)),
            "--format=%i %T".to_string(),
        ];
        let out = slurm("squeue", &args)?;
        let mut active = HashMap::new();
        for line in out.lines() {
            let mut words = line.split_whitespace();
            let (Some(id), Some(state)) = (words.next(), words.next()) else {
                continue;
            };
            if !ids.iter().any(|i| i == id) {
                continue;
            }
            let phase = match state {
                "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
                | "RESV_DEL_HOLD" => Phase::Queued,
                "RUNNING" | "COMPLETING" | "SUSPENDED" | "STAGE_OUT" | "SIGNALING" | "RESIZING"
                | "STOPPED" => Phase::Running,
                // Ended (completed, failed, cancelled, timed out …).
                _ => continue,
            };
            active.insert(id.to_string(), phase);
        }
        Ok(active)
    }

    fn abandon(&self, job: &JobDir, failed: bool) {
        // A run that failed leaves nothing queued behind it; one stopped
        // (a signal, a time budget) leaves its shards to finish, for the
        // same command to find.
        if failed {
            let _ = slurm("scancel", &[format!("--name={}", Slurm::job_name(job))]);
        }
    }

    fn failure(&self, job: &JobDir, id: &str) -> String {
        let log = job.dir.join(format!("slurm-{id}.log"));
        let tail = std::fs::read_to_string(&log)
            .ok()
            .and_then(|text| {
                text.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string())
            })
            .map(|l| format!(", its last line: {l}"))
            .unwrap_or_default();
        format!("log {}{tail}", log.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_lists_collapse_runs() {
        assert_eq!(array_spec(&[0, 1, 2, 3]), "0-3");
        assert_eq!(array_spec(&[1, 3, 5, 6, 7]), "1,3,5-7");
        assert_eq!(array_spec(&[9]), "9");
    }

    #[test]
    fn a_path_is_one_shell_word() {
        assert_eq!(quote(Path::new("/a b/it's")), r"'/a b/it'\''s'");
        assert_eq!(quote(Path::new("/work/run/job.json")), "/work/run/job.json");
        assert_eq!(
            shell_word("--wrap=/bin/sieve shard-job"),
            "'--wrap=/bin/sieve shard-job'"
        );
    }
}
