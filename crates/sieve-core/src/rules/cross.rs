//! Expressions across a portfolio's instruments (`portfolio.weight`,
//! `portfolio.rebalance`): besides what a rule reads, `rank(x)`,
//! `count(x)` and `total(x)` compare each instrument's `x` with the
//! others' at the same time. Each instrument's `x` is taken as of its
//! latest bar then (an instrument without a bar keeps its last value, one
//! past its last bar has none), so nothing reads a later bar.

pub use super::across::Across;
use super::across::{parse_text, split};
use super::values::Expression;
use super::ExternalFunctions;
use crate::data::{Bars, ExtraColumn};
use crate::engine::Schedule;
use crate::error::{Error, Result};

/// The name of the column that carries the `n`th cross-sectional value
/// into the expression around it (no data file has it).
fn column_of(n: usize) -> String {
    format!("\u{b7}across {n}")
}

/// Each instrument's `rank`, `count` and `total` of `values` (each one's
/// series on its own bars) on `schedule`, on its own bars.
pub fn cross_section(schedule: &Schedule, values: &[Vec<f64>], what: Across) -> Vec<Vec<f64>> {
    let n = values.len();
    let mut last = vec![f64::NAN; n];
    let mut out: Vec<Vec<f64>> = values.iter().map(|v| vec![f64::NAN; v.len()]).collect();
    let mut now = Vec::with_capacity(n);
    let (mut order, mut place_of): (Vec<usize>, _) = (Vec::with_capacity(n), vec![0usize; n]);
    // Each instrument's next bar.
    let mut next = vec![0usize; n];
    for t in 0..schedule.len() {
        now.clear();
        for (i, v) in values.iter().enumerate() {
            let k = next[i];
            if k == v.len() {
                // Past its last bar (a delisted stock): out of the count.
                last[i] = f64::NAN;
            } else if schedule.step_of(i, k) == t {
                last[i] = v[k];
                now.push((i, k));
                next[i] += 1;
            }
        }
        if now.is_empty() {
            continue;
        }
        // The defined latest values, highest first, ties in instrument
        // order: an instrument's place there is its rank. (Kept from the
        // step before where the same instruments are defined: nearly in
        // order already, it sorts in about one pass.)
        let defined = (0..n).filter(|&j| !last[j].is_nan()).count();
        if defined != order.len() || order.iter().any(|&j| last[j].is_nan()) {
            order.clear();
            order.extend((0..n).filter(|&j| !last[j].is_nan()));
        }
        let value = match what {
            Across::Rank => {
                // (No NaN among them; equal values, -0 and 0 too, tie.)
                order.sort_by(|&a, &b| {
                    let by_value = last[b].partial_cmp(&last[a]);
                    by_value
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then(a.cmp(&b))
                });
                for (place, &j) in order.iter().enumerate() {
                    place_of[j] = place + 1;
                }
                f64::NAN
            }
            Across::Count => order.len() as f64,
            Across::Total => order.iter().map(|&j| last[j]).sum(),
        };
        for &(i, k) in &now {
            out[i][k] = match what {
                Across::Rank if last[i].is_nan() => f64::NAN,
                Across::Rank => place_of[i] as f64,
                _ => value,
            };
        }
    }
    out
}

/// An expression of the rule language that may call `rank`, `count` and
/// `total` over the instruments, and read the strategy's parameters.
pub struct CrossExpression {
    /// The expression with each cross-sectional call read as a column.
    outer: Expression,
    /// Each call: its function and its argument.
    inner: Vec<(Across, Expression)>,
    reads_params: bool,
}

