//! The functions across a portfolio's instruments (`rank`, `count`,
//! `total`) in an expression's text: where they are, so that each call's
//! argument can be computed per instrument and the rest read its result.

use super::error::RuleError;
use super::parse::{parse, Expr, ExprKind, Span};
use crate::error::Result;

/// A cross-sectional function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Across {
    /// 1 for the highest value, ties in instrument order; undefined where
    /// the instrument's own value is.
    Rank,
    /// How many instruments have a defined value.
    Count,
    /// The sum of the defined values.
    Total,
}

impl Across {
    /// The function `name` (one of [`super::functions::ACROSS`]).
    fn named(name: &str) -> Option<Across> {
        match name {
            "rank" => Some(Across::Rank),
            "count" => Some(Across::Count),
            "total" => Some(Across::Total),
            _ => None,
        }
    }
}

/// An expression split at its cross-sectional calls: each call's function,
/// span and argument (spans in the text as written), and the rest parsed
/// with each call blanked to a `0` of its length (so the rest's spans are
/// the text's too, and a mistake's column is where it is written).
pub struct Split<'t> {
    pub calls: Vec<(Across, Span, &'t Expr)>,
    pub rest: Expr,
}

/// Parses `text` (config key `key`) into what [`split`] splits.
pub fn parse_text(key: &str, text: &str) -> Result<Expr> {
    parse(text).map_err(|e| e.into_error(key, text))
}

/// `expr`, the parse of `text` (config key `key`), split at its calls.
pub fn split<'t>(key: &str, text: &str, expr: &'t Expr) -> Result<Split<'t>> {
    let mut calls = Vec::new();
    find_calls(expr, false, &mut calls).map_err(|e| e.into_error(key, text))?;
    let mut rest_text = text.to_string();
    for (_, span, _) in calls.iter().rev() {
        let blank = format!("0{}", " ".repeat(span.end - span.start - 1));
        rest_text.replace_range(span.start..span.end, &blank);
    }
    let rest = parse_text(key, &rest_text)?;
    Ok(Split { calls, rest })
}

/// The cross-sectional calls of `e`, outermost first in text order: each
/// one's function, span and argument. One inside another's argument is an
/// error (`inside`).
fn find_calls<'t>(
    e: &'t Expr,
    inside: bool,
    out: &mut Vec<(Across, Span, &'t Expr)>,
) -> std::result::Result<(), RuleError> {
    let err = |message: String| RuleError {
        at: e.span.start,
        message,
    };
    match &e.kind {
        ExprKind::Call(name, args) => {
            if let Some(what) = Across::named(name) {
                if inside {
                    return Err(err(format!(
                        "{name}(...) inside rank, count or total: their argument is each instrument's own series, which cannot itself compare the instruments"
                    )));
                }
                let [arg] = args.as_slice() else {
                    return Err(err(format!(
                        "{name} takes one argument (a series of each instrument), got {}",
                        args.len()
                    )));
                };
                find_calls(arg, true, &mut Vec::new())?;
                out.push((what, e.span, arg));
                return Ok(());
            }
            for a in args {
                find_calls(a, inside, out)?;
            }
        }
        ExprKind::Neg(x) | ExprKind::Not(x) => find_calls(x, inside, out)?,
        ExprKind::Binary(_, a, b) => {
            find_calls(a, inside, out)?;
            find_calls(b, inside, out)?;
        }
        ExprKind::On(kind, _, _, x) => {
            let mut calls = Vec::new();
            find_calls(x, inside, &mut calls)?;
            if !calls.is_empty() {
                return Err(err(format!(
                    "rank, count and total compare the instruments at one time: write them outside {}(…)",
                    kind.name()
                )));
            }
        }
        ExprKind::Number(_) | ExprKind::Bool(_) | ExprKind::Name(_) | ExprKind::Column(_) => {}
    }
    Ok(())
}
