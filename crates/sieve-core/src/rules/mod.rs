//! Rule strategies: a strategy written in the config as `entry` / `exit`
//! rules over indicators, compiled once into a [`Plan`] and run by the same
//! engine and metrics as the built-ins.
//!
//! [`parse`] turns text into expressions, [`check`] resolves names and types
//! into one graph, [`plan`] decides what is computed once per indicator
//! setting and what per combination, and [`eval`] runs it.

mod builtin;
mod check;
mod eval;
mod external;
mod functions;
mod gated;
mod ir;
mod parse;
mod plan;
mod scalar;
mod signals;
mod wgsl;

use std::borrow::Cow;
use std::cell::RefCell;

use check::Checker;
use eval::{Frame, Machine, Signals, BLOCK, SUB};
use functions::Func;
use functions::{Arg, Windowed};
use ir::{Graph, Id, Op, Ty, UserColumn};
use plan::Plan;

use crate::data::Bars;
use crate::engine::{Distance, EngineConfig, ExitReason, Managed, Sink, TradePlan, TradeState};
use crate::error::{Error, Result};
use crate::grid::{AxisValues, ParamSpace};
use crate::indicators::{Indicator, IndicatorSet, RuleSeries, SeriesSource, RULE_SETTING_LEN};
use crate::simd::Level;
use crate::strategy::{
    Changes, Direction, GpuKernel, LaneBuffers, ParamKind, ParamSpec, PerBar, Strategy, Targets,
    TradeManagement,
};

pub use builtin::ManagedBuiltin;
pub use check::suggest;
pub use eval::column;
pub use external::{ExternalFunction, ExternalFunctions};
pub use ir::Col;
pub use signals::{signal_targets, simulate_signals, SignalKeys};

pub use wgsl::{RuleKernel, BAR_COLUMNS, ENTRY_POINT, NAN_BITS};

/// A syntax or meaning error at byte `at` of a rule's text.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleError {
    pub at: usize,
    pub message: String,
}

impl RuleError {
    /// As a config error: the key and column, then the rule with a caret.
    fn into_error(self, key: &str, text: &str) -> Error {
        let at = self.at.min(text.len());
        let column = text[..at].chars().count() + 1;
        let shown = text.replace(['\n', '\r', '\t'], " ");
        Error::Rule {
            key: format!("{key}, column {column}"),
            column,
            message: format!(
                "{}\n    {shown}\n    {}^",
                self.message,
                " ".repeat(column - 1)
            ),
        }
    }
}

/// One `[strategy.params]` entry of a rule strategy: its values, or what
/// is wrong with them (the message, reported under the entry's key when the
/// compiler reaches it: after the rules, and after whether it is used).
pub type RuleAxis = std::result::Result<AxisValues, String>;

/// The most `[strategy.define]` entries a rule strategy may have.
pub const MAX_DEFINES: usize = 10_000;

/// What the config says of a rule strategy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleSource {
    pub name: String,
    pub entry: String,
    pub exit: String,
    pub short_entry: Option<String>,
    pub short_exit: Option<String>,
    pub trailing_stop: Option<String>,
    /// `stop_loss`, `take_profit`, `max_bars`, `size` and the rest.
    pub management: Management,
    /// `[strategy.define]` in declaration order.
    pub define: Vec<(String, String)>,
    /// `[strategy.params]`: the parameters are exactly its keys, in order.
    pub params: Vec<(String, RuleAxis)>,
    /// Functions defined outside sieve that the rules may call.
    pub functions: ExternalFunctions,
}

/// The trade-management keys of `[strategy]` as written: a stop and a
/// target, each with whether its distance is a fraction of the entry
/// price (`stop_loss`, `take_profit`) or in price units (`stop_distance`,
/// `target_distance`), `max_bars` and `size`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Management {
    pub stop: Option<(String, bool)>,
    pub target: Option<(String, bool)>,
    pub max_bars: Option<String>,
    pub size: Option<String>,
}

impl Management {
    /// The keys given, by name, with their text.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, &str)> {
        // The fraction's key, else the price distance's.
        fn named<'a>(
            pair: &'a Option<(String, bool)>,
            keys: [&'static str; 2],
        ) -> Option<(&'static str, &'a str)> {
            let (text, fraction) = pair.as_ref()?;
            Some((keys[usize::from(!*fraction)], text.as_str()))
        }
        let stop = named(&self.stop, ["stop_loss", "stop_distance"]);
        let target = named(&self.target, ["take_profit", "target_distance"]);
        let max_bars = self.max_bars.as_deref().map(|t| ("max_bars", t));
        let size = self.size.as_deref().map(|t| ("size", t));
        stop.into_iter().chain(target).chain(max_bars).chain(size)
    }

    /// The names of the keys given.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries().map(|(k, _)| k)
    }
}

/// The rules' root nodes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Roots {
    entry: Id,
    exit: Id,
    /// Both or neither.
    short: Option<(Id, Id)>,
    stop: Option<Id>,
    managed: ManagedRoots,
}

impl Roots {
    /// The short entry and exit rules in `direction`: none when long
    /// only, the exit and entry swapped when the short rules are not
    /// given.
    fn short_rules(&self, direction: Direction) -> Option<(Id, Id)> {
        match (direction, self.short) {
            (Direction::Long, _) => None,
            (Direction::LongShort, None) => Some((self.exit, self.entry)),
            (Direction::LongShort, Some(pair)) => Some(pair),
        }
    }
}

/// The trade-management keys, each as a `K`: their nodes
/// ([`ManagedRoots`]), how gated rules read them, their values per bar
/// ([`KeyValues`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct ManagedKeys<K> {
    /// With whether the distance is a fraction of the entry price.
    stop: Option<(K, bool)>,
    target: Option<(K, bool)>,
    max_bars: Option<K>,
    size: Option<K>,
}

/// The trade-management keys' nodes.
type ManagedRoots = ManagedKeys<Id>;

/// One block's trade-management values, per bar.
type KeyValues<'a> = ManagedKeys<&'a [f64]>;

impl<K> ManagedKeys<K> {
    fn as_ref(&self) -> ManagedKeys<&K> {
        ManagedKeys {
            stop: self.stop.as_ref().map(|(k, fraction)| (k, *fraction)),
            target: self.target.as_ref().map(|(k, fraction)| (k, *fraction)),
            max_bars: self.max_bars.as_ref(),
            size: self.size.as_ref(),
        }
    }
}

impl<K: Copy> ManagedKeys<K> {
    /// Each key as `f` makes it; `None` where `f` fails for one.
    fn try_map<L>(&self, f: impl Fn(K) -> Option<L>) -> Option<ManagedKeys<L>> {
        let distance = |d: Option<(K, bool)>| match d {
            Some((k, fraction)) => f(k).map(|l| Some((l, fraction))),
            None => Some(None),
        };
        let plain = |k: Option<K>| match k {
            Some(k) => f(k).map(Some),
            None => Some(None),
        };
        Some(ManagedKeys {
            stop: distance(self.stop)?,
            target: distance(self.target)?,
            max_bars: plain(self.max_bars)?,
            size: plain(self.size)?,
        })
    }

