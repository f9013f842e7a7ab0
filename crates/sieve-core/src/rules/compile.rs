//! Compiling a [`RuleSource`]: the rules and definitions checked into one
//! graph, the parameters' specs, the plan, and which fast path the screen
//! may take (a crossing pair, rules gated by a crossing, twins of windows).

use std::borrow::Cow;

use super::check::{suggest, Checker};
use super::compiled::{Roots, RuleStrategy, Rules};
use super::functions::{Func, Windowed};
use super::gates::PairFilters;
use super::ir::{Col, Id, Op, Ty};
use super::keys::{KeyValue, ManagedRoots, Role};
use super::parse;
use super::plan::Plan;
use super::source::{check_name, RuleAxis, RuleSource, MAX_DEFINES};
use crate::error::{Error, Result};
use crate::key;
use crate::strategy::{ParamKind, ParamSpec};

impl RuleStrategy {
    /// Compiles `source`; errors name the key and point at the column.
    pub fn compile(source: RuleSource) -> Result<RuleStrategy> {
        let (rules, params) = Rules::compile(source)?;
        let summary = match rules.source.read_also.as_slice() {
            [] => format!(
                "rule strategy: entry \"{}\", exit \"{}\"",
                rules.source.entry, rules.source.exit
            ),
            read => {
                let keys: Vec<String> = read
                    .iter()
                    .map(|(k, t, _)| format!("{k} \"{t}\""))
                    .collect();
                format!("target weights: {}", keys.join(", "))
            }
        };
        let params: Vec<ParamSpec> = params
            .into_iter()
            .map(|(name, spec)| ParamSpec {
                name: Cow::Owned(name),
                ..spec
            })
            .collect();
        Ok(RuleStrategy {
            name: rules.source.name.clone(),
            summary,
            params,
            rules,
        })
    }
}

impl Rules {
    /// The rules and each parameter's name and spec (`spec.name` unset).
    pub(super) fn compile(source: RuleSource) -> Result<(Rules, Vec<(String, ParamSpec)>)> {
        check_limits(&source)?;
        let names: Vec<String> = source.params.iter().map(|(n, _)| n.clone()).collect();
        let define_names: Vec<String> = source.define.iter().map(|(n, _)| n.clone()).collect();
        let mut checker = Checker::new(names.clone(), define_names, source.functions.clone());
        compile_defines(&mut checker, &source, &names)?;
        let roots = compile_roots(&mut checker, &source)?;
        let mut reached = roots.all();
        for (key, text, number) in &source.read_also {
            let ty = if *number { Ty::Num } else { Ty::Bool };
            reached.extend(compile_across(&mut checker, key, text, ty)?);
        }
        mark_reached(&mut checker, &reached)?;
        // A target-weight portfolio's parameters are read by its weights.
        let readers = match source.read_also.is_empty() {
            true => ANY_RULE,
            false => "portfolio.weight or portfolio.rebalance",
        };
        let params = param_specs(&checker, &source.params, readers)?;
        let int_params = params
            .iter()
            .enumerate()
            .filter(|(_, (_, p))| p.kind == ParamKind::Int)
            .fold(0u64, |m, (i, _)| m | 1 << i);
        let plan = Plan::new(&checker.graph, &roots.all(), int_params);
        let frames = Rules::frames_of(&checker.graph, params.len(), int_params);
        let mut rules = Rules {
            n_params: params.len(),
            graph: checker.graph,
            roots,
            plan,
            defines: checker.defines,
            canonical: Vec::new(),
            cross_pair: None,
            pair_filters: PairFilters::default(),
            gated: None,
            frames,
            source,
        };
        // The fast paths the screen may take.
        rules.canonical = rules.twins_of_windows();
        if let Some((pair, filters)) = rules.crossing_pair() {
            rules.cross_pair = Some(pair);
            rules.pair_filters = filters;
        }
        if rules.cross_pair.is_none() {
            rules.gated = rules.find_gates();
        }
        Ok((rules, params))
    }

