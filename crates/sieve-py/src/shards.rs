//! `executor=`: the optimize loop's screens sent, shard by shard, to a
//! Python `concurrent.futures.Executor`. `sieve/__init__.py` wraps the
//! executor (`_Shards`: submit, active, failure); this calls it with the
//! GIL from the loop's worker thread, and [`shard_job`] is what each
//! submitted call runs.

use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::prelude::*;
use sieve_core::Error;
use sieve_run::executor::job::{run_shard, JobDir};
use sieve_run::executor::{Phase, ShardRunner};

use crate::Failure;

/// The `_Shards` object around the user's executor.
pub(crate) struct PyShards {
    shards: Py<PyAny>,
    kind: String,
}

impl PyShards {
    pub(crate) fn new(shards: &Bound<'_, PyAny>) -> PyResult<PyShards> {
        Ok(PyShards {
            kind: shards.getattr("kind")?.extract()?,
            shards: shards.clone().unbind(),
        })
    }

    /// Calls a method of `_Shards` with the GIL; a Python error becomes
    /// the run's error.
    fn call<T>(
        &self,
        call: impl FnOnce(Python<'_>, &Py<PyAny>) -> PyResult<T>,
    ) -> sieve_core::Result<T> {
        Python::attach(|py| call(py, &self.shards))
            .map_err(|e| Error::Invalid(format!("executor: {e}")))
    }
}

impl ShardRunner for PyShards {
    fn kind(&self) -> &str {
        &self.kind
    }

    fn submit(&self, job: &JobDir, shards: &[u64]) -> sieve_core::Result<Vec<String>> {
        self.call(|py, s| {
            s.call_method1(py, "submit", (job.job_path(), shards.to_vec()))?
                .extract(py)
        })
        .map_err(|e| Error::Invalid(format!("{e} (submitting shards of {})", job.dir.display())))
    }

    fn active(&self, _: &JobDir, ids: &[String]) -> sieve_core::Result<HashMap<String, Phase>> {
        let running: Vec<(String, bool)> =
            self.call(|py, s| s.call_method1(py, "active", (ids.to_vec(),))?.extract(py))?;
        Ok(running
            .into_iter()
            .map(|(id, running)| {
                (
                    id,
                    match running {
                        true => Phase::Running,
                        false => Phase::Queued,
                    },
                )
            })
            .collect())
    }

    fn failure(&self, _: &JobDir, id: &str) -> String {
        self.call(|py, s| s.call_method1(py, "failure", (id,))?.extract(py))
            .unwrap_or_else(|e| e.to_string())
    }

    fn knows(&self, id: &str) -> bool {
        self.call(|py, s| s.call_method1(py, "knows", (id,))?.extract(py))
            .unwrap_or(false)
    }

    fn abandon(&self, _: &JobDir, _failed: bool) {
        // Calls not started are cancelled; an error here changes nothing.
        let _ = self.call(|py, s| s.call_method0(py, "abandon").map(|_| ()));
    }
}

/// Screens shard `shard` of the job `job` (a `job.json`) on `threads`
/// threads, writing its part beside it; returns the part's path. What a
/// call submitted to the executor runs, in whatever process runs it.
#[pyfunction]
#[pyo3(signature = (job, shard, threads, indicators))]
pub fn shard_job(
    py: Python<'_>,
    job: PathBuf,
    shard: u64,
    threads: usize,
    indicators: &Bound<'_, PyAny>,
) -> Result<String, Failure> {
    let functions = crate::functions::Functions::from_py(indicators)?;
    let stop = &functions.state.stop;
    let outcome = crate::interruptible(py, stop, |stop| {
        run_shard(&job, shard, threads, &functions.list, Some(stop))
    });
    if let Some(e) = functions.state.take_failure() {
        return Err(e.into());
    }
    Ok(outcome??.display().to_string())
}
