//! Indicators written in Python (`indicators=` of `sieve.sweep` and the
//! rest): each is an external function of the rules, called with the GIL
//! once per distinct setting and instrument, its result kept for the call.
//!
//! A function that raises (or returns the wrong thing) is not retried: the
//! first failure is kept, every later call returns at once, and the job is
//! stopped through the same flag as Ctrl-C; the binding then raises that
//! failure instead of the job's result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use sieve_core::data::Bars;
use sieve_core::rules::{ExternalFunction, ExternalFunctions};

/// What every function of one call shares: the stop flag of the job and
/// the first failure.
#[derive(Default)]
pub(crate) struct CallState {
    pub(crate) stop: AtomicBool,
    failure: Mutex<Option<PyErr>>,
    /// Each instrument's bars as the DataFrame handed to the functions,
    /// by the bars' fingerprint.
    frames: Mutex<HashMap<u64, Py<PyAny>>>,
    /// Every function's results, within the job's series budget.
    results: Mutex<Results>,
}

/// The functions' results kept for the job (a setting asked for again —
/// by a later batch, the verification, the next iteration — is not
/// computed again while it is kept), oldest dropped first past `capacity`
/// bytes: `sweep.series_memory_mb`, as the screen's own series.
struct Results {
    values: HashMap<(usize, CacheKey), Vec<f64>>,
    order: std::collections::VecDeque<(usize, CacheKey)>,
    bytes: u64,
    capacity: u64,
}

impl Default for Results {
    fn default() -> Self {
        Results {
            values: HashMap::new(),
            order: Default::default(),
            bytes: 0,
            capacity: sieve_screen::SERIES_BUDGET,
        }
    }
}

impl Results {
    fn insert(&mut self, key: (usize, CacheKey), values: Vec<f64>) {
        let size = values.len() as u64 * 8;
        if size > self.capacity {
            return;
        }
        while self.bytes + size > self.capacity {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(v) = self.values.remove(&old) {
                self.bytes -= v.len() as u64 * 8;
            }
        }
        self.bytes += size;
        self.order.push_back(key.clone());
        self.values.insert(key, values);
    }
}

impl CallState {
    /// Keeps the functions' results within `bytes` (the study's
    /// `sweep.series_memory_mb`).
    pub(crate) fn limit_results(&self, bytes: u64) {
        if let Ok(mut r) = self.results.lock() {
            r.capacity = bytes;
        }
    }

    /// The first failure of a function, once (then it is gone).
    pub(crate) fn take_failure(&self) -> Option<PyErr> {
        self.failure.lock().ok().and_then(|mut f| f.take())
    }

