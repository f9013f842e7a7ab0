//! `sieve._native`: the Rust side of the Python package. Every function
//! calls the same library code as the CLI (`sieve_run`, `sieve_core`); the
//! pure-Python `sieve/__init__.py` turns pandas objects into the plain
//! arguments these take and the results back into DataFrames.
//!
//! Long calls release the GIL and run on a worker thread while the calling
//! thread watches for Ctrl-C (`KeyboardInterrupt`), which stops the work at
//! the next chunk, checkpointed where the command checkpoints.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;
use sieve_core::config::Config;
use sieve_core::Error;
use sieve_run::Study;

mod frame;
mod jobs;

// Named as `sieve.X`, where users import them (and pickle finds them).
create_exception!(
    sieve,
    SieveError,
    PyValueError,
    "A problem with the input (data, config, parameters), with the CLI's message."
);
create_exception!(
    sieve,
    SieveWarning,
    PyUserWarning,
    "A setting that makes results unreliable (the CLI prints these as warnings)."
);

/// Any error of the library as a `SieveError` with the CLI's message.
pub(crate) fn sieve_err(e: impl std::fmt::Display) -> PyErr {
    SieveError::new_err(e.to_string())
}

/// How the config was given: ("path", file), ("toml", text), ("json",
/// text of a dict with the TOML's structure) or ("none", "").
pub(crate) struct ConfigSpec(pub String, pub String);

impl ConfigSpec {
    /// The checked config with `overrides` (`section.key=value`) applied.
    pub(crate) fn load(&self, overrides: &[String]) -> Result<Config, Error> {
        let ConfigSpec(kind, value) = self;
        let config = match kind.as_str() {
            "path" => Config::load(Some(PathBuf::from(value).as_path()), overrides)?,
            "toml" => Config::parse_with_overrides(value, overrides)?,
            "json" => {
                let json: serde_json::Value = serde_json::from_str(value)
                    .map_err(|e| Error::config("<config>", e.to_string()))?;
                let table = toml::Table::try_from(json)
                    .map_err(|e| Error::config("<config>", e.to_string()))?;
                Config::from_table_with_overrides(table, overrides)?
            }
            _ => Config::load(None, overrides)?,
        };
        // As every CLI command does: a typo in a run section is an error.
        sieve_run::settings::RunSettings::of(&config)?;
        Ok(config)
    }
}

/// Where the bars come from: a file (the CLI's `--data`), the config's own
/// `data.path` / `data.paths` (`None`), or a DataFrame's columns.
pub(crate) enum DataSpec {
    Path(Option<PathBuf>),
    Frame(frame::Frame),
}

impl DataSpec {
    /// A path (`str` or `os.PathLike`), else a frame's columns.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<DataSpec> {
        if obj.is_none() {
            return Ok(DataSpec::Path(None));
        }
        if let Ok(path) = obj.extract::<PathBuf>() {
            return Ok(DataSpec::Path(Some(path)));
        }
        Ok(DataSpec::Frame(frame::Frame::from_py(obj)?))
    }

    /// The `data.path` override a file becomes (absolute: relative to where
    /// Python runs, not to the config's folder), as `--data` does.
    pub(crate) fn overrides(&self) -> Vec<String> {
        match self {
            DataSpec::Path(None) => Vec::new(),
            DataSpec::Path(Some(p)) => {
                let p = std::path::absolute(p).unwrap_or_else(|_| p.clone());
                let quoted = toml::Value::String(p.to_string_lossy().into_owned()).to_string();
                vec![format!("data.path={quoted}")]
            }
            DataSpec::Frame(_) => Vec::new(),
        }
    }

    /// The checked study of `config` on these bars; warnings about the
    /// settings become `SieveWarning`s.
    pub(crate) fn study(&self, py: Python<'_>, mut config: Config) -> PyResult<Study> {
        // Reading and checking the data runs without the GIL.
        let study = py
            .detach(|| -> Result<Study, Error> {
                let (data, label) = match self {
                    DataSpec::Path(_) => {
                        let label = config.data.clone();
                        let data = sieve_run::inputs::load_data(&mut config, label.as_deref())?;
                        (data.instruments, data.label)
                    }
                    DataSpec::Frame(f) => {
                        let options = sieve_core::data::LoadOptions {
                            adjust: config.adjust,
                            columns: None,
                        };
                        let bars = f.bars(&options)?;
                        // The DataFrame is the data, whatever the config names.
                        config.data = None;
                        config.paths.clear();
                        (vec![(String::new(), bars)], "a DataFrame".to_string())
                    }
                };
                Study::of_instruments(config, data, label)
            })
            .map_err(sieve_err)?;
        for i in &study.market().instruments {
            for w in sieve_run::study::warnings(study.config(), &i.scoring) {
                let text = match study.market().is_several() {
                    true => format!("{}: {w}", i.name),
                    false => w,
                };
                let text = std::ffi::CString::new(text).unwrap_or_default();
                PyErr::warn(py, &py.get_type::<SieveWarning>(), &text, 2)?;
            }
        }
        Ok(study)
    }
}

/// Runs `job` on a worker thread with the GIL released, checking for
/// Ctrl-C on this thread every 50 ms; a signal sets the flag `job` watches
/// and, once `job` has stopped, is raised (`KeyboardInterrupt`).
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    job: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let stop = AtomicBool::new(false);
    let mut signal: Option<PyErr> = None;
    let joined = std::thread::scope(|scope| {
        let worker = scope.spawn(|| job(&stop));
        loop {
            let finished = py.detach(|| {
                for _ in 0..10 {
                    if worker.is_finished() {
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                worker.is_finished()
            });
            if finished {
                break;
            }
            if signal.is_none() {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    signal = Some(e);
                }
            }
        }
        worker.join()
    });
    let value = joined.map_err(|_| SieveError::new_err("internal error: the worker panicked"))?;
    match signal {
        Some(e) => Err(e),
        None => Ok(value),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SieveError", m.py().get_type::<SieveError>())?;
    m.add("SieveWarning", m.py().get_type::<SieveWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The names a time column may have (any case), as the loaders take them.
    m.add("TIME_NAMES", sieve_core::data::TIME_NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(jobs::backtest, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::verify, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::optimize, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::strategies, m)?)?;
    Ok(())
}
