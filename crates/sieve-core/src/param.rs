//! What a strategy parameter is: its name, kind, allowed range, default and
//! default grid. The grid and the strategies both read these; neither
//! depends on the other for them.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::format::short;

/// Whether a parameter takes whole numbers (lengths) or any real value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Int,
    Float,
}

/// One parameter of a strategy: its name, kind, allowed range, default value
/// and default grid (`start..=stop` by `step`). Built-ins name theirs with
/// `&'static str`; a rule strategy owns its names.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: Cow<'static, str>,
    pub kind: ParamKind,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub grid: (f64, f64, f64),
    pub doc: &'static str,
}

impl ParamSpec {
    /// Checks one value; the error names the parameter and the allowed range.
    pub fn check(&self, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(Error::param(
                self.name.as_ref(),
                format!("{} is not a finite number", short(value)),
            ));
        }
        if self.kind == ParamKind::Int && value.fract() != 0.0 {
            return Err(Error::param(
                self.name.as_ref(),
                format!("{} is not a whole number", short(value)),
            ));
        }
        if value < self.min || value > self.max {
            return Err(Error::param(
                self.name.as_ref(),
                format!(
                    "{} is outside the allowed range {}..={}",
                    short(value),
                    short(self.min),
                    short(self.max)
                ),
            ));
        }
        Ok(())
    }
}

/// Position of the parameter called `name` among `specs` (of the strategy
/// called `owner`, which the error names).
pub fn param_index(owner: &str, specs: &[ParamSpec], name: &str) -> Result<usize> {
    specs.iter().position(|p| p.name == name).ok_or_else(|| {
        let known: Vec<&str> = specs.iter().map(|p| p.name.as_ref()).collect();
        Error::param(
            name,
            format!(
                "'{owner}' has no such parameter; its parameters are {}",
                known.join(", ")
            ),
        )
    })
}

/// The default parameter values.
pub fn default_params(specs: &[ParamSpec]) -> Vec<f64> {
    specs.iter().map(|p| p.default).collect()
}

/// Checks a whole parameter set against `specs`.
pub fn check_params(owner: &str, specs: &[ParamSpec], params: &[f64]) -> Result<()> {
    if params.len() != specs.len() {
        return Err(Error::Invalid(format!(
            "'{owner}' takes {} parameters, got {}",
            specs.len(),
            params.len()
        )));
    }
    specs.iter().zip(params).try_for_each(|(s, &v)| s.check(v))
}