impl CrossExpression {
    /// `text` of config key `key`, reading the parameters `params` (names,
    /// and whether each is a whole number); with `number`, a true/false
    /// expression is an error.
    pub fn compile(
        key: &str,
        text: &str,
        params: &[(&str, bool)],
        functions: &ExternalFunctions,
        number: bool,
    ) -> Result<CrossExpression> {
        let expr = parse_text(key, text)?;
        let split = split(key, text, &expr)?;
        // The text with each call (last first, so spans hold) a column.
        let mut outer_text = text.to_string();
        for (n, (_, span, _)) in split.calls.iter().enumerate().rev() {
            let column = format!("col(\"{}\")", column_of(n));
            outer_text.replace_range(span.start..span.end, &column);
        }
        let mut reads_params = false;
        let mut compiled = |text: &str, number: bool| {
            let (e, reads) = Expression::compile_reading(key, text, params, functions, number)?;
            reads_params |= reads;
            Ok::<_, Error>(e)
        };
        let inner = split
            .calls
            .iter()
            .map(|(what, _, arg)| {
                let arg = &text[arg.span.start..arg.span.end];
                Ok((*what, compiled(arg, true)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let outer = compiled(&outer_text, number)?;
        Ok(CrossExpression {
            outer,
            inner,
            reads_params,
        })
    }

    /// Whether it reads a parameter (else its values are the same for every
    /// combination).
    pub fn reads_params(&self) -> bool {
        self.reads_params
    }

    /// Refuses bars without a column it reads.
    pub fn check_data(&self, bars: &Bars) -> Result<()> {
        for (_, e) in &self.inner {
            e.check_data(bars)?;
        }
        let mut with = bars.clone();
        self.add_columns(&mut with, (0..self.inner.len()).map(|_| Vec::new()));
        self.outer.check_data(&with)
    }

    /// Its values on each of `members` (on `schedule`) for `params`.
    pub fn values(&self, members: &[&Bars], schedule: &Schedule, params: &[f64]) -> Vec<Vec<f64>> {
        if self.inner.is_empty() {
            return members
                .iter()
                .map(|b| self.outer.values(b, params))
                .collect();
        }
        // Each call's values across the instruments, then each
        // instrument's as columns of its bars.
        let mut columns: Vec<Vec<Vec<f64>>> = vec![Vec::new(); members.len()];
        for (what, e) in &self.inner {
            let own: Vec<Vec<f64>> = members.iter().map(|b| e.values(b, params)).collect();
            for (m, c) in cross_section(schedule, &own, *what).into_iter().enumerate() {
                columns[m].push(c);
            }
        }
        members
            .iter()
            .zip(columns)
            .map(|(bars, columns)| {
                let mut with = (*bars).clone();
                self.add_columns(&mut with, columns.into_iter());
                self.outer.values(&with, params)
            })
            .collect()
    }

    fn add_columns(&self, bars: &mut Bars, columns: impl Iterator<Item = Vec<f64>>) {
        for (n, values) in columns.enumerate() {
            let values = match values.is_empty() {
                true => vec![f64::NAN; bars.len()],
                false => values,
            };
            bars.extra.push(ExtraColumn {
                name: column_of(n),
                values,
                problem: None,
            });
        }
    }
}

/// A target-weight portfolio's rules (`portfolio.weight` and
/// `portfolio.rebalance`): each instrument's weight after each of its
/// bars' closes, NaN where it places no order.
pub struct Weights {
    weight: CrossExpression,
    rebalance: Option<CrossExpression>,
    /// The weights, where neither reads a parameter.
    fixed: Option<Vec<Vec<f64>>>,
    /// Each part's values where it alone reads no parameter.
    fixed_weight: Option<Vec<Vec<f64>>>,
    fixed_rebalance: Option<Vec<Vec<f64>>>,
}

impl Weights {
    /// `weight` (a number) and `rebalance` (true/false; `None`: every bar)
    /// of keys `keys`, checked against each of `members` (named in errors).
    pub fn compile(
        keys: [&str; 2],
        weight: &str,
        rebalance: Option<&str>,
        functions: &ExternalFunctions,
        params: &[(&str, bool)],
        members: &[(&str, &Bars)],
        schedule: &Schedule,
    ) -> Result<Weights> {
        let weight = CrossExpression::compile(keys[0], weight, params, functions, true)?;
        let rebalance = rebalance
            .map(|r| CrossExpression::compile(keys[1], r, params, functions, false))
            .transpose()?;
        for (name, bars) in members {
            let named = |e: Error| match (members.len() > 1, e) {
                (true, Error::Config { key, message }) => Error::Config {
                    key,
                    message: format!("instrument '{name}': {message}"),
                },
                (_, e) => e,
            };
            weight.check_data(bars).map_err(named)?;
            if let Some(r) = &rebalance {
                r.check_data(bars).map_err(named)?;
            }
        }
        let bars: Vec<&Bars> = members.iter().map(|m| m.1).collect();
        let once =
            |e: &CrossExpression| (!e.reads_params()).then(|| e.values(&bars, schedule, &[]));
        let mut w = Weights {
            fixed_weight: once(&weight),
            fixed_rebalance: rebalance.as_ref().and_then(once),
            weight,
            rebalance,
            fixed: None,
        };
        if !w.reads_params() {
            let mut out = Vec::new();
            w.compute(&bars, schedule, &[], &mut out);
            w.fixed = Some(out);
        }
        Ok(w)
    }

    /// Whether the weights differ from one combination to another.
    pub fn reads_params(&self) -> bool {
        self.weight.reads_params() || self.rebalance.as_ref().is_some_and(|r| r.reads_params())
    }

    /// Each member's weights for `params` (in `out` where they read
    /// parameters).
    pub fn of<'s>(
        &'s self,
        members: &[&Bars],
        schedule: &Schedule,
        params: &[f64],
        out: &'s mut Vec<Vec<f64>>,
    ) -> &'s [Vec<f64>] {
        if let Some(fixed) = &self.fixed {
            return fixed;
        }
        self.compute(members, schedule, params, out);
        out
    }

    fn compute(
        &self,
        members: &[&Bars],
        schedule: &Schedule,
        params: &[f64],
        out: &mut Vec<Vec<f64>>,
    ) {
        match &self.fixed_weight {
            Some(fixed) => out.clone_from(fixed),
            None => *out = self.weight.values(members, schedule, params),
        }
        if let Some(r) = &self.rebalance {
            let computed;
            let when = match &self.fixed_rebalance {
                Some(fixed) => fixed,
                None => {
                    computed = r.values(members, schedule, params);
                    &computed
                }
            };
            for (w, when) in out.iter_mut().zip(when) {
                for (w, &when) in w.iter_mut().zip(when) {
                    // Undefined (warm-up) or false: no order.
                    if when != 1.0 {
                        *w = f64::NAN;
                    }
                }
            }
        }
    }
}

impl std::fmt::Debug for Weights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Weights {{ reads_params: {} }}", self.reads_params())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(time: &[i64]) -> Bars {
        let one = vec![1.0; time.len()];
        Bars {
            time: time.to_vec(),
            open: one.clone(),
            high: one.clone(),
            low: one.clone(),
            close: one,
            volume: None,
            timezone: None,
            extra: Vec::new(),
            unread: Vec::new(),
            detail: None,
            frames: None,
        }
    }