    fn fail(&self, e: PyErr) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert(e);
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The functions of one call, and their shared state.
#[derive(Clone, Default)]
pub(crate) struct Functions {
    pub(crate) list: ExternalFunctions,
    pub(crate) state: Arc<CallState>,
}

impl Functions {
    /// From `sieve/__init__.py`'s `(functions, frame, values)`: each function
    /// as `(name, argument names, whole-number flags, callable)`, `frame`
    /// the helper that builds the DataFrame a function is given and
    /// `values` the one that checks what it returns.
    pub(crate) fn from_py(spec: &Bound<'_, PyAny>) -> PyResult<Functions> {
        let state = Arc::new(CallState::default());
        if spec.is_none() {
            return Ok(Functions {
                list: ExternalFunctions::default(),
                state,
            });
        }
        let (list, frame, values): (Bound<'_, PyList>, Py<PyAny>, Py<PyAny>) = spec.extract()?;
        let helpers = Arc::new(Helpers { frame, values });
        let mut out = Vec::new();
        for item in list.iter() {
            let (name, args, whole, func): (String, Vec<String>, Vec<bool>, Py<PyAny>) =
                item.extract()?;
            if sieve_core::rules::reserved(&name) {
                return Err(crate::ConfigError::new_err(format!(
                    "indicators: '{name}' is a word or function of the rule language; give yours another name"
                )));
            }
            // The look-ahead check around the function (`_Watched`) makes
            // calls of its own: it asks this job's stop between them.
            if func.bind(spec.py()).hasattr("stopping")? {
                func.bind(spec.py()).setattr(
                    "stopping",
                    Stopping {
                        state: state.clone(),
                    },
                )?;
            }
            let f: Arc<dyn ExternalFunction> = Arc::new(PyIndicator {
                name,
                args,
                whole,
                func,
                helpers: helpers.clone(),
                state: state.clone(),
                id: out.len(),
                calling: Mutex::new(()),
            });
            out.push(f);
        }
        Ok(Functions {
            list: ExternalFunctions(out),
            state,
        })
    }
}

/// Whether a job is stopping (Ctrl-C, or a function failed), as Python
/// asks it: `stopping()`.
#[pyclass(frozen)]
struct Stopping {
    state: Arc<CallState>,
}

#[pymethods]
impl Stopping {
    fn __call__(&self) -> bool {
        self.state.stop.load(Ordering::Relaxed)
    }
}

/// The Python helpers of `sieve/__init__.py`.
struct Helpers {
    /// `frame(times_ms, open, high, low, close, volume, extras, tz)`.
    frame: Py<PyAny>,
    /// `values(result, index, what)`: a float64 numpy array, one value per
    /// bar of `index`, or an exception saying what is wrong.
    values: Py<PyAny>,
}

/// A result's key: the bars' fingerprint and the settings' bits.
/// (The bars' fingerprint, the settings' bits.)
type CacheKey = (u64, Vec<u64>);

struct PyIndicator {
    name: String,
    args: Vec<String>,
    /// Arguments declared whole numbers (passed as `int`).
    whole: Vec<bool>,
    func: Py<PyAny>,
    helpers: Arc<Helpers>,
    state: Arc<CallState>,
    /// Its place among the functions (the key of its results).
    id: usize,
    /// Held across a call, so that two threads asking for the same
    /// setting call the function once (taken before the GIL, always).
    calling: Mutex<()>,
}

impl PyIndicator {
    /// `name(n=10, mult=3.0)`, for messages.
    fn call_text(&self, settings: &[f64]) -> String {
        let args: Vec<String> = self
            .args
            .iter()
            .zip(settings)
            .map(|(a, v)| format!("{a}={}", sieve_core::format::float(*v)))
            .collect();
        format!("{}({})", self.name, args.join(", "))
    }

    fn call(&self, py: Python<'_>, bars: &Bars, key: u64, settings: &[f64]) -> PyResult<Vec<f64>> {
        let what = self.call_text(settings);
        let kwargs = PyDict::new(py);
        for ((name, &v), &whole) in self.args.iter().zip(settings).zip(&self.whole) {
            if whole {
                if !(v.is_finite() && v.fract() == 0.0) {
                    return Err(crate::ParameterError::new_err(format!(
                        "{what}: {name} is declared a whole number, got {}",
                        sieve_core::format::float(v)
                    )));
                }
                kwargs.set_item(name, v as i64)?;
            } else {
                kwargs.set_item(name, v)?;
            }
        }
        // A copy each call: a function that changes its frame changes no
        // other call's.
        let bars_frame = self.frame(py, bars, key)?;
        let index = bars_frame.getattr(py, "index")?;
        let frame = bars_frame.call_method0(py, "copy")?;
        let result = {
            // Marked for the call: sieve's own functions refuse to run
            // from inside it (each would start its own pool, without end).
            let _inside = InCallback::enter();
            self.func.call(py, (frame,), Some(&kwargs))
        }
        .map_err(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                return e;
            }
            let err = crate::SieveError::new_err(format!("indicator {what} raised {e}"));
            err.set_cause(py, Some(e));
            err
        })?;
        let values = self.helpers.values.call1(py, (result, index, what))?;
        crate::frame::numpy_vec::<f64>(values.bind(py))
    }

