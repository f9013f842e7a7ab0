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
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use sieve_core::config::Config;
use sieve_core::data::Bars;
use sieve_core::{Error, ErrorKind};
use sieve_run::settings::Checked;
use sieve_run::Study;

/// mimalloc keeps freed memory for the next call instead of handing it
/// back to the system at once: a call on a million bars then writes into
/// pages already mapped, not ~12,000 fresh ones (each a page fault).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod frame;
mod functions;
mod jobs;
mod progress;
mod records;
mod shards;

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

create_exception!(
    sieve,
    ConfigError,
    SieveError,
    "A config key or value (`config: key: message`)."
);
create_exception!(
    sieve,
    RuleError,
    ConfigError,
    "A rule or definition that does not parse or check, with its column."
);
create_exception!(
    sieve,
    DataError,
    SieveError,
    "Data that cannot be used: a file's row or column, or a DataFrame's."
);
create_exception!(
    sieve,
    ParameterError,
    SieveError,
    "A parameter value the strategy cannot take."
);
create_exception!(
    sieve,
    FileError,
    SieveError,
    "A file that cannot be read or written (the message names it)."
);
create_exception!(
    sieve,
    GpuError,
    SieveError,
    "The GPU backend: no adapter, no GPU build, or a device failure."
);

/// A failure on its way to Python: the library's error (raised as the
/// `SieveError` subclass of its kind, with the CLI's message) or Python's
/// own. Functions that return `Result<_, Failure>` use `?` on both; PyO3
/// raises it through `From<Failure> for PyErr`.
pub(crate) enum Failure {
    Sieve(Error),
    Python(PyErr),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Sieve(e)
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Python(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        let e = match f {
            Failure::Python(e) => return e,
            Failure::Sieve(e) => e,
        };
        let message = e.to_string();
        match e.kind() {
            ErrorKind::Config => ConfigError::new_err(message),
            ErrorKind::Rule => RuleError::new_err(message),
            ErrorKind::Data => DataError::new_err(message),
            ErrorKind::Parameter => ParameterError::new_err(message),
            ErrorKind::Io => FileError::new_err(message),
            ErrorKind::Gpu => GpuError::new_err(message),
            ErrorKind::Cancelled | ErrorKind::Invalid => SieveError::new_err(message),
        }
    }
}

/// How the config was given: a file, TOML text, a dict (as a TOML table,
/// read straight from the Python objects), or none.
pub(crate) enum ConfigSource {
    None,
    Path(PathBuf),
    Toml(String),
    Table(toml::Table),
}

/// The config argument: its source and the indicators written in Python
/// that its rules may call.
pub(crate) struct ConfigSpec {
    pub(crate) source: ConfigSource,
    pub(crate) functions: functions::Functions,
}

/// `sieve/__init__.py`'s config argument: `(kind, value, indicators)`.
pub(crate) type ConfigArg<'py> = (String, Bound<'py, PyAny>, Bound<'py, PyAny>);

impl ConfigSpec {
    /// From `sieve/__init__.py`'s `(kind, value, indicators)`: `("path",
    /// str)`, `("toml", str)`, `("dict", dict)` or `("none", _)`, and the
    /// indicators (`None`, or see [`functions::Functions::from_py`]).
    pub(crate) fn from_py(config: &ConfigArg<'_>) -> PyResult<ConfigSpec> {
        let (kind, value, indicators) = config;
        let source = match kind.as_str() {
            "path" => ConfigSource::Path(value.extract()?),
            "toml" => ConfigSource::Toml(value.extract()?),
            "dict" => match to_toml(value, "")? {
                toml::Value::Table(t) => ConfigSource::Table(t),
                _ => return Err(ConfigError::new_err("config: expected a dict")),
            },
            _ => ConfigSource::None,
        };
        Ok(ConfigSpec {
            source,
            functions: functions::Functions::from_py(indicators)?,
        })
    }

