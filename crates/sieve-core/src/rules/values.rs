//! One-off evaluations: an expression's values on every bar (Python's
//! `sieve.indicator`) and the fuzz target's body.

use super::check::Checker;
use super::compile::compile_text;
use super::compiled::Rules;
use super::external::ExternalFunctions;
use super::ir::Ty;
use super::source::RuleSource;
use crate::data::Bars;
use crate::error::{Error, Result};
use crate::indicators::IndicatorSet;
use crate::strategy::Direction;

/// The fuzz target's body: `text` as an entry rule (first line) and an
/// exit rule (the rest) compiles or is refused; what compiles runs on a
/// small series, both directions, without a panic.
#[doc(hidden)]
pub fn fuzz_one(text: &str) {
    let (entry, exit) = text.split_once('\n').unwrap_or((text, "false"));
    let source = RuleSource {
        name: "fuzz".to_string(),
        entry: entry.to_string(),
        exit: exit.to_string(),
        ..RuleSource::default()
    };
    let Ok((rules, _)) = Rules::compile(source) else {
        return;
    };
    let bars = crate::data::synth(300, 1);
    if rules.check_data(&bars).is_err() {
        return;
    }
    let mut keys = Vec::new();
    rules.indicators(&[], &mut keys);
    let set = IndicatorSet::build_for(&bars, &rules, keys);
    let mut out = vec![0i8; bars.len()];
    for direction in [Direction::Long, Direction::LongShort] {
        rules.positions(&bars, &set, &[], direction, &mut out);
        assert!(out.iter().all(|p| (-1..=1).contains(p)));
    }
    let _ = rules.warmup(&[]);
}

/// The value of `expression` on every bar as a rule reads it: numbers,
/// true/false as 1 / 0, undefined as NaN. It may read no parameter and
/// not the trade's state (what Python's `sieve.indicator` returns).
pub fn values(expression: &str, bars: &Bars, functions: &ExternalFunctions) -> Result<Vec<f64>> {
    values_of("expression", expression, bars, functions, false)
}

/// [`values`] of the expression of config key `key` (which errors name);
/// with `number`, a true/false expression is an error.
pub fn values_of(
    key: &str,
    expression: &str,
    bars: &Bars,
    functions: &ExternalFunctions,
    number: bool,
) -> Result<Vec<f64>> {
    let e = Expression::compile(key, expression, &[], functions, number)?;
    e.check_data(bars)?;
    Ok(e.values(bars, &[]))
}

/// An expression of the rule language compiled once, that may read
/// parameters (by position in `params`), evaluated on any bars: a
/// portfolio's `rank_by`.
pub struct Expression {
    rules: Rules,
}

