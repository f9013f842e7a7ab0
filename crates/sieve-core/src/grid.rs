//! The parameter grid: axes of values, enumerated as a cartesian
//! product with the first-declared parameter varying slowest. A combination's
//! grid index is its position in that order; constraints remove combinations
//! without renumbering the rest. Index → parameters is O(dimensions), and the
//! grid is never materialised.

use std::fmt;

use crate::error::{Error, Result};
use crate::key;
use crate::param::{param_index, ParamKind, ParamSpec};

/// A position in the full (unconstrained) enumeration.
pub type GridIndex = u64;

/// The most values one axis may have: each is held in memory (8 bytes, and
/// a sorted copy while the axis is checked), and a grid finer than this on
/// one parameter is a typo more often than a plan.
pub const MAX_AXIS_VALUES: u64 = 1_000_000;

/// Values are rounded to this many significant digits, so 0.1-steps print
/// and compare as the decimals the user wrote.
const SIGNIFICANT_DIGITS: usize = 12;

/// One swept parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Index of the parameter in the strategy's `params()`.
    pub param: usize,
    pub name: String,
    pub values: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    Param(usize),
    Number(f64),
}

/// `lhs op rhs` between parameters and numbers, e.g. `fast < slow`.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub text: String,
    lhs: Operand,
    op: Cmp,
    rhs: Operand,
}

impl Constraint {
    /// Parses `text` over the parameters `specs` of the strategy `owner`.
    pub fn parse(text: &str, owner: &str, specs: &[ParamSpec]) -> Result<Constraint> {
        const OPS: [(&str, Cmp); 6] = [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ];
        let key = key::STRATEGY_CONSTRAINTS;
        let (pos, sym, op) = OPS
            .iter()
            .find_map(|&(sym, op)| text.find(sym).map(|p| (p, sym, op)))
            .ok_or_else(|| {
                Error::config(
                    key,
                    format!("\"{text}\" has no comparison (<, <=, >, >=, ==, !=)"),
                )
            })?;
        let operand = |s: &str| -> Result<Operand> {
            let s = s.trim();
            if let Ok(v) = s.parse::<f64>() {
                return Ok(Operand::Number(v));
            }
            param_index(owner, specs, s)
                .map(Operand::Param)
                .map_err(|_| {
                    let names: Vec<&str> = specs.iter().map(|p| p.name.as_ref()).collect();
                    Error::config(
                        key,
                        format!(
                            "\"{text}\": '{s}' is neither a number nor a parameter of {owner} ({})",
                            names.join(", ")
                        ),
                    )
                })
        };
        Ok(Constraint {
            text: text.trim().to_string(),
            lhs: operand(&text[..pos])?,
            op,
            rhs: operand(&text[pos + sym.len()..])?,
        })
    }

    /// The parameters (strategy indices) the constraint compares.
    pub fn params(&self) -> Vec<usize> {
        [self.lhs, self.rhs]
            .into_iter()
            .filter_map(|o| match o {
                Operand::Param(i) => Some(i),
                Operand::Number(_) => None,
            })
            .collect()
    }

    #[inline]
    pub fn holds(&self, params: &[f64]) -> bool {
        let get = |o: Operand| match o {
            Operand::Param(i) => params[i],
            Operand::Number(v) => v,
        };
        let (a, b) = (get(self.lhs), get(self.rhs));
        match self.op {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }
}

/// The grid of one strategy: swept axes (in declaration order) plus fixed
/// values for every other parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpace {
    pub axes: Vec<Axis>,
    pub constraints: Vec<Constraint>,
    /// Every parameter's value when not swept (the strategy's defaults).
    base: Vec<f64>,
    /// Combinations per step of each axis (row-major, last axis fastest).
    strides: Vec<u64>,
    size: u64,
}