    /// The checked config with `overrides` (`section.key=value`) applied.
    pub(crate) fn load(&self, overrides: &[String]) -> Result<Checked, Error> {
        let f = &self.functions.list;
        let config = match &self.source {
            ConfigSource::Path(path) => Config::load_with(Some(path.as_path()), overrides, f)?,
            ConfigSource::Toml(text) => Config::parse_with(text, overrides, f)?,
            ConfigSource::Table(table) => Config::from_table_with(table.clone(), overrides, f)?,
            ConfigSource::None => Config::load_with(None, overrides, f)?,
        };
        // As every CLI command does: the run sections read once (a typo in
        // one is an error).
        Checked::new(config)
    }

    /// Keeps the indicators' results of the job within the study's
    /// series budget.
    pub(crate) fn fit(&self, study: &Study) {
        self.functions
            .state
            .limit_results(study.settings().series_budget);
    }

    /// The job's stop flag: Ctrl-C sets it, and so does an indicator that
    /// fails.
    pub(crate) fn stop(&self) -> &AtomicBool {
        &self.functions.state.stop
    }

    /// `result`, unless an indicator failed during the job: then that
    /// failure (a `SieveError` naming the indicator and its setting, or the
    /// `KeyboardInterrupt` it raised).
    pub(crate) fn checked<T>(&self, result: PyResult<T>) -> PyResult<T> {
        match self.functions.state.take_failure() {
            Some(e) => Err(e),
            None => result,
        }
    }
}

/// A config value (plain Python: `sieve/__init__.py` has turned numpy
/// scalars and other mappings into these) as TOML; errors name the key.
fn to_toml(value: &Bound<'_, PyAny>, key: &str) -> PyResult<toml::Value> {
    let at = |k: &str| match key {
        "" => k.to_string(),
        _ => format!("{key}.{k}"),
    };
    // `bool` before `int`: Python's booleans are ints.
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return value
            .extract::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| {
                ConfigError::new_err(format!(
                    "config: {key}: {value} does not fit a 64-bit integer"
                ))
            });
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(value.extract()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut table = toml::Table::new();
        for (k, v) in dict.iter() {
            let k: String = k.str()?.extract()?;
            let v = to_toml(&v, &at(&k))?;
            table.insert(k, v);
        }
        return Ok(toml::Value::Table(table));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .map(|item| to_toml(&item?, key))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(toml::Value::Array(items));
    }
    Err(ConfigError::new_err(format!(
        "config: {key}: {} is not a value a config can hold (a number, string, bool, list or table)",
        value.repr()?
    )))
}

/// Where the bars come from: a file (the CLI's `--data`), the config's own
/// The bars of each instrument, where they came from (for messages) and
/// what the loader noticed in them.
pub(crate) struct Instruments {
    pub data: Vec<(String, Bars)>,
    pub label: String,
    pub notices: Vec<String>,
}

/// The bars of a call: where the traded instruments' come from, and the
/// informative instruments given beside them (`informative=`; none: the
/// config's `data.informative`).
pub(crate) struct DataSpec {
    pub source: Source,
    pub informative: Vec<(String, Source)>,
}

/// `data.path` / `data.paths` (`None`), or a DataFrame's columns.
pub(crate) enum Source {
    Path(Option<PathBuf>),
    /// Several instruments' files (a list of paths: `data.paths`).
    Paths(Vec<PathBuf>),
    Frame(frame::Frame),
    /// Several instruments, by name, in order (a dict of DataFrames).
    Frames(Vec<(String, frame::Frame)>),
}

impl DataSpec {
    /// The data argument, or `(data, {name: informative})`.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<DataSpec> {
        if let Ok(pair) = obj.cast::<pyo3::types::PyTuple>() {
            if pair.len() == 2 {
                let source = Source::from_py(&pair.get_item(0)?)?;
                let mut informative = Vec::new();
                let named = pair.get_item(1)?;
                for (name, data) in named.cast::<pyo3::types::PyDict>()?.iter() {
                    informative.push((name.extract::<String>()?, Source::from_py(&data)?));
                }
                return Ok(DataSpec {
                    source,
                    informative,
                });
            }
        }
        Ok(DataSpec {
            source: Source::from_py(obj)?,
            informative: Vec::new(),
        })
    }

    /// No data given: the config's (or the built-in example).
    pub(crate) fn is_none(&self) -> bool {
        matches!(self.source, Source::Path(None))
    }

    /// The `data.path` override a file becomes (see [`Source::overrides`]).
    pub(crate) fn overrides(&self) -> Vec<String> {
        self.source.overrides()
    }
}