    /// The DataFrame of `bars`, built once per call.
    fn frame(&self, py: Python<'_>, bars: &Bars, key: u64) -> PyResult<Py<PyAny>> {
        if let Some(f) = self
            .state
            .frames
            .lock()
            .ok()
            .and_then(|m| m.get(&key).map(|f| f.clone_ref(py)))
        {
            return Ok(f);
        }
        let extras: Vec<(String, Vec<f64>)> = bars
            .extra
            .iter()
            .map(|c| (c.name.clone(), c.values.clone()))
            .collect();
        let tz = bars.timezone.map(|t| t.name().to_string());
        let frame = self.helpers.frame.call1(
            py,
            (
                bars.time.clone(),
                bars.open.clone(),
                bars.high.clone(),
                bars.low.clone(),
                bars.close.clone(),
                bars.volume.clone(),
                extras,
                tz,
            ),
        )?;
        if let Ok(mut m) = self.state.frames.lock() {
            m.insert(key, frame.clone_ref(py));
        }
        Ok(frame)
    }
}

/// The bars' identity within a call: every value a function is given
/// (times, prices, volume, the other columns), hashed.
fn fingerprint(bars: &Bars) -> u64 {
    let fold = |h: u64, x: u64| (h ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    let floats = |h: u64, xs: &[f64]| {
        xs.iter()
            .fold(fold(h, xs.len() as u64), |h, x| fold(h, x.to_bits()))
    };
    let mut h = bars
        .time
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &t| fold(h, t as u64));
    for xs in [&bars.open, &bars.high, &bars.low, &bars.close] {
        h = floats(h, xs);
    }
    h = floats(h, bars.volume.as_deref().unwrap_or_default());
    for c in &bars.extra {
        h = c.name.bytes().fold(h, |h, b| fold(h, u64::from(b)));
        h = floats(h, &c.values);
    }
    h
}

impl ExternalFunction for PyIndicator {
    fn name(&self) -> &str {
        &self.name
    }

    fn arg_names(&self) -> &[String] {
        &self.args
    }

    fn whole_args(&self) -> &[bool] {
        &self.whole
    }

    fn series(&self, bars: &Bars, settings: &[f64]) -> Vec<f64> {
        let nan = || vec![f64::NAN; bars.len()];
        if self.state.stop.load(Ordering::Relaxed) {
            return nan();
        }
        let key = fingerprint(bars);
        let cached = (
            key,
            settings.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
        );
        let _calling = self.calling.lock();
        let cached = (self.id, cached);
        let kept = self.state.results.lock().ok();
        if let Some(v) = kept.and_then(|r| r.values.get(&cached).cloned()) {
            return v;
        }
        if self.state.stop.load(Ordering::Relaxed) {
            return nan();
        }
        match Python::attach(|py| self.call(py, bars, key, settings)) {
            Ok(values) => {
                if let Ok(mut r) = self.state.results.lock() {
                    r.insert(cached, values.clone());
                }
                values
            }
            Err(e) => {
                self.state.fail(e);
                nan()
            }
        }
    }
}

thread_local! {
    /// Whether this thread is running an indicator written in Python.
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread as inside an indicator callback while it lives.
struct InCallback(bool);

impl InCallback {
    fn enter() -> InCallback {
        InCallback(IN_CALLBACK.with(|c| c.replace(true)))
    }
}

impl Drop for InCallback {
    fn drop(&mut self) {
        let before = self.0;
        IN_CALLBACK.with(|c| c.set(before));
    }
}

/// An error when called from inside an indicator written in Python: a
/// job started there would run inside the job that called the indicator,
/// and one that calls itself would recurse without end.
pub(crate) fn not_in_a_callback(function: &str) -> PyResult<()> {
    if IN_CALLBACK.with(|c| c.get()) {
        return Err(crate::SieveError::new_err(format!(
            "sieve.{function} was called from inside an indicator function (indicators=): an indicator returns its values from the data it is given; run sieve's jobs outside it"
        )));
    }
    Ok(())
}