impl Expression {
    /// `expression` of config key `key`, reading the parameters `params`
    /// (names, and whether each takes whole numbers only); with `number`,
    /// a true/false expression is an error.
    pub fn compile(
        key: &str,
        expression: &str,
        params: &[(&str, bool)],
        functions: &ExternalFunctions,
        number: bool,
    ) -> Result<Expression> {
        let names = params.iter().map(|p| p.0.to_string()).collect();
        let int_params = params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.1)
            .fold(0u64, |m, (i, _)| m | 1 << i);
        let mut checker = Checker::new(names, Vec::new(), functions.clone());
        let id = compile_text(&mut checker, key, expression, None)?;
        if checker.graph.nodes[id].state {
            return Err(Error::config(
                key,
                "reads position, entry_price or bars_held, which exist only while a strategy trades",
            ));
        }
        let ty = checker.graph.nodes[id].ty;
        if number && ty == Ty::Bool {
            return Err(Error::config(
                key,
                format!("must be a number, and \"{expression}\" is true or false"),
            ));
        }
        let rules = Rules::of_expression(key, checker.graph, id, params.len(), int_params);
        Ok(Expression { rules })
    }

    /// [`Expression::compile`], and whether it reads a parameter: one
    /// that reads none compiles without them (its values are the same for
    /// every combination).
    pub fn compile_reading(
        key: &str,
        expression: &str,
        params: &[(&str, bool)],
        functions: &ExternalFunctions,
        number: bool,
    ) -> Result<(Expression, bool)> {
        let e = Expression::compile(key, expression, params, functions, number)?;
        // (A name that is no parameter reads a column: only a parameter's
        // node says the expression reads one.)
        let reads = (e.rules.graph.nodes.iter()).any(|n| matches!(n.op, super::ir::Op::Param(_)));
        Ok((e, reads))
    }

    /// Refuses bars without a column the expression reads.
    pub fn check_data(&self, bars: &Bars) -> Result<()> {
        self.rules.check_data(bars)
    }

    /// Its value on every bar for `params`: numbers, true/false as 1 / 0,
    /// undefined as NaN.
    pub fn values(&self, bars: &Bars, params: &[f64]) -> Vec<f64> {
        self.rules.root_values(bars, params)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Pieces of rules, valid and not, glued at random.
    const PIECES: &[&str] = &[
        "close",
        "open",
        "high",
        "low",
        "volume",
        "sma(",
        "ema(",
        "rsi(",
        "atr(",
        "highest(",
        "lowest(",
        "stdev(",
        "roc(",
        "shift(",
        "abs(",
        "min(",
        "max(",
        "clamp(",
        "if(",
        "cross_above(",
        "cross_below(",
        "tf(\"4h\",",
        "tf(\"1w\",",
        "informative(\"x\",",
        ")",
        ",",
        "+",
        "-",
        "*",
        "/",
        "<",
        "<=",
        ">",
        ">=",
        "==",
        "!=",
        "and",
        "or",
        "not",
        "true",
        "false",
        "0",
        "1",
        "3",
        "2.5",
        "-1",
        "1e9",
        "(",
        "x",
        "=",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any sequence of pieces compiles or is refused; what compiles runs.
        #[test]
        fn random_rules_never_panic(entry in prop::collection::vec(0..PIECES.len(), 0..24),
                                    exit in prop::collection::vec(0..PIECES.len(), 0..12)) {
            let text = |ix: &[usize]| ix.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
            super::fuzz_one(&format!("{}\n{}", text(&entry), text(&exit)));
        }
    }

    /// Well-typed numeric expressions (windows may still be out of range).
    fn number() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            prop::sample::select(vec!["close", "open", "high", "low", "volume", "2.5", "0"])
                .prop_map(str::to_string),
            (-3i32..40).prop_map(|v| v.to_string()),
        ];
        leaf.prop_recursive(4, 32, 3, |inner| {
            let windowed = [
                "sma", "ema", "rsi", "highest", "lowest", "stdev", "roc", "shift",
            ];
            prop_oneof![
                (
                    inner.clone(),
                    inner.clone(),
                    prop::sample::select(vec!["+", "-", "*", "/"])
                )
                    .prop_map(|(a, b, op)| format!("({a} {op} {b})")),
                (
                    prop::sample::select(windowed.to_vec()),
                    inner.clone(),
                    0i32..30
                )
                    .prop_map(|(f, x, n)| format!("{f}({x}, {n})")),
                (1i32..20).prop_map(|n| format!("atr({n})")),
                (1i32..20, 1i32..5, 0i32..3).prop_map(|(n, s, d)| format!(
                    "stoch_d({n}, {s}, {}) + sar(0.0{s}, 0.2) + supertrend({n}, {d}.5)",
                    d + 1
                )),
                (inner.clone(), inner.clone(), 0i32..6).prop_map(|(a, b, n)| format!(
                    "sum_since(shift({a} > {b}, {n}), {b}) + barssince({a} < {b})"
                )),
                inner.clone().prop_map(|x| format!("abs(-{x})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("min({a}, max({b}, 1))")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(a, b, c)| format!("if({a} > {b}, {c}, clamp({a}, 0, {b}))")),
            ]
        })
    }

    fn rule() -> impl Strategy<Value = String> {
        let cmp = prop::sample::select(vec!["<", "<=", ">", ">=", "==", "!="]);
        let leaf = prop_oneof![
            (number(), cmp, number()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (number(), number(), any::<bool>()).prop_map(|(a, b, up)| {
                format!("cross_{}({a}, {b})", if up { "above" } else { "below" })
            }),
        ];
        leaf.prop_recursive(2, 8, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) and ({b})")),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) or not ({b})")),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Well-typed rules reach the evaluator: it never panics, and every
        /// position is −1, 0 or +1 (checked inside).
        #[test]
        fn random_well_typed_rules_run(entry in rule(), exit in rule()) {
            super::fuzz_one(&format!("{entry}\n{exit}"));
        }
    }

    #[test]
    fn a_valid_random_shape_compiles_and_runs() {
        // The generator above must reach the evaluator, not only errors.
        let source = super::RuleSource {
            name: "t".into(),
            entry: "cross_above(ema(close - open, 3), 0) and not (rsi(close, 3) > 70)".into(),
            exit: "if(close > open, highest(high, 5), lowest(low, 5)) < shift(close, 2)".into(),
            ..Default::default()
        };
        assert!(super::Rules::compile(source).is_ok());
        super::fuzz_one("cross_above(ema(close - open, 3), 0)\nclose < shift(close, 2)");
    }
}