impl Source {
    /// A path (`str` or `os.PathLike`), else a frame's columns.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
        if obj.is_none() {
            return Ok(Source::Path(None));
        }
        if let Ok(path) = obj.extract::<PathBuf>() {
            return Ok(Source::Path(Some(path)));
        }
        // A list of paths (a DataFrame's columns come as a list of tuples).
        if let Ok(paths) = obj.extract::<Vec<PathBuf>>() {
            return Ok(Source::Paths(paths));
        }
        if let Ok(frames) = obj.cast::<pyo3::types::PyDict>() {
            let mut out = Vec::new();
            for (name, columns) in frames.iter() {
                out.push((name.extract::<String>()?, frame::Frame::from_py(&columns)?));
            }
            return Ok(Source::Frames(out));
        }
        Ok(Source::Frame(frame::Frame::from_py(obj)?))
    }

    /// The `data.path` override a file becomes (absolute: relative to where
    /// Python runs, not to the config's folder), as `--data` does.
    pub(crate) fn overrides(&self) -> Vec<String> {
        match self {
            Source::Path(None) => Vec::new(),
            Source::Path(Some(p)) => vec![format!("data.path={}", absolute(p))],
            // Replaces the config's data.path or data.paths (and names).
            Source::Paths(paths) => {
                let list: Vec<String> = paths.iter().map(|p| absolute(p)).collect();
                vec![format!("data.paths=[{}]", list.join(", "))]
            }
            Source::Frame(_) | Source::Frames(_) => Vec::new(),
        }
    }
}

impl DataSpec {
    /// The checked study of `config` on these bars; warnings about the
    /// settings become `SieveWarning`s.
    pub(crate) fn study(&self, py: Python<'_>, config: Checked) -> Result<Study, Failure> {
        let (study, notices) = self.study_noticed(py, config)?;
        // What the loader noticed, as the CLI prints it (less its "note: ").
        let notices = notices
            .into_iter()
            .map(|n| n.strip_prefix("note: ").map(str::to_string).unwrap_or(n));
        for w in notices.chain(sieve_run::study::study_warnings(&study)) {
            let text = std::ffi::CString::new(w).unwrap_or_default();
            PyErr::warn(py, &py.get_type::<SieveWarning>(), &text, 2)?;
        }
        Ok(study)
    }

    /// The study without its warnings about scoring (a portfolio call
    /// scores nothing per instrument); the loader's notices still warn.
    pub(crate) fn study_unscored(&self, py: Python<'_>, config: Checked) -> Result<Study, Failure> {
        let (study, notices) = self.study_noticed(py, config)?;
        for w in notices {
            let w = w.strip_prefix("note: ").map(str::to_string).unwrap_or(w);
            let text = std::ffi::CString::new(w).unwrap_or_default();
            PyErr::warn(py, &py.get_type::<SieveWarning>(), &text, 2)?;
        }
        Ok(study)
    }

    /// The study, and what the loader noticed in the data.
    fn study_noticed(
        &self,
        py: Python<'_>,
        mut config: Checked,
    ) -> Result<(Study, Vec<String>), Failure> {
        // A DataFrame's columns are read in place (Arrow views of numpy's
        // memory), so its bars are copied out with the GIL held: no Python
        // thread can resize or free an array meanwhile. Files are read, and
        // the study built, without it.
        let frames = matches!(self.source, Source::Frame(_) | Source::Frames(_))
            || (self.informative.iter()).any(|(_, s)| matches!(s, Source::Frame(_)));
        let i = match frames {
            true => self.instruments(&mut config.config, false)?,
            false => py.detach(|| self.instruments(&mut config.config, false))?,
        };
        py.detach(|| -> Result<_, Error> {
            Ok((Study::of_checked(config, i.data, i.label)?, i.notices))
        })
        .map_err(Failure::from)
    }

