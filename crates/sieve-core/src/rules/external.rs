//! Functions of the bars defined outside sieve (a Python function, through
//! the bindings), that rules call by name with numbers: `st(n, 3)`. Each
//! distinct setting is one shared column, computed once per run like a
//! built-in windowed function's.

use std::fmt;
use std::sync::Arc;

use crate::data::Bars;

/// A function of the bars at numeric settings.
pub trait ExternalFunction: Send + Sync {
    /// The name rules call it by.
    fn name(&self) -> &str;
    /// Its arguments' names, in order (for messages and `--describe`).
    fn arg_names(&self) -> &[String];
    /// Which arguments are whole numbers (as a window is: a parameter read
    /// there is whole-numbered, and the optimize loop keeps it so); none
    /// by default.
    fn whole_args(&self) -> &[bool] {
        &[]
    }
    /// Its series at `settings` (one value per argument): one value per
    /// bar, NaN where undefined. A function that fails returns NaN
    /// throughout and reports the failure its own way (the bindings stop
    /// the run and raise it).
    fn series(&self, bars: &Bars, settings: &[f64]) -> Vec<f64>;
}

/// The external functions rules may call, in the order given.
#[derive(Clone, Default)]
pub struct ExternalFunctions(pub Vec<Arc<dyn ExternalFunction>>);

impl ExternalFunctions {
    /// The function called `name`, with its index.
    pub fn named(&self, name: &str) -> Option<(usize, &dyn ExternalFunction)> {
        self.0
            .iter()
            .enumerate()
            .find(|(_, f)| f.name() == name)
            .map(|(i, f)| (i, f.as_ref()))
    }

    pub fn get(&self, k: usize) -> Option<&dyn ExternalFunction> {
        self.0.get(k).map(|f| f.as_ref())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `name(a, b)` of each, for messages.
    pub fn signatures(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|f| format!("{}({})", f.name(), f.arg_names().join(", ")))
            .collect()
    }
}

impl fmt::Debug for ExternalFunctions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.signatures()).finish()
    }
}

/// The same functions (the same objects, in the same order).
impl PartialEq for ExternalFunctions {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|(a, b)| std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)))
    }
}