impl ParamSpace {
    /// Builds a space from axes; errors if the product exceeds 2⁶⁴ − 1.
    pub fn new(specs: &[ParamSpec], axes: Vec<Axis>, constraints: Vec<Constraint>) -> Result<Self> {
        let mut strides = vec![0u64; axes.len()];
        let mut size: u64 = 1;
        for (i, axis) in axes.iter().enumerate().rev() {
            strides[i] = size;
            size = size.checked_mul(axis.values.len() as u64).ok_or_else(|| {
                Error::config(
                    key::STRATEGY_PARAMS,
                    "the grid has more than 2^64 combinations; narrow the ranges or use larger steps",
                )
            })?;
        }
        Ok(ParamSpace {
            axes,
            constraints,
            base: crate::param::default_params(specs),
            strides,
            size,
        })
    }

    /// From the swept axes (`None`: each parameter's default grid) and
    /// constraints (`None`: `default_constraints`), for the parameters
    /// `specs` of the strategy `owner`.
    pub fn build(
        owner: &str,
        specs: &[ParamSpec],
        axes: Option<Vec<Axis>>,
        constraints: Option<&[String]>,
        default_constraints: &[&str],
    ) -> Result<Self> {
        let axes = match axes {
            Some(axes) => axes,
            None => specs
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let (start, stop, step) = p.grid;
                    Ok(Axis {
                        param: i,
                        name: p.name.to_string(),
                        values: range_values(&p.name, start, stop, step)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
        };
        let parse = |c: &str| Constraint::parse(c, owner, specs);
        let constraints = match constraints {
            Some(list) => list.iter().map(|c| parse(c)).collect::<Result<Vec<_>>>()?,
            None => default_constraints
                .iter()
                .map(|c| parse(c))
                .collect::<Result<Vec<_>>>()?,
        };
        ParamSpace::new(specs, axes, constraints)
    }

    /// Grid indices run over `0..size()` (constraints excluded or not).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Writes the parameters of `index` into `out` (strategy order).
    #[inline]
    pub fn params_at(&self, index: GridIndex, out: &mut [f64]) {
        out.copy_from_slice(&self.base);
        let mut rest = index;
        for (axis, &stride) in self.axes.iter().zip(&self.strides) {
            let i = rest / stride;
            rest -= i * stride;
            out[axis.param] = axis.values[i as usize];
        }
    }

    pub fn params_of(&self, index: GridIndex) -> Vec<f64> {
        let mut v = self.base.clone();
        self.params_at(index, &mut v);
        v
    }

    /// The grid index of `params`, when every swept value is on its axis.
    pub fn index_of(&self, params: &[f64]) -> Option<GridIndex> {
        let mut index = 0;
        for (axis, &stride) in self.axes.iter().zip(&self.strides) {
            let i = axis.values.iter().position(|&v| v == params[axis.param])?;
            index += i as u64 * stride;
        }
        Some(index)
    }

    /// Calls `f` with every setting of the parameters `params` (strategy
    /// indices; swept ones take their axis values, fixed ones their value),
    /// every other parameter at its value in combination 0. The last listed
    /// parameter varies fastest.
    pub fn for_each_setting(&self, params: &[usize], mut f: impl FnMut(&[f64])) {
        let mut current = self.params_of(0);
        let values: Vec<Vec<f64>> = params
            .iter()
            .map(|&p| {
                self.axes
                    .iter()
                    .find(|a| a.param == p)
                    .map_or_else(|| vec![current[p]], |a| a.values.clone())
            })
            .collect();
        let mut digits = vec![0usize; params.len()];
        loop {
            for ((&p, v), &d) in params.iter().zip(&values).zip(&digits) {
                current[p] = v[d];
            }
            f(&current);
            // Odometer, last digit fastest.
            let mut i = digits.len();
            loop {
                if i == 0 {
                    return;
                }
                i -= 1;
                digits[i] += 1;
                if digits[i] < values[i].len() {
                    break;
                }
                digits[i] = 0;
            }
        }
    }

    /// Whether `params` satisfies every constraint.
    #[inline]
    pub fn allowed(&self, params: &[f64]) -> bool {
        self.constraints.iter().all(|c| c.holds(params))
    }

    /// Refuses, before any work, constraints that exclude every combination:
    /// each constraint alone over its parameters' values (naming it), then
    /// all together by walking the grid (up to 10⁷ combinations; beyond
    /// that a combination is assumed to exist).
    pub fn check_satisfiable(&self) -> Result<()> {
        const WALK: u64 = 10_000_000;
        let values_of = |param: usize| -> Vec<f64> {
            self.axes
                .iter()
                .find(|a| a.param == param)
                .map_or_else(|| vec![self.base[param]], |a| a.values.clone())
        };
        for c in &self.constraints {
            let params = c.params();
            let mut p = self.base.clone();
            let possible = match params.as_slice() {
                [] => c.holds(&p),
                [a] => values_of(*a).iter().any(|&v| {
                    p[*a] = v;
                    c.holds(&p)
                }),
                [a, b, ..] => values_of(*a).iter().any(|&x| {
                    p[*a] = x;
                    values_of(*b).iter().any(|&y| {
                        p[*b] = y;
                        c.holds(&p)
                    })
                }),
            };
            if !possible {
                return Err(Error::config(
                    key::STRATEGY_CONSTRAINTS,
                    format!(
                        "\"{}\" excludes every combination of the grid ({self}); nothing would be screened",
                        c.text
                    ),
                ));
            }
        }
        if self.constraints.len() > 1 && self.size <= WALK {
            let mut p = self.base.clone();
            let any = (0..self.size).any(|i| {
                self.params_at(i, &mut p);
                self.allowed(&p)
            });
            if !any {
                let all: Vec<&str> = self.constraints.iter().map(|c| c.text.as_str()).collect();
                return Err(Error::config(
                    key::STRATEGY_CONSTRAINTS,
                    format!(
                        "together, {} exclude every combination of the grid ({self}); nothing would be screened",
                        all.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Counts the combinations that satisfy the constraints (walks the grid).
    pub fn count_allowed(&self) -> u64 {
        if self.constraints.is_empty() {
            return self.size;
        }
        let mut p = self.base.clone();
        (0..self.size)
            .filter(|&i| {
                self.params_at(i, &mut p);
                self.allowed(&p)
            })
            .count() as u64
    }
}

impl fmt::Display for ParamSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.axes.iter().enumerate() {
            if i > 0 {
                f.write_str(" × ")?;
            }
            write!(f, "{}[{}]", a.name, a.values.len())?;
        }
        Ok(())
    }
}

/// Rounds to 12 significant digits.
pub fn round_sig(v: f64) -> f64 {
    round_digits(v, SIGNIFICANT_DIGITS)
}

/// Rounds to `digits` significant digits.
fn round_digits(v: f64, digits: usize) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    format!("{:.*e}", digits - 1, v).parse().unwrap_or(v)
}

/// start + i·step for i = 0, 1, … while ≤ stop (within 1e-9 of a step).
pub fn range_values(name: &str, start: f64, stop: f64, step: f64) -> Result<Vec<f64>> {
    let key = key::param(name);
    if !(start.is_finite() && stop.is_finite() && step.is_finite()) {
        return Err(Error::config(
            key,
            "start, stop and step must be finite numbers",
        ));
    }
    if step <= 0.0 {
        return Err(Error::config(
            key,
            format!("step must be above 0, got {}", crate::format::short(step)),
        ));
    }
    if start > stop {
        return Err(Error::config(
            key,
            format!(
                "start {} is above stop {}",
                crate::format::short(start),
                crate::format::short(stop)
            ),
        ));
    }
    let count = ((stop - start) / step + 1e-9).floor() + 1.0;
    if count > MAX_AXIS_VALUES as f64 {
        return Err(Error::config(
            key,
            format!(
                "{} values on one axis is too many (at most {MAX_AXIS_VALUES}); use a larger step or a narrower range",
                crate::format::short(count)
            ),
        ));
    }
    if start + step == start {
        return Err(Error::config(
            key,
            format!(
                "step {} is below the precision of numbers near {} (a double holds about 16 significant digits): successive values would be the same number",
                crate::format::short(step),
                crate::format::short(start)
            ),
        ));
    }
    Ok((0..count as i64)
        .map(|i| grid_value(start, i, step))
        .collect())
}

/// The value `start + k·step` of a grid: rounded to 12 significant digits
/// (more where the value is over a million steps from 0, so that
/// neighbours stay apart), and 0 exactly where the arithmetic left a
/// rounding residue of a step (−0.3 + 3 × 0.1 is 5.55e−17, which 12
/// significant digits keep) — never for `start` itself (k = 0), which is
/// as written however small beside the step.
pub fn grid_value(start: f64, k: i64, step: f64) -> f64 {
    let v = start + k as f64 * step;
    if k != 0 && v.abs() < step.abs() * 1e-9 {
        return 0.0;
    }
    let steps_from_zero = (v / step).abs();
    let digits = match steps_from_zero > 1.0 {
        true => (steps_from_zero.log10().ceil() as usize + 6).clamp(SIGNIFICANT_DIGITS, 17),
        false => SIGNIFICANT_DIGITS,
    };
    round_digits(v, digits)
}

/// One `[strategy.params]` entry as written: its values in order, and
/// whether every number was written as an integer.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisValues {
    pub values: Vec<f64>,
    pub integers: bool,
}

impl Axis {
    /// The axis of parameter `name` (of the strategy `owner`), every value
    /// checked against its spec; errors name `strategy.params.<name>`.
    pub fn checked(owner: &str, specs: &[ParamSpec], name: &str, axis: AxisValues) -> Result<Axis> {
        let key = key::param(name);
        let param =
            param_index(owner, specs, name).map_err(|e| Error::config(&key, e.to_string()))?;
        let pspec = &specs[param];
        let AxisValues { values, integers } = axis;
        if pspec.kind == ParamKind::Int && !integers && values.iter().any(|v| v.fract() != 0.0) {
            return Err(Error::config(
                &key,
                "takes whole numbers (a length), but the grid has fractions",
            ));
        }
        for &v in &values {
            pspec
                .check(v)
                .map_err(|e| Error::config(&key, e.to_string()))?;
        }
        let mut seen = values.clone();
        seen.sort_by(f64::total_cmp);
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::config(&key, "lists the same value twice"));
        }
        Ok(Axis {
            param,
            name: name.to_string(),
            values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values far from 0 in steps keep the digits that tell them apart
    /// (12 significant digits merged 1e9 + 0.001 and 1e9 + 0.002), a step
    /// below a double's precision is said as such, a start is kept as
    /// written however small beside the step (1 became 0), and the usual
    /// residues still clean up.
    #[test]
    fn grid_values_by_hand() {
        let v = range_values("x", 1e9, 1e9 + 0.0035, 0.001).unwrap();
        assert_eq!(v, [1e9, 1e9 + 0.001, 1e9 + 0.002, 1e9 + 0.003]);
        let e = range_values("x", 1e16, 1e16 + 10.0, 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("below the precision of numbers near 1e16"),
            "{e}"
        );
        assert_eq!(
            range_values("x", 1.0, 1.5e10, 1e10).unwrap(),
            [1.0, 1e10 + 1.0]
        );
        assert_eq!(grid_value(1.0, 0, 1e10), 1.0);
        assert_eq!(range_values("x", -0.3, 0.3, 0.1).unwrap()[3], 0.0);
        assert_eq!(range_values("x", 0.1, 0.35, 0.1).unwrap(), [0.1, 0.2, 0.3]);
    }
}