    /// [`Rules::cross_pair`]: entry and exit the two crossings of one pair
    /// of shared averages of prices, each `and`-ed with terms read on one
    /// bar alone (its [`PairFilters`]; none: the plain pair), and nothing
    /// else (no short rules, stops, trade management or state). Averages
    /// of prices are defined from their warm-up on, so the scan (which
    /// keeps its memory over a bar where either is undefined) and the
    /// rules (which reset it there) agree.
    pub(super) fn crossing_pair(&self) -> Option<((Id, Id), PairFilters)> {
        let r = &self.roots;
        if r.short.is_some() || r.stop.is_some() || r.managed.any() || self.plan.reads_state() {
            return None;
        }
        let op = |id: Id| &self.graph.nodes[id].op;
        let (up, entry) = self.pair_terms(r.entry, Func::CrossAbove)?;
        let (down, exit) = self.pair_terms(r.exit, Func::CrossBelow)?;
        let (Op::Call(_, up), Op::Call(_, down)) = (op(up), op(down)) else {
            return None;
        };
        let average_of_prices = |id: Id| {
            let Op::Call(Func::Windowed(w), args) = op(id) else {
                return false;
            };
            // Its one series, a price (`obv()`, `atr(n)` read none).
            let price = matches!(
                args.first().map(|&a| op(a)),
                Some(Op::Col(Col::Open | Col::High | Col::Low | Col::Close))
            ) && w.spec().series.len() == 1;
            w.spec().gapless && price && self.plan.shared[id].is_some()
        };
        (up == down && average_of_prices(up[0]) && average_of_prices(up[1]))
            .then(|| ((up[0], up[1]), PairFilters { entry, exit }))
    }

    /// [`Rules::canonical`]: windowed calls `f(x, p)` of one shared input
    /// `x` that reads no parameter, with a parameter `p` as the window, are
    /// keyed by the first of them and the window's value.
    pub(super) fn twins_of_windows(&self) -> Vec<Id> {
        let mut first: Vec<((Windowed, Option<Id>), Id)> = Vec::new();
        (0..self.graph.nodes.len())
            .map(|id| {
                let Op::Call(Func::Windowed(f), args) = &self.graph.nodes[id].op else {
                    return id;
                };
                let input = match f.spec().series.len() {
                    0 => None,
                    1 => Some(args[0]),
                    _ => return id,
                };
                let window = f.window_arg().map(|k| &self.graph.nodes[args[k]].op);
                let simple = matches!(window, Some(Op::Param(_)))
                    && input.is_none_or(|a| self.graph.nodes[a].deps == 0)
                    && self.plan.shared[id]
                        .as_ref()
                        .is_some_and(|ps| ps.len() == 1);
                if !simple {
                    return id;
                }
                match first.iter().find(|(k, _)| *k == (*f, input)) {
                    Some(&(_, c)) => c,
                    None => {
                        first.push(((*f, input), id));
                        id
                    }
                }
            })
            .collect()
    }
}

/// What a rule strategy may not be: named as a built-in, more than 64
/// parameters, more than [`MAX_DEFINES`] definitions, a parameter name a
/// rule cannot write.
fn check_limits(source: &RuleSource) -> Result<()> {
    if crate::strategy::registry()
        .iter()
        .any(|s| s.name() == source.name)
    {
        return Err(Error::config(
            key::STRATEGY_NAME,
            format!(
                "'{}' is a built-in strategy; give your rule strategy another name",
                source.name
            ),
        ));
    }
    if source.params.len() > 64 {
        return Err(Error::config(
            key::STRATEGY_PARAMS,
            "a rule strategy takes at most 64 parameters",
        ));
    }
    if source.define.len() > MAX_DEFINES {
        return Err(Error::config(
            key::STRATEGY_DEFINE,
            format!(
                "{} definitions; a rule strategy takes at most {MAX_DEFINES}",
                source.define.len()
            ),
        ));
    }
    for (name, _) in &source.params {
        check_name(&key::param(name), name)?;
    }
    Ok(())
}