    /// Each key as `f` makes it.
    fn map<L>(&self, f: impl Fn(K) -> L) -> ManagedKeys<L> {
        self.try_map(|k| Some(f(k)))
            .expect("a map that cannot fail")
    }

    fn keys(&self) -> impl Iterator<Item = K> {
        let m = *self;
        m.stop
            .map(|s| s.0)
            .into_iter()
            .chain(m.target.map(|t| t.0))
            .chain(m.max_bars)
            .chain(m.size)
    }

    fn any(&self) -> bool {
        self.keys().next().is_some()
    }
}

/// A compiled rule strategy: the [`Rules`] plus the names the
/// [`Strategy`] trait hands out, owned (a run shares it by `Arc`).
#[derive(Debug)]
pub struct RuleStrategy {
    rules: Rules,
    name: String,
    summary: String,
    params: Vec<ParamSpec>,
}

/// The compiled rules themselves (what the fuzz target runs).
#[derive(Debug)]
struct Rules {
    source: RuleSource,
    n_params: usize,
    graph: Graph,
    roots: Roots,
    plan: Plan,
    /// `[strategy.define]` names and their nodes.
    defines: Vec<(String, Id)>,
    /// Per node: the node whose tables it shares — the same windowed
    /// function of the same parameter-free input with its window one
    /// parameter (`sma(close, fast)` and `sma(close, slow)` read one set of
    /// SMAs); itself for every other node.
    canonical: Vec<Id>,
    /// Rules that are one crossing pair and nothing else (`entry =
    /// cross_above(a, b)`, `exit = cross_below(a, b)`), `a` and `b` shared
    /// averages of prices: the screen finds their changes with the
    /// built-in crosses' scan.
    cross_pair: Option<(Id, Id)>,
    /// Per rule, a crossing of fewer parameters than the strategy has,
    /// and-ed into it, the rest evaluable bar by bar alone: the screen
    /// evaluates the rules only where one holds (`rules/gated.rs`). `None`
    /// when some rule has none, or for a crossing pair.
    gated: Option<gated::Gated>,
}

impl PartialEq for RuleStrategy {
    fn eq(&self, other: &Self) -> bool {
        self.rules.source == other.rules.source
    }
}

/// A parameter or definition name must be one a rule can write, and not a
/// column, function or keyword.
fn check_name(key: &str, name: &str) -> Result<()> {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !identifier {
        return Err(Error::config(
            key,
            format!("'{name}' is not a name a rule can use: letters, digits and _, not starting with a digit"),
        ));
    }
    if reserved(name) {
        return Err(Error::config(
            key,
            format!("'{name}' is already a column, function or keyword"),
        ));
    }
    Ok(())
}

/// Names a definition (or a function defined outside sieve) may not take:
/// the rule language's own words, values and functions.
pub fn reserved(name: &str) -> bool {
    Col::ALL.iter().any(|(n, _)| *n == name)
        || Func::named(name).is_some()
        || matches!(name, "and" | "or" | "not" | "true" | "false" | "col")
}

