//! `[strategy.params]` and `strategy.constraints` as written in TOML,
//! turned into the typed axes the grid and the rules take.

use crate::error::{Error, Result};
use crate::grid::{range_values, round_sig, Axis, AxisValues, ParamSpace};
use crate::key;
use crate::rules::RuleAxis;
use crate::strategy::{param_index, Strategy};

/// The grid of `strategy`: `params` (`None`: its default grid) and
/// `constraints` (`None`: its default constraints).
pub fn space(
    strategy: &dyn Strategy,
    params: Option<&toml::Table>,
    constraints: Option<&[String]>,
) -> Result<ParamSpace> {
    let axes = match params {
        None => None,
        Some(table) => Some(
            table
                .iter()
                .map(|(name, spec)| {
                    // Each entry whole (name, values, their checks) before
                    // the next: the first entry with a mistake is named.
                    let key = key::param(name);
                    param_index(strategy, name).map_err(|e| Error::config(&key, e.to_string()))?;
                    let values = axis_values(&key, name, spec)?;
                    Axis::checked(strategy.name(), strategy.params(), name, values)
                })
                .collect::<Result<Vec<_>>>()?,
        ),
    };
    ParamSpace::build(
        strategy.name(),
        strategy.params(),
        axes,
        constraints,
        strategy.default_constraints(),
    )
}

/// A rule strategy's `[strategy.params]`: every entry's values, in order,
/// or what is wrong with them (reported when the rules compiler reaches
/// that parameter, after the rules themselves are checked).
pub fn rule_axes(table: &toml::Table) -> Vec<(String, RuleAxis)> {
    table
        .iter()
        .map(|(name, spec)| {
            let key = key::param(name);
            let values = axis_values(&key, name, spec).map_err(|e| match e {
                Error::Config { message, .. } => message,
                other => other.to_string(),
            });
            (name.clone(), values)
        })
        .collect()
}

/// The values of one `[strategy.params]` entry (`{ start, stop, step }`,
/// `{ values = [...] }` or a number), and whether all were written as
/// integers; errors name `key`.
pub fn axis_values(key: &str, name: &str, spec: &toml::Value) -> Result<AxisValues> {
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
    let (values, integers) = match spec {
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
    };
    Ok(AxisValues { values, integers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::range_values;
    use crate::strategy::lookup;

    fn space_of(text: &str, constraints: &[&str]) -> Result<ParamSpace> {
        let s = lookup("sma_cross").unwrap();
        let table: toml::Table = text.parse().unwrap();
        let c: Vec<String> = constraints.iter().map(|c| c.to_string()).collect();
        space(s, Some(&table), Some(&c))
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
        let g = space_of(
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
        let g = space_of(
            "fast = { start = 1, stop = 5, step = 1 }\nslow = { start = 1, stop = 5, step = 1 }",
            &["fast < slow"],
        )
        .unwrap();
        assert_eq!((g.size(), g.count_allowed()), (25, 10));
        let g = space_of(
            "fast = { start = 1, stop = 5, step = 1 }\nslow = { start = 1, stop = 5, step = 1 }",
            &["fast <= slow", "slow != 3"],
        )
        .unwrap();
        assert_eq!(g.count_allowed(), 15 - 3);
        let g = space_of(
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
            // Refused before any value is made (a 10⁹-value axis took
            // 15.6 GB); 10¹⁶ by 1 is too many, not "the same value twice".
            (
                "fast = { start = 1, stop = 999999999, step = 1 }",
                "fast < slow",
                "999999999 values on one axis is too many",
            ),
            // Numbers in errors stay short (1e300 printed 301 digits).
            (
                "fast = { start = 1e300, stop = 1, step = 1 }",
                "fast < slow",
                "start 1e300 is above stop 1",
            ),
            (
                "fast = { start = 1, stop = 5, step = 1e-300 }",
                "fast < slow",
                "e300 values on one axis is too many",
            ),
            (
                "fast = { start = 1, stop = 1e16, step = 1 }",
                "fast < slow",
                "too many",
            ),
        ] {
            let e = space_of(text, &[c]).unwrap_err().to_string();
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
        let e = space(s, Some(&table), None).unwrap_err().to_string();
        assert!(e.contains("2^64"), "{e}");
    }
}