/// `[strategy.define]`, in order: each usable by the ones below it.
fn compile_defines(checker: &mut Checker, source: &RuleSource, params: &[String]) -> Result<()> {
    for (name, text) in &source.define {
        let key = key::define(name);
        check_name(&key, name)?;
        if params.contains(name) {
            return Err(Error::config(
                key,
                format!("'{name}' is already a parameter name"),
            ));
        }
        let id = compile_text(checker, &key, text, None)?;
        checker.define(name, id);
    }
    Ok(())
}

/// The rules, the trailing stop and the trade-management keys, each a
/// root of the graph.
fn compile_roots(checker: &mut Checker, source: &RuleSource) -> Result<Roots> {
    let rule = |c: &mut Checker, key: &str, text: &str| {
        compile_text(c, &key::strategy(key), text, Some(Ty::Bool))
    };
    let entry = rule(checker, "entry", &source.entry)?;
    let exit = rule(checker, "exit", &source.exit)?;
    let short = match (&source.short_entry, &source.short_exit) {
        (Some(a), Some(b)) => Some((
            rule(checker, "short_entry", a)?,
            rule(checker, "short_exit", b)?,
        )),
        (None, None) => None,
        (Some(_), None) => {
            return Err(Error::config(
                key::STRATEGY_SHORT_EXIT,
                "missing: short_entry and short_exit come together",
            ))
        }
        (None, Some(_)) => {
            return Err(Error::config(
                key::STRATEGY_SHORT_ENTRY,
                "missing: short_entry and short_exit come together",
            ))
        }
    };
    let stop = match &source.trailing_stop {
        Some(t) => Some(compile_text(
            checker,
            key::STRATEGY_TRAILING_STOP,
            t,
            Some(Ty::Num),
        )?),
        None => None,
    };
    let mut managed = ManagedRoots::default();
    for (spec, value) in source.management.entries() {
        let key = spec.name;
        let id = match value {
            KeyValue::Number(v) => checker.number(*v),
            KeyValue::Expr(text) => {
                compile_text(checker, &key::strategy(key), text, Some(Ty::Num))?
            }
        };
        // A moving stop is read on every close of the trade: it may read
        // the trade (`entry_price` for a breakeven, `bars_held`); so may
        // an entry order's level (a pyramid's add above the last entry).
        let reads_trade = matches!(
            spec.role,
            Role::StopLevel | Role::EntryStop | Role::EntryLimit
        );
        if checker.graph.nodes[id].state && !reads_trade {
            return Err(Error::config(
                key::strategy(key),
                "is read on the close that decides the entry, before the trade exists, so it cannot read position, entry_price or bars_held (a stop or target is measured from the entry price already)",
            ));
        }
        // One key per role: `Management` holds no more.
        let _ = managed.set(spec, id);
    }
    Ok(Roots {
        entry,
        exit,
        short,
        stop,
        managed,
    })
}

