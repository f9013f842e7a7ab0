//! The parameter grid: axes of values, enumerated as a cartesian
//! product with the first-declared parameter varying slowest. A combination's
//! grid index is its position in that order; constraints remove combinations
//! without renumbering the rest. Index → parameters is O(dimensions), and the
//! grid is never materialised.

use std::fmt;

use crate::error::{Error, Result};
use crate::strategy::{ParamKind, Strategy};

/// A position in the full (unconstrained) enumeration.
pub type GridIndex = u64;

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
    pub fn parse(text: &str, strategy: &dyn Strategy) -> Result<Constraint> {
        const OPS: [(&str, Cmp); 6] = [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ];
        let key = "strategy.constraints";
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
            crate::strategy::param_index(strategy, s)
                .map(Operand::Param)
                .map_err(|_| {
                    let names: Vec<_> = strategy.params().iter().map(|p| p.name).collect();
                    Error::config(
                        key,
                        format!(
                            "\"{text}\": '{s}' is neither a number nor a parameter of {} ({})",
                            strategy.name(),
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
    pub fn new(
        strategy: &dyn Strategy,
        axes: Vec<Axis>,
        constraints: Vec<Constraint>,
    ) -> Result<Self> {
        let mut strides = vec![0u64; axes.len()];
        let mut size: u64 = 1;
        for (i, axis) in axes.iter().enumerate().rev() {
            strides[i] = size;
            size = size.checked_mul(axis.values.len() as u64).ok_or_else(|| {
                Error::config(
                    "strategy.params",
                    "the grid has more than 2^64 combinations; narrow the ranges or use larger steps",
                )
            })?;
        }
        Ok(ParamSpace {
            axes,
            constraints,
            base: crate::strategy::default_params(strategy),
            strides,
            size,
        })
    }

    /// From `[strategy.params]` and `strategy.constraints`; `None` takes the
    /// strategy's default grid and constraints.
    pub fn from_config(
        strategy: &dyn Strategy,
        params: Option<&toml::Table>,
        constraints: Option<&[String]>,
    ) -> Result<Self> {
        let axes = match params {
            None => strategy
                .params()
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let (start, stop, step) = p.grid;
                    Ok(Axis {
                        param: i,
                        name: p.name.to_string(),
                        values: range_values(p.name, start, stop, step)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            Some(table) => table
                .iter()
                .map(|(name, spec)| parse_axis(strategy, name, spec))
                .collect::<Result<Vec<_>>>()?,
        };
        let constraints = match constraints {
            Some(list) => list
                .iter()
                .map(|c| Constraint::parse(c, strategy))
                .collect::<Result<Vec<_>>>()?,
            None => strategy
                .default_constraints()
                .iter()
                .map(|c| Constraint::parse(c, strategy))
                .collect::<Result<Vec<_>>>()?,
        };
        ParamSpace::new(strategy, axes, constraints)
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
                    "strategy.constraints",
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
                    "strategy.constraints",
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
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    format!("{:.*e}", SIGNIFICANT_DIGITS - 1, v)
        .parse()
        .unwrap_or(v)
}

/// start + i·step for i = 0, 1, … while ≤ stop (within 1e-9 of a step).
pub fn range_values(name: &str, start: f64, stop: f64, step: f64) -> Result<Vec<f64>> {
    let key = format!("strategy.params.{name}");
    if !(start.is_finite() && stop.is_finite() && step.is_finite()) {
        return Err(Error::config(
            key,
            "start, stop and step must be finite numbers",
        ));
    }
    if step <= 0.0 {
        return Err(Error::config(
            key,
            format!("step must be above 0, got {step}"),
        ));
    }
    if start > stop {
        return Err(Error::config(
            key,
            format!("start {start} is above stop {stop}"),
        ));
    }
    let count = ((stop - start) / step + 1e-9).floor() + 1.0;
    if count > 1e9 {
        return Err(Error::config(
            key,
            format!("{count} values on one axis is too many"),
        ));
    }
    Ok((0..count as u64)
        .map(|i| grid_value(start + i as f64 * step, step))
        .collect())
}

/// A value of a grid with spacing `step`: 12 significant digits, and 0
/// exactly where the arithmetic left a rounding residue of a step (−0.3 +
/// 3 × 0.1 is 5.55e−17, which 12 significant digits keep).
pub fn grid_value(v: f64, step: f64) -> f64 {
    if v.abs() < step.abs() * 1e-9 {
        0.0
    } else {
        round_sig(v)
    }
}

fn parse_axis(strategy: &dyn Strategy, name: &str, spec: &toml::Value) -> Result<Axis> {
    let key = format!("strategy.params.{name}");
    let param = crate::strategy::param_index(strategy, name)
        .map_err(|e| Error::config(&key, e.to_string()))?;
    let pspec = strategy.params()[param];
    let (values, all_int) = axis_values(&key, name, spec)?;
    if pspec.kind == ParamKind::Int && !all_int && values.iter().any(|v| v.fract() != 0.0) {
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

/// The values of one `[strategy.params]` entry (`{ start, stop, step }`,
/// `{ values = [...] }` or a number), and whether all were written as
/// integers; errors name `key`.
pub fn axis_values(key: &str, name: &str, spec: &toml::Value) -> Result<(Vec<f64>, bool)> {
    let number = |v: &toml::Value, what: &str| -> Result<(f64, bool)> {
        match v {
            toml::Value::Integer(i) => Ok((*i as f64, true)),
            toml::Value::Float(f) => Ok((*f, false)),
            other => Err(Error::config(
                key,
                format!("{what} must be a number, got {other}"),
            )),
        }
    };
    Ok(match spec {
        toml::Value::Table(t) => {
            if let Some(list) = t.get("values") {
                if let Some(extra) = t.keys().find(|k| *k != "values") {
                    return Err(Error::config(
                        key,
                        format!("unknown key '{extra}' beside 'values'"),
                    ));
                }
                let list = list
                    .as_array()
                    .ok_or_else(|| Error::config(key, "values must be a list of numbers"))?;
                if list.is_empty() {
                    return Err(Error::config(key, "values is empty"));
                }
                let parsed = list
                    .iter()
                    .map(|v| number(v, "each value"))
                    .collect::<Result<Vec<_>>>()?;
                let all_int = parsed.iter().all(|p| p.1);
                (
                    parsed
                        .into_iter()
                        .map(|p| round_sig(p.0))
                        .collect::<Vec<_>>(),
                    all_int,
                )
            } else {
                if let Some(extra) = t
                    .keys()
                    .find(|k| !["start", "stop", "step"].contains(&k.as_str()))
                {
                    return Err(Error::config(
                        key,
                        format!("unknown key '{extra}'; expected {{ start, stop, step }} or {{ values = [...] }}"),
                    ));
                }
                let get = |k: &str| {
                    t.get(k)
                        .ok_or_else(|| Error::config(key, format!("missing '{k}'; expected {{ start, stop, step }} or {{ values = [...] }}")))
                        .and_then(|v| number(v, k))
                };
                let (start, a) = get("start")?;
                let (stop, b) = get("stop")?;
                let (step, c) = get("step")?;
                (range_values(name, start, stop, step)?, a && b && c)
            }
        }
        v @ (toml::Value::Integer(_) | toml::Value::Float(_)) => {
            let (x, is_int) = number(v, "value")?;
            (vec![x], is_int)
        }
        other => {
            return Err(Error::config(
                key,
                format!(
                "expected {{ start, stop, step }}, {{ values = [...] }} or a number, got {other}"
            ),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::lookup;

    fn space(text: &str, constraints: &[&str]) -> Result<ParamSpace> {
        let s = lookup("sma_cross").unwrap();
        let table: toml::Table = text.parse().unwrap();
        let c: Vec<String> = constraints.iter().map(|c| c.to_string()).collect();
        ParamSpace::from_config(s, Some(&table), Some(&c))
    }

    #[test]
    fn float_steps_do_not_drift() {
        let v = range_values("x", 0.1, 1.0, 0.1).unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(v, vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]);
        assert_eq!(range_values("x", 0.0, 1.0, 0.1).unwrap().len(), 11);
        assert_eq!(range_values("x", 0.0, 0.95, 0.1).unwrap().len(), 10);
        assert_eq!(
            format!("{}", range_values("x", 0.1, 0.3, 0.1).unwrap()[2]),
            "0.3"
        );
        // −0.3 + 3 × 0.1 is 5.55e−17 in floating point: it must be 0.
        let v = range_values("x", -0.3, 0.3, 0.1).unwrap();
        assert_eq!(v, vec![-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3]);
    }

    #[test]
    fn first_declared_varies_slowest() {
        let g = space(
            "slow = { values = [10, 20, 30] }\nfast = { start = 1, stop = 2, step = 1 }",
            &[],
        )
        .unwrap();
        assert_eq!(g.size(), 6);
        // index 1 → slow = 10, fast = 2 (params in strategy order: fast, slow)
        assert_eq!(g.params_of(1), vec![2.0, 10.0]);
        assert_eq!(g.params_of(4), vec![1.0, 30.0]);
        for i in 0..g.size() {
            assert_eq!(g.index_of(&g.params_of(i)), Some(i));
        }
    }

    #[test]
    fn constraint_counts_by_hand() {
        // fast 1..=5, slow 1..=5, fast < slow: 4+3+2+1 = 10 of 25
        let g = space(
            "fast = { start = 1, stop = 5, step = 1 }\nslow = { start = 1, stop = 5, step = 1 }",
            &["fast < slow"],
        )
        .unwrap();
        assert_eq!((g.size(), g.count_allowed()), (25, 10));
        let g = space(
            "fast = { start = 1, stop = 5, step = 1 }\nslow = { start = 1, stop = 5, step = 1 }",
            &["fast <= slow", "slow != 3"],
        )
        .unwrap();
        assert_eq!(g.count_allowed(), 15 - 3);
        let g = space(
            "fast = { start = 1, stop = 5, step = 1 }\nslow = 50",
            &["fast >= 3"],
        )
        .unwrap();
        assert_eq!((g.size(), g.count_allowed()), (5, 3));
    }

    #[test]
    fn bad_grids_name_the_problem() {
        for (text, c, want) in [
            (
                "fast = { start = 1, stop = 5, step = 0 }",
                "fast < slow",
                "step",
            ),
            (
                "fast = { start = 5, stop = 1, step = 1 }",
                "fast < slow",
                "start",
            ),
            (
                "fast = { start = 1.5, stop = 5, step = 1 }",
                "fast < slow",
                "whole numbers",
            ),
            ("speed = { values = [1] }", "fast < slow", "speed"),
            ("fast = { values = [1, 2] }", "fast < sloww", "sloww"),
            ("fast = { values = [0] }", "fast < slow", "outside"),
            ("fast = { start = 1, stop = 5 }", "fast < slow", "step"),
            ("fast = \"ten\"", "fast < slow", "fast"),
        ] {
            let e = space(text, &[c]).unwrap_err().to_string();
            assert!(e.contains(want), "{text} / {c}: {e}");
        }
    }

    #[test]
    fn more_than_u64_is_an_error() {
        let s = lookup("activation").unwrap();
        let mut text = String::new();
        for p in ["trend_len", "rsi_len", "dc_len", "atr_len"] {
            text.push_str(&format!("{p} = {{ start = 1, stop = 100000, step = 1 }}\n"));
        }
        text.push_str("w_trend = { start = 0, stop = 1000, step = 1 }\n");
        let table: toml::Table = text.parse().unwrap();
        let e = ParamSpace::from_config(s, Some(&table), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2^64"), "{e}");
    }
}