    /// The instruments' bars and where they came from; the config's data
    /// keys are cleared when the data is DataFrames. The other columns
    /// are those the config's rules read, or every one with `all_columns`.
    pub(crate) fn instruments(
        &self,
        config: &mut Config,
        all_columns: bool,
    ) -> Result<Instruments, Error> {
        let given = !self.informative.is_empty();
        if given {
            // `informative=` replaces the config's data.informative.
            config.informative.clear();
        }
        let mut i = self.traded(config, all_columns)?;
        let frames = matches!(self.source, Source::Frame(_) | Source::Frames(_));
        let informative = match (given, frames) {
            (true, _) => self.informative_bars(config.adjust)?,
            // A file's loader read the config's data.informative already.
            (false, true) if !config.informative.is_empty() => {
                sieve_run::inputs::load_informative(config, &config.load_options())?
            }
            _ => return Ok(i),
        };
        sieve_run::inputs::give_informative(&mut i.data, &informative);
        Ok(i)
    }

    /// `informative=`'s instruments: files read whole, DataFrames' columns.
    fn informative_bars(&self, adjust: bool) -> Result<Vec<sieve_core::data::Informative>, Error> {
        let options = sieve_core::data::LoadOptions {
            adjust,
            ..Default::default()
        };
        let mut out = Vec::new();
        for (name, source) in &self.informative {
            if !sieve_core::rules::is_name(name) {
                return Err(Error::config(
                    "informative",
                    format!("'{name}' cannot name an informative instrument: letters, digits and _, not starting with a digit"),
                ));
            }
            let bars = match source {
                Source::Path(Some(path)) if !path.is_file() => {
                    return Err(Error::Invalid(format!(
                        "informative['{name}']: {}: no such file",
                        path.display()
                    )))
                }
                Source::Path(Some(path)) => sieve_core::data::load(path, &options)?.bars,
                Source::Frame(f) => {
                    f.bars(&options)
                        .map_err(|e| of_frame(&format!("informative['{name}']"), e))?
                        .0
                }
                _ => {
                    return Err(Error::Invalid(format!(
                        "informative['{name}']: expected a DataFrame or a path"
                    )))
                }
            };
            out.push(sieve_core::data::Informative {
                name: name.clone(),
                bars: std::sync::Arc::new(bars),
            });
        }
        Ok(out)
    }

