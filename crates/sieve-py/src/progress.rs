//! `progress=` of the long calls: nothing, the CLI's bar on stderr, or a
//! Python reporter (`sieve/__init__.py` makes one from tqdm when it is
//! installed: its notebook bar in Jupyter), called with the GIL from the
//! worker, at most ten times a second.

use std::time::{Duration, Instant};

use pyo3::prelude::*;
use sieve_run::control::Observer;
use sieve_run::progress::Progress;
use sieve_run::rundir::Stage;

/// How often a Python reporter hears of progress, at most.
const EVERY: Duration = Duration::from_millis(100);

/// Where progress goes.
pub(crate) enum Shown {
    Nothing,
    /// The CLI's bar on stderr (a line every 5 s without a terminal).
    Stderr,
    /// A Python object with `start(label, unit, total)`, `update(done)`,
    /// `finish()` and `note(text)`.
    Python(Py<PyAny>),
}

impl Shown {
    /// From `progress=`: False / True, or a reporter object.
    pub(crate) fn from_py(progress: &Bound<'_, PyAny>) -> PyResult<Shown> {
        if progress.is_none() {
            return Ok(Shown::Nothing);
        }
        if let Ok(show) = progress.extract::<bool>() {
            return Ok(if show { Shown::Stderr } else { Shown::Nothing });
        }
        Ok(Shown::Python(progress.clone().unbind()))
    }

    pub(crate) fn reporter(&self) -> Reporter<'_> {
        Reporter {
            shown: self,
            bar: None,
            last: None,
            done: 0,
        }
    }
}

/// Progress of one call, to stderr or to Python.
pub(crate) struct Reporter<'a> {
    shown: &'a Shown,
    bar: Option<Progress>,
    /// When Python last heard of progress, and the latest count.
    last: Option<Instant>,
    done: u64,
}

impl Reporter<'_> {
    /// Calls the Python reporter's `method`; one that fails is printed and
    /// otherwise ignored (progress is never worth stopping a run for).
    fn call<A>(&self, method: &str, args: A)
    where
        A: for<'py> pyo3::call::PyCallArgs<'py> + Send,
    {
        if let Shown::Python(r) = self.shown {
            Python::attach(|py| {
                if let Err(e) = r.call_method1(py, method, args) {
                    e.print(py);
                }
            });
        }
    }

    /// A step starts: `total` units of `unit`.
    pub(crate) fn start_step(&mut self, label: &str, unit: &str, total: u64) {
        match self.shown {
            Shown::Nothing => {}
            Shown::Stderr => self.bar = Some(Progress::new(total, label, unit, true)),
            Shown::Python(_) => {
                (self.last, self.done) = (None, 0);
                self.call("start", (label.to_string(), unit.to_string(), total));
            }
        }
    }

    pub(crate) fn set(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set(done);
        }
        self.done = done;
        if matches!(self.shown, Shown::Python(_)) && self.last.is_none_or(|t| t.elapsed() >= EVERY)
        {
            self.last = Some(Instant::now());
            self.call("update", (done,));
        }
    }

    pub(crate) fn end_step(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
        // The last count (throttling may have held it back), then the end.
        self.call("update", (self.done,));
        self.call("finish", ());
    }
}

impl Observer for Reporter<'_> {
    fn start(&mut self, iteration: u32, stage: Stage, total: u64) {
        let unit = match stage {
            Stage::Sweep => "comb",
            _ => "cand",
        };
        self.start_step(&format!("{iteration}:{}", stage.name()), unit, total);
    }
    fn progress(&mut self, done: u64) {
        self.set(done);
    }
    fn finish(&mut self) {
        self.end_step();
    }
    fn note(&mut self, message: &str) {
        match self.shown {
            Shown::Nothing => {}
            Shown::Stderr => eprintln!("{message}"),
            Shown::Python(_) => self.call("note", (message.to_string(),)),
        }
    }
}