/// What the rules reach: a definition or parameter nothing reaches would
/// only enlarge the grid (and the trial count) for nothing. Marks each
/// parameter used or not; a definition nothing reaches, or an unused
/// parameter a bare name nearly spells (a typo read as a data column), is
/// an error.
fn mark_reached(checker: &mut Checker, roots: &[Id]) -> Result<()> {
    let mut reached = vec![false; checker.graph.nodes.len()];
    let mut stack = roots.to_vec();
    while let Some(id) = stack.pop() {
        if !std::mem::replace(&mut reached[id], true) {
            stack.extend(checker.graph.nodes[id].op.children());
        }
    }
    let unread =
        |(name, id): &&(String, Id)| !reached[*id] && !checker.framed_defines.contains(name);
    if let Some((name, _)) = checker.defines.iter().find(unread) {
        return Err(Error::config(
            key::define(name),
            "is not used by any rule (remove it, or use it)",
        ));
    }
    for (i, u) in checker.params.iter_mut().enumerate() {
        u.used = checker
            .graph
            .nodes
            .iter()
            .zip(&reached)
            .any(|(n, &r)| r && n.op == Op::Param(i));
    }
    for u in checker.params.iter().filter(|u| !u.used) {
        let typo = checker
            .graph
            .user
            .iter()
            .find(|c| !c.quoted && !suggest(&c.name, [u.name.as_str()]).is_empty());
        if let Some(c) = typo {
            let column = c.text[..c.at.min(c.text.len())].chars().count() + 1;
            return Err(Error::config(
                key::param(&u.name),
                format!(
                    "is not used by any rule or definition, but the rules read '{}' ({}, column {column}), which is no parameter and so reads a column of the data: is it a typo of '{}'?",
                    c.name, c.key, u.name
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn compile_text(
    checker: &mut Checker,
    key: &str,
    text: &str,
    want: Option<Ty>,
) -> Result<Id> {
    let expr = parse::parse(text).map_err(|e| e.into_error(key, text))?;
    checker
        .compile(key, text, &expr, want)
        .map_err(|e| e.into_error(key, text))
}

/// What reads a rule strategy's parameters (for messages).
const ANY_RULE: &str = "any rule or definition";

/// `text` (config key `key`, of type `ty`), which may call `rank`,
/// `count` and `total`: each call's argument (a number of one instrument)
/// and the rest with the calls as numbers, every mistake shown in the text
/// as written. Their nodes.
fn compile_across(checker: &mut Checker, key: &str, text: &str, ty: Ty) -> Result<Vec<Id>> {
    let expr = super::across::parse_text(key, text)?;
    let split = super::across::split(key, text, &expr)?;
    let mut ids = Vec::new();
    for (_, _, arg) in &split.calls {
        let id = checker.compile(key, text, arg, Some(Ty::Num));
        ids.push(id.map_err(|e| e.into_error(key, text))?);
    }
    let rest = checker.compile(key, text, &split.rest, Some(ty));
    ids.push(rest.map_err(|e| e.into_error(key, text))?);
    Ok(ids)
}

/// The parameters' specs: whole-number kinds for windows (every grid value
/// checked), any real value for the rest; the default is the fixed value
/// or the grid's first.
pub(super) fn param_specs(
    checker: &Checker,
    axes: &[(String, RuleAxis)],
    readers: &str,
) -> Result<Vec<(String, ParamSpec)>> {
    let mut specs = Vec::new();
    for (u, (name, axis)) in checker.params.iter().zip(axes) {
        let key = key::param(name);
        if !u.used {
            return Err(Error::config(
                key,
                format!("is not used by {readers} (remove it, or use it)"),
            ));
        }
        let values = &axis
            .as_ref()
            .map_err(|message| Error::config(&key, message.clone()))?
            .values;
        // A target-weight portfolio's counts (`top`) are whole where the
        // grid is written in whole numbers: its zoom keeps them whole.
        let whole = readers != ANY_RULE && axis.as_ref().is_ok_and(|a| a.integers);
        let kind = if u.window.is_some() || whole {
            ParamKind::Int
        } else {
            ParamKind::Float
        };
        if let Some((rule, column)) = &u.window {
            let at = format!("used as a window length ({rule}, column {column})");
            if let Some(v) = values.iter().find(|v| v.fract() != 0.0) {
                return Err(Error::config(
                    key,
                    format!("{at}, so its values must be whole numbers, but the grid has {v}"),
                ));
            }
            if let (Some(min), Some(v)) = (
                u.min,
                values.iter().find(|&&v| v < u.min.unwrap_or(0) as f64),
            ) {
                let why = if min == 0 {
                    "a negative shift would read the future (look-ahead)"
                } else {
                    "a window is at least 1 bar"
                };
                return Err(Error::config(
                    key,
                    format!("{at}, but the grid has {v}: {why}"),
                ));
            }
        }
        let (min, max) = match kind {
            ParamKind::Int => (u.min.map_or(-1e9, |m| m as f64), 1e9),
            ParamKind::Float => (f64::MIN, f64::MAX),
        };
        let first = values.first().copied().unwrap_or(0.0);
        let last = values.last().copied().unwrap_or(first);
        let spec = ParamSpec {
            name: Cow::Borrowed(""),
            kind,
            default: first,
            min,
            max,
            grid: (first, last, 1.0),
            doc: if kind == ParamKind::Int {
                "window length"
            } else {
                "rule parameter"
            },
        };
        specs.push((name.clone(), spec));
    }
    Ok(specs)
}