    /// The traded instruments' bars of [`DataSpec::instruments`].
    fn traded(&self, config: &mut Config, all_columns: bool) -> Result<Instruments, Error> {
        let options = sieve_core::data::LoadOptions {
            extra: (!all_columns)
                .then(|| config.load_options().extra)
                .flatten(),
            ..config.load_options()
        };
        Ok(match &self.source {
            Source::Path(_) | Source::Paths(_) => {
                let label = config.data.clone();
                let data = sieve_run::inputs::load_data_with(config, label.as_deref(), &options)?;
                Instruments {
                    data: data.instruments,
                    label: data.label,
                    notices: data.notices,
                }
            }
            Source::Frame(f) => {
                // A DataFrame names its own columns.
                let options = sieve_core::data::LoadOptions {
                    columns: None,
                    ..options.clone()
                };
                let (mut bars, mut notices) = f.bars(&options)?;
                // data.detail (a file) goes under the DataFrame's bars.
                notices.extend(sieve_run::inputs::attach_detail(
                    config, &mut bars, &options,
                )?);
                // The DataFrame is the data, whatever the config names.
                config.data = None;
                config.paths.clear();
                Instruments {
                    data: vec![(String::new(), bars)],
                    label: "a DataFrame".to_string(),
                    notices,
                }
            }
            Source::Frames(frames) => {
                // A DataFrame names its own columns.
                let options = sieve_core::data::LoadOptions {
                    columns: None,
                    ..options.clone()
                };
                let (mut data, mut notices) = (Vec::new(), Vec::new());
                for (name, f) in frames {
                    if !sieve_core::market::is_instrument_name(name) {
                        return Err(Error::Invalid(format!(
                            "data: '{name}' cannot name an instrument: letters, digits, _ - and ., starting with a letter or digit"
                        )));
                    }
                    let (bars, noticed) = f
                        .bars(&options)
                        .map_err(|e| of_frame(&format!("data['{name}']"), e))?;
                    data.push((name.clone(), bars));
                    notices.extend(noticed.into_iter().map(|n| format!("data['{name}']: {n}")));
                }
                if config.detail.is_some() {
                    return Err(Error::config(
                        sieve_core::key::DATA_DETAIL,
                        "detail bars go under one instrument's bars; with a dict of DataFrames it is not supported yet",
                    ));
                }
                config.data = None;
                config.paths.clear();
                let label = format!(
                    "{} DataFrames ({})",
                    data.len(),
                    frames
                        .iter()
                        .map(|f| f.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                Instruments {
                    data,
                    label,
                    notices,
                }
            }
        })
    }
}

/// A DataFrame's error, said of the argument that named it (`what`:
/// `data['a']`, `informative['btc']`).
fn of_frame(what: &str, e: Error) -> Error {
    match e {
        Error::Data { message, .. } | Error::Invalid(message) => {
            Error::Invalid(format!("{what}: {message}"))
        }
        e => e,
    }
}

/// `p` made absolute (relative to where Python runs, not to the config's
/// folder, as `--data` does), as a TOML string.
fn absolute(p: &std::path::Path) -> String {
    let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    toml::Value::String(p.to_string_lossy().into_owned()).to_string()
}

/// Runs `job` on a worker thread with the GIL released, checking for
/// Ctrl-C on this thread every 50 ms; a signal sets the flag `job` watches
/// and, once `job` has stopped, is raised (`KeyboardInterrupt`).
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    job: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let mut signal: Option<PyErr> = None;
    // The worker says when it is done (also when it panics: the guard
    // says so as it unwinds), so a short job returns at once rather
    // than on the next tick.
    let done = (std::sync::Mutex::new(false), std::sync::Condvar::new());
    struct Finished<'a>(&'a (std::sync::Mutex<bool>, std::sync::Condvar));
    impl Drop for Finished<'_> {
        fn drop(&mut self) {
            if let Ok(mut d) = self.0 .0.lock() {
                *d = true;
            }
            self.0 .1.notify_all();
        }
    }
    let joined = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _finished = Finished(&done);
            job(stop)
        });
        loop {
            let finished = py.detach(|| {
                let Ok(d) = done.0.lock() else { return true };
                match done
                    .1
                    .wait_timeout_while(d, Duration::from_millis(50), |d| !*d)
                {
                    Ok((d, _)) => *d,
                    Err(_) => true,
                }
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
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("RuleError", m.py().get_type::<RuleError>())?;
    m.add("DataError", m.py().get_type::<DataError>())?;
    m.add("ParameterError", m.py().get_type::<ParameterError>())?;
    m.add("FileError", m.py().get_type::<FileError>())?;
    m.add("GpuError", m.py().get_type::<GpuError>())?;
    m.add("SieveWarning", m.py().get_type::<SieveWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The names a time column may have (any case), as the loaders take them.
    m.add("TIME_NAMES", sieve_core::data::TIME_NAMES.to_vec())?;
    // The trade-management keys, in the table's order (`rules::KEYS`).
    let keys: Vec<&str> = sieve_core::rules::KEYS.iter().map(|k| k.name).collect();
    m.add("TRADE_KEYS", keys)?;
    // More worker threads than this is refused (sieve_screen's pool).
    m.add("MAX_THREADS", sieve_screen::MAX_THREADS)?;
    m.add_function(wrap_pyfunction!(jobs::backtest, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::backtest_signals, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::portfolio_signals, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::portfolio_weights, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::indicator, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::verify, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::optimize, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::walkforward, m)?)?;
    m.add_function(wrap_pyfunction!(jobs::strategies, m)?)?;
    m.add_function(wrap_pyfunction!(shards::shard_job, m)?)?;
    Ok(())
}