    /// By hand: A at times 1–4, B at 1, 3, 4 (none at 2), C at 2–3 (it
    /// ends). Values: A 5, 7, 7, 1; B 7, NaN, 3; C 9, 7.
    /// * time 1: A 5, B 7 → B 1st, A 2nd; count 2, total 12.
    /// * time 2: A 7, B keeps 7, C 9 → C 1, A and B tie at 7: A (first in
    ///   order) 2nd; count 3, total 23.
    /// * time 3: A 7, B undefined, C 7 → A 1st, C 2nd (tie, order); B has
    ///   no rank; count 2, total 14.
    /// * time 4: A 1, B 3, C past its end → B 1st, A 2nd; count 2, total 4.
    #[test]
    fn rank_count_and_total_by_hand() {
        let (a, b, c) = (bars(&[1, 2, 3, 4]), bars(&[1, 3, 4]), bars(&[2, 3]));
        let schedule = Schedule::new(&[&a, &b, &c]);
        let values = vec![
            vec![5.0, 7.0, 7.0, 1.0],
            vec![7.0, f64::NAN, 3.0],
            vec![9.0, 7.0],
        ];
        let rank = cross_section(&schedule, &values, Across::Rank);
        let count = cross_section(&schedule, &values, Across::Count);
        let total = cross_section(&schedule, &values, Across::Total);
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
        };
        let nan = f64::NAN;
        assert!(same(&rank[0], &[2.0, 2.0, 1.0, 2.0]), "{:?}", rank[0]);
        assert!(same(&rank[1], &[1.0, nan, 1.0]), "{:?}", rank[1]);
        assert!(same(&rank[2], &[1.0, 2.0]), "{:?}", rank[2]);
        assert_eq!(count[0], vec![2.0, 3.0, 2.0, 2.0]);
        assert_eq!(count[1], vec![2.0, 2.0, 2.0]);
        assert_eq!(count[2], vec![3.0, 2.0]);
        assert_eq!(total[0], vec![12.0, 23.0, 14.0, 4.0]);
        assert_eq!(total[1], vec![12.0, 14.0, 4.0]);
        assert_eq!(total[2], vec![23.0, 14.0]);
    }

    /// A weight reading `rank` of a parameter's momentum: the text is
    /// split into the argument and the rest, and the values equal the
    /// cross-section of the argument's values put through the rest.
    #[test]
    fn an_expression_across_the_instruments() {
        let (mut a, mut b) = (bars(&[1, 2, 3]), bars(&[1, 2, 3]));
        a.close = vec![1.0, 2.0, 3.0];
        b.close = vec![3.0, 2.0, 1.0];
        let schedule = Schedule::new(&[&a, &b]);
        let e = CrossExpression::compile(
            "portfolio.weight",
            "if(rank(close * k) <= 1, 1, 0) + total(close) / 10",
            &[("k", false)],
            &ExternalFunctions::default(),
            true,
        )
        .unwrap();
        assert!(e.reads_params());
        let v = e.values(&[&a, &b], &schedule, &[2.0]);
        // Totals are 4 at every time; A leads at time 3, B at 1, a tie at 2
        // goes to A.
        assert_eq!(v[0], vec![0.4, 1.4, 1.4]);
        assert_eq!(v[1], vec![1.4, 0.4, 0.4]);
    }
}