impl RuleStrategy {
    /// Compiles `source`; errors name the key and point at the column.
    pub fn compile(source: RuleSource) -> Result<RuleStrategy> {
        let (rules, params) = Rules::compile(source)?;
        let summary = format!(
            "rule strategy: entry \"{}\", exit \"{}\"",
            rules.source.entry, rules.source.exit
        );
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
    fn compile(source: RuleSource) -> Result<(Rules, Vec<(String, ParamSpec)>)> {
        if crate::strategy::registry()
            .iter()
            .any(|s| s.name() == source.name)
        {
            return Err(Error::config(
                "strategy.name",
                format!(
                    "'{}' is a built-in strategy; give your rule strategy another name",
                    source.name
                ),
            ));
        }
        let names: Vec<String> = source.params.iter().map(|(n, _)| n.clone()).collect();
        if names.len() > 64 {
            return Err(Error::config(
                "strategy.params",
                "a rule strategy takes at most 64 parameters",
            ));
        }
        if source.define.len() > MAX_DEFINES {
            return Err(Error::config(
                "strategy.define",
                format!(
                    "{} definitions; a rule strategy takes at most {MAX_DEFINES}",
                    source.define.len()
                ),
            ));
        }
        let define_names: Vec<String> = source.define.iter().map(|(n, _)| n.clone()).collect();
        for name in &names {
            check_name(&format!("strategy.params.{name}"), name)?;
        }
        let mut checker = Checker::new(names.clone(), define_names, source.functions.clone());
        for (name, text) in &source.define {
            let key = format!("strategy.define.{name}");
            check_name(&key, name)?;
            if names.contains(name) {
                return Err(Error::config(
                    key,
                    format!("'{name}' is already a parameter name"),
                ));
            }
            let id = compile_text(&mut checker, &key, text, None)?;
            checker.define(name, id);
        }
        let rule = |c: &mut Checker, key: &str, text: &str| {
            compile_text(c, &format!("strategy.{key}"), text, Some(Ty::Bool))
        };
        let entry = rule(&mut checker, "entry", &source.entry)?;
        let exit = rule(&mut checker, "exit", &source.exit)?;
        let short = match (&source.short_entry, &source.short_exit) {
            (Some(a), Some(b)) => Some((
                rule(&mut checker, "short_entry", a)?,
                rule(&mut checker, "short_exit", b)?,
            )),
            (None, None) => None,
            (Some(_), None) => {
                return Err(Error::config(
                    "strategy.short_exit",
                    "missing: short_entry and short_exit come together",
                ))
            }
            (None, Some(_)) => {
                return Err(Error::config(
                    "strategy.short_entry",
                    "missing: short_entry and short_exit come together",
                ))
            }
        };
        let stop = match &source.trailing_stop {
            Some(t) => Some(compile_text(
                &mut checker,
                "strategy.trailing_stop",
                t,
                Some(Ty::Num),
            )?),
            None => None,
        };
        let mut managed = ManagedRoots::default();
        for (key, text) in source.management.entries() {
            let id = compile_text(
                &mut checker,
                &format!("strategy.{key}"),
                text,
                Some(Ty::Num),
            )?;
            if checker.graph.nodes[id].state {
                return Err(Error::config(
                    format!("strategy.{key}"),
                    "is read on the close that decides the entry, before the trade exists, so it cannot read position, entry_price or bars_held (a stop or target is measured from the entry price already)",
                ));
            }
            match key {
                "stop_loss" | "stop_distance" => managed.stop = Some((id, key == "stop_loss")),
                "take_profit" | "target_distance" => {
                    managed.target = Some((id, key == "take_profit"));
                }
                "max_bars" => managed.max_bars = Some(id),
                _ => managed.size = Some(id),
            }
        }
        // What the rules reach: a definition or parameter nothing reaches
        // would only enlarge the grid (and the trial count) for nothing.
        let mut roots_all = vec![entry, exit];
        roots_all.extend(short.iter().flat_map(|&(a, b)| [a, b]));
        roots_all.extend(stop);
        roots_all.extend(managed.keys());
        let mut reached = vec![false; checker.graph.nodes.len()];
        let mut stack = roots_all;
        while let Some(id) = stack.pop() {
            if !std::mem::replace(&mut reached[id], true) {
                stack.extend(checker.graph.nodes[id].op.children());
            }
        }
        if let Some((name, _)) = checker.defines.iter().find(|(_, id)| !reached[*id]) {
            return Err(Error::config(
                format!("strategy.define.{name}"),
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
        // A parameter unused where a bare name nearly spells it: the name
        // is a typo, not a data column.
        for u in checker.params.iter().filter(|u| !u.used) {
            let typo = checker
                .graph
                .user
                .iter()
                .find(|c| !c.quoted && !suggest(&c.name, [u.name.as_str()]).is_empty());
            if let Some(c) = typo {
                let column = c.text[..c.at.min(c.text.len())].chars().count() + 1;
                return Err(Error::config(
                    format!("strategy.params.{}", u.name),
                    format!(
                        "is not used by any rule or definition, but the rules read '{}' ({}, column {column}), which is no parameter and so reads a column of the data: is it a typo of '{}'?",
                        c.name, c.key, u.name
                    ),
                ));
            }
        }
        let params = param_specs(&checker, &source.params)?;
        let int_params = params
            .iter()
            .enumerate()
            .filter(|(_, (_, p))| p.kind == ParamKind::Int)
            .fold(0u64, |m, (i, _)| m | 1 << i);
        let mut root_list = vec![entry, exit];
        root_list.extend(short.iter().flat_map(|&(a, b)| [a, b]));
        root_list.extend(stop);
        root_list.extend(managed.keys());
        let plan = Plan::new(&checker.graph, &root_list, int_params);
        let rules = Rules {
            n_params: params.len(),
            graph: checker.graph,
            roots: Roots {
                entry,
                exit,
                short,
                stop,
                managed,
            },
            plan,
            defines: checker.defines,
            canonical: Vec::new(),
            cross_pair: None,
            gated: None,
            source,
        };
        let mut rules = rules;
        rules.canonical = rules.twins_of_windows();
        rules.cross_pair = rules.crossing_pair();
        if rules.cross_pair.is_none() {
            rules.gated = rules.find_gates();
        }
        Ok((rules, params))
    }

    /// [`Rules::cross_pair`]: entry and exit the two crossings of one pair
    /// of shared averages of prices, nothing else (no short rules, stops,
    /// trade management or state). Averages of prices are defined from
    /// their warm-up on, so the scan (which keeps its memory over a bar
    /// where either is undefined) and the rules (which reset it there)
    /// agree.
    fn crossing_pair(&self) -> Option<(Id, Id)> {
        let r = &self.roots;
        if r.short.is_some() || r.stop.is_some() || r.managed.any() || self.plan.reads_state() {
            return None;
        }
        let op = |id: Id| &self.graph.nodes[id].op;
        let (Op::Call(Func::CrossAbove, up), Op::Call(Func::CrossBelow, down)) =
            (op(r.entry), op(r.exit))
        else {
            return None;
        };
        let average_of_prices = |id: Id| {
            let Op::Call(Func::Windowed(w), args) = op(id) else {
                return false;
            };
            let average = matches!(
                w,
                Windowed::Sma
                    | Windowed::Ema
                    | Windowed::Wma
                    | Windowed::Rma
                    | Windowed::Highest
                    | Windowed::Lowest
            );
            // Its one series, a price (`obv()`, `atr(n)` read none).
            let price = matches!(
                args.first().map(|&a| op(a)),
                Some(Op::Col(Col::Open | Col::High | Col::Low | Col::Close))
            ) && w.spec().series.len() == 1;
            average && price && self.plan.shared[id].is_some()
        };
        (up == down && average_of_prices(up[0]) && average_of_prices(up[1])).then(|| (up[0], up[1]))
    }

    /// [`Rules::canonical`]: windowed calls `f(x, p)` of one shared input
    /// `x` that reads no parameter, with a parameter `p` as the window, are
    /// keyed by the first of them and the window's value.
    fn twins_of_windows(&self) -> Vec<Id> {
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

    /// The key of shared node `id` at the parameters `params` (a twin of
    /// windows: its canonical node's key at its window).
    fn key(&self, id: Id, params: &[f64]) -> Indicator {
        let mut setting = [0u64; RULE_SETTING_LEN];
        if let Some(ps) = &self.plan.shared[id] {
            for (s, &p) in setting.iter_mut().zip(ps) {
                *s = params[p].to_bits();
            }
        }
        Indicator::Rule(RuleSeries {
            node: self.canonical.get(id).copied().unwrap_or(id) as u32,
            setting,
        })
    }

    /// The parameters of a shared key (NaN for those it does not read).
    fn params_of(&self, key: RuleSeries) -> Vec<f64> {
        let mut params = vec![f64::NAN; self.n_params];
        if let Some(ps) = self
            .plan
            .shared
            .get(key.node as usize)
            .and_then(Option::as_ref)
        {
            for (&p, &s) in ps.iter().zip(&key.setting) {
                params[p] = f64::from_bits(s);
            }
        }
        params
    }

    /// Computes materialised node `id` as a whole column; `get` supplies the
    /// columns it reads.
    fn compute_column<'a>(
        &self,
        id: Id,
        bars: &Bars,
        scalars: &[f64],
        get: &dyn Fn(Id) -> &'a [f64],
        frame: &mut Frame,
    ) -> Vec<f64> {
        match &self.graph.nodes[id].op {
            Op::User(k) => match bars.extra(&self.graph.user[*k].name) {
                Some(column) => column.values.clone(),
                // Checked with the data; undefined if ever asked otherwise.
                None => vec![f64::NAN; bars.len()],
            },
            Op::Extern(k, args) => {
                let settings: Vec<f64> = args.iter().map(|&a| scalars[a]).collect();
                match self.graph.functions.get(*k) {
                    Some(f) => f.series(bars, &settings),
                    None => vec![f64::NAN; bars.len()],
                }
            }
            Op::Call(Func::Windowed(f), args) => {
                let (inputs, settings) = args.split_at(f.spec().series.len());
                let settings: Vec<f64> = settings.iter().map(|&a| scalars[a]).collect();
                // An input that does not change from bar to bar, as a column.
                let splats: Vec<Option<Vec<f64>>> = inputs
                    .iter()
                    .map(|&a| {
                        let node = &self.graph.nodes[a];
                        let column = match node.op {
                            Op::Col(c) => eval::column(bars, c).is_some(),
                            _ => node.series,
                        };
                        (!column).then(|| vec![scalars[a]; bars.len()])
                    })
                    .collect();
                let xs: Vec<&[f64]> = inputs
                    .iter()
                    .zip(&splats)
                    .map(|(&a, splat)| match (splat, &self.graph.nodes[a].op) {
                        (Some(v), _) => v.as_slice(),
                        (None, Op::Col(c)) => eval::column(bars, *c).unwrap_or_default(),
                        (None, _) => get(a),
                    })
                    .collect();
                f.column(&xs, &settings, bars)
            }
            _ => {
                let mut full: Vec<Option<&[f64]>> = vec![None; self.graph.nodes.len()];
                self.fill_columns(bars, &mut full);
                for &i in &self.plan.inputs[id] {
                    full[i] = Some(get(i));
                }
                let program = &self.plan.programs[id];
                self.start(frame, scalars);
                let mut out = vec![f64::NAN; bars.len()];
                for start in (0..bars.len()).step_by(BLOCK) {
                    let len = BLOCK.min(bars.len() - start);
                    frame.eval(&self.graph, program, &self.plan.twins, &full, start, len);
                    out[start..start + len].copy_from_slice(frame.num(&full, id, start, len));
                }
                out
            }
        }
    }

    /// Points every column node at its data.
    fn fill_columns<'a>(&self, bars: &'a Bars, full: &mut [Option<&'a [f64]>]) {
        for &(id, c) in &self.plan.columns {
            full[id] = eval::column(bars, c);
        }
    }

    /// Clears `frame` for a new pass and fills in the scalars.
    /// A column the data lacks (volume) reads as undefined: its node's
    /// scalar is NaN, so its slot is filled with NaN.
    fn start(&self, frame: &mut Frame, scalars: &[f64]) {
        frame.reset(self.graph.nodes.len());
        for &i in &self.plan.splat {
            frame.splat(&self.graph, i, scalars[i]);
        }
        for &(id, _) in self.plan.columns.iter().filter(|(_, c)| *c == Col::Volume) {
            frame.splat(&self.graph, id, f64::NAN);
        }
    }

    /// Whether any rule reads the volume column.
    fn reads_volume(&self) -> bool {
        self.plan.columns.iter().any(|(_, c)| *c == Col::Volume)
            || self
                .graph
                .nodes
                .iter()
                .any(|n| matches!(n.op, Op::Call(Func::Windowed(w), _) if w.spec().reads_volume))
    }

    /// Per node, the bar from which it can be defined (lengths add up along
    /// a chain); one pass, children first.
    fn warmups(&self, scalars: &[f64]) -> Vec<usize> {
        let mut w = vec![0usize; self.graph.nodes.len()];
        for id in 0..w.len() {
            w[id] = self.node_warmup(id, scalars, &w);
        }
        w
    }

    fn node_warmup(&self, id: Id, scalars: &[f64], done: &[usize]) -> usize {
        let node = &self.graph.nodes[id];
        let below = node
            .op
            .children()
            .iter()
            .map(|&c| done[c])
            .max()
            .unwrap_or(0);
        let window = |i: Id| {
            let v = scalars[i];
            if v.is_finite() && v >= 0.0 {
                v.min(1e9) as usize
            } else {
                0
            }
        };
        match &node.op {
            Op::Call(f, args) => match f {
                Func::Windowed(w) => {
                    let spec = w.spec();
                    let inputs = spec.series.len();
                    // At most three settings (`stoch_d`); no allocation per call.
                    let mut windows = [0usize; 3];
                    let settings = &args[inputs..];
                    for (slot, &a) in windows.iter_mut().zip(settings) {
                        *slot = window(a);
                    }
                    let lag = (spec.lag)(&windows[..settings.len().min(3)]);
                    match inputs {
                        0 => lag,
                        _ => below + lag,
                    }
                }
                // Either branch may decide.
                Func::If => done[args[0]].max(done[args[1]].min(done[args[2]])),
                Func::Abs
                | Func::Min
                | Func::Max
                | Func::Clamp
                | Func::CrossAbove
                | Func::CrossBelow => below,
            },
            // Either side can make it true.
            Op::Bin(parse::BinOp::Or, a, b) => done[*a].min(done[*b]),
            _ => below,
        }
    }
}

impl RuleStrategy {
    /// Whether `short_entry` / `short_exit` are given.
    pub fn has_short_rules(&self) -> bool {
        self.rules.roots.short.is_some()
    }

    /// The rules as written, the definitions and the parameters, for
    /// `sieve strategies --config`.
    fn describe_rules(&self, space: &ParamSpace) -> String {
        let mut out = format!("{}\n    {}\n", self.name, self.summary);
        let s = &self.rules.source;
        for (key, text) in [
            ("short_entry", &s.short_entry),
            ("short_exit", &s.short_exit),
            ("trailing_stop", &s.trailing_stop),
        ] {
            if let Some(t) = text {
                out.push_str(&format!("    {key}: {t}\n"));
            }
        }
        if s.management.keys().next().is_some() {
            out.push_str("    trade management (read on the entry's decision bar):\n");
            for (key, text) in s.management.entries() {
                out.push_str(&format!("        {key:<16} {text}\n"));
            }
        }
        if !s.define.is_empty() {
            out.push_str("    definitions:\n");
            for (name, text) in &s.define {
                out.push_str(&format!("        {name} = {text}\n"));
            }
        }
        out.push_str("    parameters:\n");
        for p in &self.params {
            let kind = match p.kind {
                ParamKind::Int => "int (a window length)",
                ParamKind::Float => "float",
            };
            let values = space.axes.iter().find(|a| a.name == p.name).map_or_else(
                || format!("fixed {}", crate::format::float(p.default)),
                |a| format!("{} values", a.values.len()),
            );
            out.push_str(&format!("        {:<12} {kind}, {values}\n", p.name));
        }
        let keys = self.rules.space_indicators(space);
        out.push_str(&format!(
            "    shared series the grid computes: {} (each once, {} bytes per bar)\n",
            keys.len(),
            keys.len() * 8
        ));
        for &id in &self.rules.plan.shared_nodes {
            let canonical = self.rules.canonical[id];
            if canonical != id {
                out.push_str(&format!(
                    "        {:<40} the tables of {}\n",
                    self.show(id),
                    self.show(canonical)
                ));
                continue;
            }
            let count = keys
                .iter()
                .filter(|k| matches!(k, Indicator::Rule(r) if r.node as usize == id))
                .count();
            let params: Vec<&str> = self.rules.plan.shared[id]
                .iter()
                .flatten()
                .map(|&p| self.params[p].name.as_ref())
                .collect();
            out.push_str(&format!(
                "        {:<40} {count} setting{} ({})\n",
                self.show(id),
                if count == 1 { "" } else { "s" },
                if params.is_empty() {
                    "fixed".to_string()
                } else {
                    params.join(" × ")
                }
            ));
        }
        out
    }

    /// A node as text (definitions by name).
    fn show(&self, id: Id) -> String {
        self.show_within(id, 8)
    }

    fn show_within(&self, id: Id, depth: usize) -> String {
        if depth == 0 {
            return "…".to_string();
        }
        let show = |i: Id| self.show_within(i, depth - 1);
        let compound = !matches!(
            self.rules.graph.nodes[id].op,
            Op::Col(_) | Op::User(_) | Op::Param(_) | Op::Number(_) | Op::Bool(_)
        );
        if let Some((name, _)) = self
            .rules
            .defines
            .iter()
            .find(|(_, d)| *d == id)
            .filter(|_| compound)
        {
            return name.clone();
        }
        match &self.rules.graph.nodes[id].op {
            Op::Number(bits) => crate::format::float(f64::from_bits(*bits)),
            Op::Bool(b) => b.to_string(),
            Op::Param(i) => self.params[*i].name.to_string(),
            Op::Col(c) => Col::ALL
                .iter()
                .find(|(_, k)| k == c)
                .map_or("?", |(n, _)| n)
                .to_string(),
            Op::User(k) => {
                let u = &self.rules.graph.user[*k];
                match (u.quoted, u.name.contains('"')) {
                    (false, _) => u.name.clone(),
                    (true, false) => format!("col(\"{}\")", u.name),
                    (true, true) => format!("col('{}')", u.name),
                }
            }
            Op::Neg(a) => format!("-{}", show(*a)),
            Op::Not(a) => format!("not {}", show(*a)),
            Op::Bin(op, a, b) => format!("({} {} {})", show(*a), op.symbol(), show(*b)),
            Op::Call(f, args) => {
                let a: Vec<String> = args
                    .iter()
                    .zip(f.args())
                    .map(|(&i, kind)| match (&self.rules.graph.nodes[i].op, kind) {
                        // A true/false series the checker read as 1 / 0.
                        (Op::Call(Func::If, c), Arg::Bool | Arg::Same) if f.is_windowed() => {
                            show(c[0])
                        }
                        _ => show(i),
                    })
                    .collect();
                format!("{}({})", f.name(), a.join(", "))
            }
            Op::Extern(k, args) => {
                let name = self.rules.graph.functions.get(*k).map_or("?", |f| f.name());
                let a: Vec<String> = args.iter().map(|&i| show(i)).collect();
                format!("{name}({})", a.join(", "))
            }
        }
    }
}

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
    const KEY: &str = "expression";
    let mut checker = Checker::new(Vec::new(), Vec::new(), functions.clone());
    let id = compile_text(&mut checker, KEY, expression, None)?;
    if checker.graph.nodes[id].state {
        return Err(Error::config(
            KEY,
            "reads position, entry_price or bars_held, which exist only while a strategy trades",
        ));
    }
    let ty = checker.graph.nodes[id].ty;
    let rules = Rules {
        source: RuleSource {
            name: KEY.to_string(),
            ..RuleSource::default()
        },
        n_params: 0,
        plan: Plan::new(&checker.graph, &[id], 0),
        graph: checker.graph,
        roots: Roots {
            entry: id,
            exit: id,
            short: None,
            stop: None,
            managed: ManagedRoots::default(),
        },
        defines: Vec::new(),
        canonical: Vec::new(),
        cross_pair: None,
        gated: None,
    };
    rules.check_data(bars)?;
    let mut keys = Vec::new();
    rules.indicators(&[], &mut keys);
    let set = IndicatorSet::build_for(bars, &rules, keys);
    let mut out = vec![f64::NAN; bars.len()];
    rules.blocks(bars, &set, &[], Direction::Long, bars.len(), |block| {
        let (start, len) = (block.start, block.len);
        let out = &mut out[start..start + len];
        match ty {
            Ty::Num => out.copy_from_slice(block.frame.num(block.full, id, start, len)),
            Ty::Bool => {
                for (o, &b) in out.iter_mut().zip(block.frame.bools(id, len)) {
                    *o = f64::from(b);
                }
            }
        }
    });
    Ok(out)
}

fn compile_text(checker: &mut Checker, key: &str, text: &str, want: Option<Ty>) -> Result<Id> {
    let expr = parse::parse(text).map_err(|e| e.into_error(key, text))?;
    checker
        .compile(key, text, &expr, want)
        .map_err(|e| e.into_error(key, text))
}

/// The parameters' specs: whole-number kinds for windows (every grid value
/// checked), any real value for the rest; the default is the fixed value
/// or the grid's first.
fn param_specs(checker: &Checker, axes: &[(String, RuleAxis)]) -> Result<Vec<(String, ParamSpec)>> {
    let mut specs = Vec::new();
    for (u, (name, axis)) in checker.params.iter().zip(axes) {
        let key = format!("strategy.params.{name}");
        if !u.used {
            return Err(Error::config(
                key,
                "is not used by any rule or definition (remove it, or use it)",
            ));
        }
        let values = &axis
            .as_ref()
            .map_err(|message| Error::config(&key, message.clone()))?
            .values;
        let kind = if u.window.is_some() {
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

#[derive(Default)]
struct Scratch {
    scalars: Vec<f64>,
    frame: Frame,
}

thread_local! {
    /// Per-thread buffers, so screening allocates nothing per combination.
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Signals that never fire (the short side of a long-only strategy).
static NEVER: [u8; BLOCK] = [0; BLOCK];

impl SeriesSource for Rules {
    fn inputs(&self, key: Indicator) -> Vec<Indicator> {
        match key {
            Indicator::Rule(r) => {
                let params = self.params_of(r);
                self.plan
                    .inputs
                    .get(r.node as usize)
                    .map_or_else(Vec::new, |ins| {
                        ins.iter().map(|&i| self.key(i, &params)).collect()
                    })
            }
            other => other.inputs(),
        }
    }

    fn compute<'a>(
        &self,
        bars: &Bars,
        key: Indicator,
        input: &dyn Fn(Indicator) -> &'a [f64],
    ) -> Vec<f64> {
        let Indicator::Rule(r) = key else {
            return key.compute_with(bars, input);
        };
        let id = r.node as usize;
        if id >= self.graph.nodes.len() {
            return vec![f64::NAN; bars.len()];
        }
        let params = self.params_of(r);
        let scalars = ir::scalar_values(&self.graph, &params, self.graph.nodes.len());
        let get = |i: Id| input(self.key(i, &params));
        self.compute_column(id, bars, &scalars, &get, &mut Frame::default())
    }
}

impl Rules {
    pub fn indicators(&self, params: &[f64], out: &mut Vec<Indicator>) {
        out.extend(
            self.plan
                .shared_nodes
                .iter()
                .map(|&id| self.key(id, params)),
        );
    }

    fn check_data(&self, bars: &Bars) -> Result<()> {
        for u in &self.graph.user {
            let twice = bars.extra.iter().filter(|c| c.name == u.name).count() > 1;
            let problem = match bars.extra(&u.name) {
                Some(_) if twice => format!(
                    "the data has two columns named '{}'; which one is meant is ambiguous (rename one)",
                    u.name
                ),
                Some(column) => match &column.problem {
                    Some(p) => format!("the data's column '{}' is not numbers ({p})", u.name),
                    None => continue,
                },
                None => self.unknown_column(u, bars),
            };
            return Err(RuleError {
                at: u.at,
                message: problem,
            }
            .into_error(&u.key, &u.text));
        }
        if self.reads_volume() && bars.volume.is_none() {
            let readers: Vec<&str> = Windowed::ALL
                .iter()
                .map(|w| w.spec())
                .filter(|s| s.reads_volume)
                .map(|s| s.name)
                .collect();
            return Err(Error::config(
                "strategy",
                format!(
                    "the rules of '{}' read `volume` (directly or through {}), but the data has no volume column (name one `volume`, or remove what reads it from the rules)",
                    self.source.name,
                    readers.join(" or ")
                ),
            ));
        }
        Ok(())
    }

    /// Why `u` names nothing: no parameter, definition or value, and no
    /// column of `bars`; lists the columns the data has.
    fn unknown_column(&self, u: &UserColumn, bars: &Bars) -> String {
        if let Some(role) = crate::data::column_role(&u.name).filter(|_| u.quoted) {
            return format!("'{}' is {role}, not a column rules read by col(…)", u.name);
        }
        let columns = bars.other_columns();
        let listed = match columns.is_empty() {
            true => "the data has no columns beyond its time, prices and volume".to_string(),
            false => format!("the data's other columns are {}", columns.join(", ")),
        };
        let mut known = match u.quoted {
            true => Vec::new(),
            false => check::bare_names(
                self.defines.iter().map(|(n, _)| n.as_str()),
                self.source.params.iter().map(|(n, _)| n.as_str()),
            ),
        };
        known.extend(columns.iter().map(|c| c.to_string()));
        let hint = suggest(&u.name, known.iter().map(String::as_str));
        match u.quoted {
            true => format!("the data has no column '{}'{hint}; {listed}", u.name),
            false => format!(
                "unknown name '{}'{hint}: not a parameter (those need values in [strategy.params]), a definition, a value or a column of the data; {listed}",
                u.name
            ),
        }
    }

    fn warmup(&self, params: &[f64]) -> usize {
        let scalars = ir::scalar_values(&self.graph, params, self.graph.nodes.len());
        let w = self.warmups(&scalars);
        // Any rule that can open a position (the exit opens a short in
        // long_short without short rules; the direction is not known here).
        let r = self.roots;
        let first = w[r.entry].min(w[r.exit]);
        r.short.map_or(first, |(short, _)| first.min(w[short]))
    }

    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        let mut keys = Vec::new();
        for &id in &self.plan.shared_nodes {
            let ps = self.plan.shared[id].as_deref().unwrap_or_default();
            // Constraints among these parameters alone prune settings.
            let local: Vec<&crate::grid::Constraint> = space
                .constraints
                .iter()
                .filter(|c| c.params().iter().all(|p| ps.contains(p)))
                .collect();
            space.for_each_setting(ps, |params| {
                if local.iter().all(|c| c.holds(params)) {
                    keys.push(self.key(id, params));
                }
            });
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn positions(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        out: &mut [i8],
    ) {
        let n = out.len().min(bars.len());
        self.hold(bars, indicators, params, direction, n, &mut PerBar(out));
        out[n..].fill(0);
    }

    /// The positions of `params` on bars `..n` (at most the bars), into
    /// `out` (the trade's state read as flat throughout: a strategy that
    /// reads it runs through [`Rules::manage`]): from the gates' bars where
    /// the rules have gates, else bar by bar.
    fn hold(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        out: &mut impl Targets,
    ) {
        if !self.hold_gated(bars, indicators, params, direction, n, out) {
            self.hold_by_bar(bars, indicators, params, direction, n, out);
        }
    }

    /// [`Rules::hold`] bar by bar.
    fn hold_by_bar(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        out: &mut impl Targets,
    ) {
        let mut machine = Machine::default();
        self.blocks(bars, indicators, params, direction, n, |block| {
            block.project(0, TradeState::FLAT);
            machine.run(&block.signals(), block.start, out);
        });
    }

    /// The engine over bars `..n` with these rules' trade-management keys
    /// (evaluated at `params`), `decider` deciding on each close.
    #[allow(clippy::too_many_arguments)]
    fn manage(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        cfg: &EngineConfig,
        n: usize,
        decider: &mut impl Decider,
        sink: &mut dyn Sink,
    ) {
        let n = n.min(bars.len());
        // Only trade management liquidates (a trailing stop alone trades
        // as the plain engine does).
        let liquidates = self.roots.managed.any() || self.plan.reads_state();
        let mut engine = Managed::over_bars(cfg, bars, n, liquidates);
        let reads_state = self.plan.reads_state();
        // Bars from here on pass untouched (streamed when something moves).
        let mut quiet_from: Option<usize> = None;
        self.blocks(bars, indicators, params, direction, n, |block| {
            let start = block.start;
            let mut shown = engine.trade_state();
            block.project(0, shown);
            let mut b = 0;
            while b < block.len {
                let e = (b + SUB).min(block.len);
                let (from, to) = (start + b, start + e);
                if reads_state {
                    let now = engine.trade_state();
                    if !now.same(&shown) {
                        block.project(b, now);
                        shown = now;
                    }
                }
                if engine.quiet(from, to)
                    && (engine.done() || decider.quiet(&block.signals(), start, b, e))
                {
                    quiet_from.get_or_insert(from);
                    b = e;
                    continue;
                }
                if let Some(q) = quiet_from.take() {
                    engine.pass(q, from, sink);
                }
                if !reads_state {
                    // The signals and keys stand for the whole stretch.
                    let (signals, keys) = (block.signals(), block.keys());
                    for t in b..e {
                        if engine.before_close(start + t, sink) {
                            decider.set_position(0);
                        }
                        decide(&mut engine, decider, &signals, &keys, start, t, sink);
                    }
                } else {
                    for t in b..e {
                        if engine.before_close(start + t, sink) {
                            decider.set_position(0);
                        }
                        let now = engine.trade_state();
                        if !now.same(&shown) {
                            block.project(t, now);
                            shown = now;
                        }
                        let (signals, keys) = (block.signals(), block.keys());
                        decide(&mut engine, decider, &signals, &keys, start, t, sink);
                    }
                }
                b = e;
            }
        });
        if let Some(q) = quiet_from {
            engine.pass(q, n, sink);
        }
        engine.finish(n, sink);
    }

    /// Evaluates the rules of `params` over bars `..n` (at most the bars)
    /// block by block, handing each [`Block`] to `each`, which sets the
    /// trade's state ([`Block::project`]) before it reads the signals.
    fn blocks(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        mut each: impl FnMut(&mut Block),
    ) {
        self.with_columns(bars, indicators, params, |scalars, full, frame| {
            self.start(frame, scalars);
            let n = n.min(bars.len());
            for start in (0..n).step_by(BLOCK) {
                let len = BLOCK.min(n - start);
                frame.eval(
                    &self.graph,
                    &self.plan.main,
                    &self.plan.twins,
                    full,
                    start,
                    len,
                );
                each(&mut Block {
                    rules: self,
                    frame,
                    full,
                    close: &bars.close[start..start + len],
                    direction,
                    start,
                    len,
                });
            }
        });
    }

    /// Hands `each` the scalars of `params` and the whole columns the rules
    /// read there (data columns, shared series, and the series computed for
    /// this combination), with the thread's frame.
    fn with_columns<R>(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        each: impl FnOnce(&[f64], &[Option<&[f64]>], &mut Frame) -> R,
    ) -> R {
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let Scratch { scalars, frame } = &mut *scratch;
            let nodes = self.graph.nodes.len();
            scalars.resize(nodes, f64::NAN);
            ir::scalar_values_into(&self.graph, params, scalars);

            let mut full: Vec<Option<&[f64]>> = vec![None; nodes];
            self.fill_columns(bars, &mut full);
            for &id in &self.plan.shared_nodes {
                full[id] = Some(indicators.get(self.key(id, params)));
            }
            // Columns that read a real-valued parameter: per combination.
            let mut own: Vec<(Id, Vec<f64>)> = Vec::new();
            for &id in &self.plan.per_combination {
                let column = {
                    let get = |i: Id| -> &[f64] {
                        full[i]
                            .or_else(|| {
                                own.iter().find(|(j, _)| *j == i).map(|(_, c)| c.as_slice())
                            })
                            .unwrap_or(&[])
                    };
                    self.compute_column(id, bars, scalars, &get, frame)
                };
                own.push((id, column));
            }
            for (id, column) in &own {
                full[*id] = Some(column);
            }
            each(scalars, &full, frame)
        })
    }
}

/// One block of bars evaluated by [`Rules::blocks`]: everything but what
/// reads the trade's state, which [`Block::project`] evaluates.
struct Block<'a, 'c> {
    rules: &'a Rules,
    frame: &'a mut Frame,
    full: &'a [Option<&'c [f64]>],
    close: &'a [f64],
    direction: Direction,
    /// The block's first bar and its length.
    start: usize,
    len: usize,
}

impl Block<'_, '_> {
    /// The trade's state from bar `from` of the block on is `state` (its
    /// bars held counting on): fills `position`, `entry_price` and
    /// `bars_held` there and evaluates what reads them (the whole block:
    /// nothing there remembers a bar, and the bars before `from` keep the
    /// state they had).
    fn project(&mut self, from: usize, state: TradeState) {
        let plan = &self.rules.plan;
        if !plan.reads_state() {
            return;
        }
        for &(id, col) in &plan.columns {
            let slot = &mut self.frame.slot_mut(id)[from..self.len];
            match col {
                Col::Position => slot.fill(f64::from(state.position)),
                Col::EntryPrice => slot.fill(state.entry_price),
                Col::BarsHeld => {
                    for (i, v) in slot.iter_mut().enumerate() {
                        *v = state.bars_held(self.start + from + i);
                    }
                }
                _ => {}
            }
        }
        self.frame.eval(
            &self.rules.graph,
            &plan.state_program,
            &plan.twins,
            self.full,
            self.start,
            self.len,
        );
    }

    /// The block's signals.
    fn signals(&self) -> Signals<'_> {
        let (frame, r, len) = (&*self.frame, self.rules.roots, self.len);
        let (entry, exit) = (frame.bools(r.entry, len), frame.bools(r.exit, len));
        let never = &NEVER[..len];
        let (short_entry, short_exit) = match r.short_rules(self.direction) {
            None => (never, never),
            Some((a, b)) => (frame.bools(a, len), frame.bools(b, len)),
        };
        Signals {
            long_entry: entry,
            long_exit: exit,
            short_entry,
            short_exit,
            stop: r.stop.map(|s| frame.num(self.full, s, self.start, len)),
            close: self.close,
        }
    }

    /// The block's trade-management values.
    fn keys(&self) -> KeyValues<'_> {
        let num = |id: Id| self.frame.num(self.full, id, self.start, self.len);
        self.rules.roots.managed.map(num)
    }
}

/// Step 3 of bar `t` of the block starting at `start`: the decider's
/// decision with the plan of the keys on this close, filled or kept for the
/// next open by the engine (which may end the trade: the decider then holds
/// what the engine holds).
#[inline(always)]
fn decide<S: Sink + ?Sized>(
    engine: &mut Managed,
    decider: &mut impl Decider,
    signals: &Signals,
    keys: &KeyValues,
    start: usize,
    t: usize,
    sink: &mut S,
) {
    let reason = decider.step(signals, start, t);
    let read = |k: Option<&[f64]>| k.map_or(f64::NAN, |k| k[t]);
    let distance =
        |k: Option<(&[f64], bool)>| k.map_or(Distance::Off, |(k, f)| Distance::new(k[t], f));
    let plan = TradePlan {
        stop: distance(keys.stop),
        target: distance(keys.target),
        max_bars: read(keys.max_bars),
        size: read(keys.size),
    };
    let held = engine.close(start + t, decider.position(), reason, plan, sink);
    decider.set_position(held);
}

/// What decides the position on each close of a managed simulation: the
/// rules' state machine, or a built-in's targets read as events.
trait Decider {
    /// Whether bars `b..e` of the block starting at `start` decide nothing.
    fn quiet(&self, signals: &Signals, start: usize, b: usize, e: usize) -> bool;
    /// Bar `t`'s decision (the position is then [`Decider::position`]),
    /// and why a position it leaves is left.
    fn step(&mut self, signals: &Signals, start: usize, t: usize) -> ExitReason;
    fn position(&self) -> i8;
    /// The position the engine holds (flat after a stop).
    fn set_position(&mut self, position: i8);
}

impl Decider for Machine {
    #[inline(always)]
    fn quiet(&self, signals: &Signals, _start: usize, b: usize, e: usize) -> bool {
        Machine::quiet(self, signals, b, e)
    }
    #[inline(always)]
    fn step(&mut self, signals: &Signals, _start: usize, t: usize) -> ExitReason {
        Machine::step(self, signals, t).1
    }
    fn position(&self) -> i8 {
        self.position
    }
    fn set_position(&mut self, position: i8) {
        self.position = position;
    }
}

/// A built-in's targets as events: where its target changes, the position
/// moves there (after a stop, its next change decides again).
pub(crate) struct TargetEvents<'a> {
    targets: &'a [i8],
    /// The target of the bar before.
    last: i8,
    position: i8,
}

impl<'a> TargetEvents<'a> {
    pub(crate) fn new(targets: &'a [i8]) -> Self {
        TargetEvents {
            targets,
            last: 0,
            position: 0,
        }
    }
}

impl Decider for TargetEvents<'_> {
    fn quiet(&self, _signals: &Signals, start: usize, b: usize, e: usize) -> bool {
        self.targets[start + b..start + e]
            .iter()
            .all(|&t| t == self.last)
    }
    fn step(&mut self, _signals: &Signals, start: usize, t: usize) -> ExitReason {
        let target = self.targets[start + t];
        if target != self.last {
            self.last = target;
            self.position = target;
        }
        ExitReason::Rule
    }
    fn position(&self) -> i8 {
        self.position
    }
    fn set_position(&mut self, position: i8) {
        self.position = position;
    }
}

impl Strategy for RuleStrategy {
    fn name(&self) -> &str {
        &self.name
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    fn params(&self) -> &[ParamSpec] {
        &self.params
    }

    fn gpu_kernel(&self) -> GpuKernel<'_> {
        match self.rule_kernel() {
            Ok(kernel) => GpuKernel::Generated(Box::new(wgsl::RuleGpu {
                strategy: self,
                kernel,
            })),
            Err(construct) => GpuKernel::Unsupported(construct),
        }
    }

    fn describe(&self, space: &ParamSpace) -> Option<String> {
        Some(self.describe_rules(space))
    }

    fn indicators(&self, params: &[f64], out: &mut Vec<Indicator>) {
        self.rules.indicators(params, out);
    }

    fn series(&self) -> &dyn SeriesSource {
        &self.rules
    }

    fn check_data(&self, bars: &Bars) -> Result<()> {
        self.rules.check_data(bars)
    }

    fn data_columns(&self) -> Vec<String> {
        self.rules
            .graph
            .user
            .iter()
            .map(|u| u.name.clone())
            .collect()
    }

    fn warmup(&self, params: &[f64]) -> usize {
        self.rules.warmup(params)
    }

    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        self.rules.space_indicators(space)
    }

    /// In lanes where the lane engine runs halves of four lanes (AVX2),
    /// each skipping where its lanes are all flat: measured there
    /// (interleaved runs) `sma_rules` over all pairs 1.27×, bench_cli.py's
    /// MACD grid 1.07×, large grids of the RSI, Bollinger and
    /// weighted-score examples 1.12×, 1.01×, 1.04×. AVX-512 runs all
    /// eight lanes in step (they skip only where all eight are flat), not
    /// measured for rules: one at a time there, as before.
    fn lanes_pay(&self, _params: &[&[f64]]) -> bool {
        self.rules.cross_pair.is_some()
            || self.rules.gated.is_some()
            || Level::best() == Level::Avx2
    }

    fn screen_path(&self) -> String {
        if self.trade_management() == TradeManagement::Full {
            // Said after "one combination at a time: trade management".
            return match &self.rules.gated {
                Some(g) => format!(
                    "the rules read only where their {} crossing(s) of fewer parameters hold, the engine only on the bars it works on",
                    g.gate_count()
                ),
                None => "the rule program and the engine bar by bar".into(),
            };
        }
        if self.rules.cross_pair.is_some() {
            "lanes: the built-in crosses' scan (the rules are one crossing pair of shared averages)"
                .into()
        } else if let Some(g) = &self.rules.gated {
            format!(
                "lanes: the rules read only where their crossings hold ({} crossing(s) of fewer parameters, their bars found once per setting)",
                g.gate_count()
            )
        } else if Level::best() == Level::Avx2 {
            "lanes: the rule program bar by bar".into()
        } else {
            "one combination at a time: the rule program bar by bar (its lanes pay on AVX2 only)"
                .into()
        }
    }

    /// A crossing pair's scan compares the 16-bit codes first.
    fn coded_series(&self) -> bool {
        self.rules.cross_pair.is_some()
    }

    fn positions(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        out: &mut [i8],
    ) {
        self.rules
            .positions(bars, indicators, params, direction, out);
    }

    fn trade_management(&self) -> TradeManagement {
        let r = &self.rules.roots;
        if r.managed.any() || self.rules.plan.reads_state() {
            TradeManagement::Full
        } else if r.stop.is_some() {
            TradeManagement::ExitReasons
        } else {
            TradeManagement::None
        }
    }

    fn simulate(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        cfg: &EngineConfig,
        end: usize,
        sink: &mut dyn Sink,
    ) {
        // The state machine decides on each close from the position the
        // engine holds (flat after a stop, a target, `max_bars`).
        if self
            .rules
            .manage_gated(bars, indicators, params, direction, cfg, end, sink)
        {
            return;
        }
        let mut machine = Machine::default();
        self.rules.manage(
            bars,
            indicators,
            params,
            direction,
            cfg,
            end,
            &mut machine,
            sink,
        );
    }

    /// Straight to changes: the state machine writes only the bars where
    /// the position moves (no position per bar written and scanned).
    /// Measured against positions turned into changes (interleaved, AVX2):
    /// `sma_rules` 1.20×, `rsi_rules` 1.23×, `bollinger` 1.15×, the MACD
    /// and weighted-score grids within the noise (0.97–1.05×).
    fn lane_changes(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[&[f64]],
        direction: Direction,
        end: usize,
        level: Level,
        _buffers: &mut LaneBuffers,
        out: &mut [Changes],
    ) {
        if let Some((a, b)) = self.rules.cross_pair {
            // The built-in crosses' scan (measured: the rule sma_cross at
            // the built-in's speed, see BENCHMARKS.md).
            debug_assert!(params.len() <= crate::simd::LANES);
            let mut pairs = [(Indicator::Sma(1), Indicator::Sma(1)); crate::simd::LANES];
            for (pair, p) in pairs.iter_mut().zip(params) {
                *pair = (self.rules.key(a, p), self.rules.key(b, p));
            }
            let job = crate::strategy::CrossJob {
                bars,
                indicators,
                pairs: &pairs[..params.len().min(pairs.len())],
                direction,
                end,
            };
            return job.changes(level, out);
        }
        let end = end.min(bars.len());
        for (p, changes) in params.iter().zip(out.iter_mut()) {
            changes.reset(end);
            self.rules
                .hold(bars, indicators, p, direction, end, changes);
        }
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
