//! Names, types and windows: [`Expr`] trees → one shared [`Graph`] of
//! typed nodes. Equal sub-expressions become one node (so `sma(close, n)` in
//! both rules is computed once), and every node records whether it varies
//! per bar and which parameters it reads.

use std::collections::HashMap;

use super::error::RuleError;
use super::functions::{Arg, Func, Windowed};
use super::ir::{Col, FrameGraph, FrameOn, Graph, Id, Node, Op, Ty, UserColumn};
use super::parse::{BinOp, Expr, ExprKind, OnKind};
use crate::data::timeframe::Timeframe;

/// How a parameter is used: lengths must be whole numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamUse {
    pub name: String,
    /// Where it is first used as a window (key, column), if anywhere.
    pub window: Option<(String, usize)>,
    /// The least value a window that is this parameter alone accepts.
    pub min: Option<i64>,
    pub used: bool,
}

pub struct Checker {
    pub graph: Graph,
    pub params: Vec<ParamUse>,
    /// Definitions in declaration order: name → node.
    pub defines: Vec<(String, Id)>,
    /// The same, by name (a chain of many definitions looks each up once).
    define_ids: HashMap<String, Id>,
    /// Every definition name, so a use before its definition is named as such.
    pending: std::collections::HashSet<String>,
    /// The key being compiled (for window-use records).
    key: String,
    /// The text being compiled (for columns).
    text: String,
    /// Each definition's key and text, so that an expression read on other
    /// bars compiles the ones it names there.
    define_texts: HashMap<String, (String, String)>,
    /// Which bars this graph is evaluated on: the strategy's, or inside
    /// `tf(…)` / `informative(…)`.
    inside: Inside,
    /// Definitions read inside `tf(…)` / `informative(…)` (used, though
    /// their node in this graph may be reached by nothing).
    pub framed_defines: std::collections::HashSet<String>,
}

/// Where an expression is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// The strategy's own bars.
    Bars,
    /// `tf(…)`: bars resampled (from the strategy's or an informative
    /// instrument's bars).
    Timeframe,
    /// `informative(…)`: another instrument's bars.
    Informative,
}

fn err(at: usize, message: impl Into<String>) -> RuleError {
    RuleError {
        at,
        message: message.into(),
    }
}

/// Every name a bare word in a rule can mean but a data column: the
/// prices and trade values, the calendar values, then `defines` and
/// `params`.
pub fn bare_names<'a>(
    defines: impl Iterator<Item = &'a str>,
    params: impl Iterator<Item = &'a str>,
) -> Vec<String> {
    let calendar = Windowed::ALL
        .iter()
        .filter(|w| w.calendar().is_some())
        .map(|w| w.spec().name);
    Col::ALL
        .iter()
        .map(|(n, _)| *n)
        .chain(calendar)
        .chain(defines)
        .chain(params)
        .map(str::to_string)
        .collect()
}

/// The known name closest to `name`, if any is close: one edit for names
/// of up to four letters (`smaa` → `sma`, but `sar` is not `atr`), two for
/// longer ones, a third of the name for long ones.
pub fn suggest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let chars = |s: &str| s.chars().count();
    let lower = name.to_lowercase();
    // A name that differs only in case comes first (distance 0), then the
    // nearest by edits, counted in characters.
    let best = known
        .into_iter()
        .map(|k| match k.to_lowercase() == lower {
            true => (0, k),
            false => (strsim::damerau_levenshtein(name, k), k),
        })
        .filter(|(d, k)| {
            let allowed = match chars(k).max(chars(name)) {
                0..=4 => 1,
                n => 2.max(n / 3),
            };
            *d <= allowed && *d < chars(k)
        })
        .min();
    match best {
        Some((_, k)) => format!(" (did you mean '{k}'?)"),
        None => String::new(),
    }
}

impl Checker {
    /// Records definition `name` as node `id` (the text just compiled).
    pub fn define(&mut self, name: &str, id: Id) {
        self.defines.push((name.to_string(), id));
        self.define_ids.insert(name.to_string(), id);
        let source = (self.key.clone(), self.text.clone());
        self.define_texts.insert(name.to_string(), source);
    }

    pub fn new(
        params: Vec<String>,
        define_names: Vec<String>,
        functions: super::ExternalFunctions,
    ) -> Checker {
        Checker {
            graph: Graph::with_functions(functions),
            params: params
                .into_iter()
                .map(|name| ParamUse {
                    name,
                    window: None,
                    min: None,
                    used: false,
                })
                .collect(),
            defines: Vec::new(),
            define_ids: HashMap::new(),
            pending: define_names.into_iter().collect(),
            key: String::new(),
            text: String::new(),
            define_texts: HashMap::new(),
            inside: Inside::Bars,
            framed_defines: Default::default(),
        }
    }

    /// Compiles `e` (the text of `key`) and checks it has type `want`.
    pub fn compile(
        &mut self,
        key: &str,
        text: &str,
        e: &Expr,
        want: Option<Ty>,
    ) -> Result<Id, RuleError> {
        self.key = key.to_string();
        self.text = text.to_string();
        let id = self.expr(e)?;
        if let Some(want) = want {
            let got = self.graph.nodes[id].ty;
            if got != want {
                return Err(err(
                    e.span.start,
                    format!(
                        "must be {}, but this is {}{}",
                        want.describe(),
                        got.describe(),
                        self.column_hint(id)
                    ),
                ));
            }
        }
        Ok(id)
    }

    /// For a data column where true/false is needed: how to write it.
    fn column_hint(&self, id: Id) -> String {
        match self.node(id).op {
            Op::User(k) => format!(
                " (a column of the data; a true/false column reads as 1/0: write {} > 0)",
                self.graph.user[k].name
            ),
            _ => String::new(),
        }
    }

    fn column(&self, at: usize) -> usize {
        self.text[..at.min(self.text.len())].chars().count() + 1
    }

    fn node(&self, id: Id) -> &Node {
        &self.graph.nodes[id]
    }

    fn expect(&self, id: Id, want: Ty, e: &Expr, what: &str) -> Result<(), RuleError> {
        let got = self.node(id).ty;
        if got != want {
            return Err(err(
                e.span.start,
                format!(
                    "{what} needs {}, found {}{}",
                    want.describe(),
                    got.describe(),
                    self.column_hint(id)
                ),
            ));
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<Id, RuleError> {
        Ok(match &e.kind {
            ExprKind::Number(v) => self.graph.add(Op::Number(v.to_bits()), Ty::Num, false, 0),
            ExprKind::Bool(b) => self.graph.add(Op::Bool(*b), Ty::Bool, false, 0),
            ExprKind::Name(name) => self.name(name, e)?,
            ExprKind::Column(name) => self.data_column(name, true, e),
            ExprKind::Neg(x) => {
                let a = self.expr(x)?;
                self.expect(a, Ty::Num, x, "'-'")?;
                let n = self.node(a).clone();
                self.graph.add(Op::Neg(a), Ty::Num, n.series, n.deps)
            }
            ExprKind::Not(x) => {
                let a = self.expr(x)?;
                self.expect(a, Ty::Bool, x, "'not'")?;
                let n = self.node(a).clone();
                self.graph.add(Op::Not(a), Ty::Bool, n.series, n.deps)
            }
            ExprKind::Binary(op, x, y) => {
                let (a, b) = (self.expr(x)?, self.expr(y)?);
                let (operand, result) = match op {
                    BinOp::And | BinOp::Or => (Ty::Bool, Ty::Bool),
                    o if o.is_comparison() => (Ty::Num, Ty::Bool),
                    _ => (Ty::Num, Ty::Num),
                };
                let what = format!("'{}'", op.symbol());
                self.expect(a, operand, x, &what)?;
                self.expect(b, operand, y, &what)?;
                let (na, nb) = (self.node(a).clone(), self.node(b).clone());
                self.graph.add(
                    Op::Bin(*op, a, b),
                    result,
                    na.series || nb.series,
                    na.deps | nb.deps,
                )
            }
            ExprKind::Call(name, args) => self.call(name, args, e)?,
            ExprKind::On(kind, word, at, inner) => self.frame(*kind, word, *at, inner, e)?,
        })
    }

    /// `tf("1d", x)` / `informative("btc", x)`: `x` compiled into a graph
    /// of its own (read on other bars), as a shared column of the
    /// parameters it reads; true/false stays true/false.
    fn frame(
        &mut self,
        kind: OnKind,
        word: &str,
        at: usize,
        inner: &Expr,
        e: &Expr,
    ) -> Result<Id, RuleError> {
        let (on, inside) = match kind {
            OnKind::Timeframe => {
                if self.inside == Inside::Timeframe {
                    return Err(err(
                        e.span.start,
                        "tf(…) inside tf(…): write the inner one on its own",
                    ));
                }
                let tf = Timeframe::parse(word).map_err(|m| err(at, m))?;
                (FrameOn::Timeframe(tf), Inside::Timeframe)
            }
            OnKind::Informative => {
                if self.inside != Inside::Bars {
                    return Err(err(
                        e.span.start,
                        "informative(…) is read on the strategy's own bars, not inside tf(…) or informative(…) (write informative(\"btc\", tf(\"1h\", …)) for another instrument's higher timeframe)",
                    ));
                }
                if word.is_empty() {
                    return Err(err(
                        at,
                        "informative needs the name of a data.informative instrument",
                    ));
                }
                (FrameOn::Informative(word.to_string()), Inside::Informative)
            }
        };
        let mut sub = Checker::new(
            self.params.iter().map(|p| p.name.clone()).collect(),
            self.pending.iter().cloned().collect(),
            self.graph.functions.clone(),
        );
        sub.inside = inside;
        sub.define_texts = self.define_texts.clone();
        sub.key = self.key.clone();
        sub.text = self.text.clone();
        let root = sub.expr(inner)?;
        let node = sub.node(root).clone();
        if node.state {
            return Err(err(
                inner.span.start,
                format!("{}(…) is read on other bars, where there is no trade: entry_price, bars_held and position are read outside it", kind.name()),
            ));
        }
        if let Some(u) = sub
            .graph
            .user
            .first()
            .filter(|_| inside == Inside::Timeframe)
        {
            // Read through a definition: said at the call, naming it.
            let (at, via) = match u.text == self.text {
                true => (u.at, String::new()),
                false => (e.span.start, format!(", read in {}", u.key)),
            };
            return Err(err(
                at,
                format!(
                    "tf(…) resamples open, high, low, close and volume; '{}'{via} is not one of them{} (a column of the data is read outside tf)",
                    u.name,
                    suggest(&u.name, bare_names(std::iter::empty(), self.params.iter().map(|p| p.name.as_str())).iter().map(String::as_str))
                ),
            ));
        }
        // What the inner expression makes of the parameters counts here.
        for (mine, theirs) in self.params.iter_mut().zip(&sub.params) {
            mine.used |= theirs.used;
            if mine.window.is_none() {
                mine.window.clone_from(&theirs.window);
            }
            mine.min = match (mine.min, theirs.min) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        self.framed_defines
            .extend(sub.defines.iter().map(|(n, _)| n.clone()));
        self.framed_defines
            .extend(sub.framed_defines.iter().cloned());
        let text = self.text[e.span.start..e.span.end.min(self.text.len())].to_string();
        let frame = FrameGraph {
            on,
            graph: sub.graph,
            root,
            text,
        };
        let k = match self
            .graph
            .frames
            .iter()
            .position(|f| f.graph == frame.graph && f.root == frame.root && f.on == frame.on)
        {
            Some(k) => k,
            None => {
                self.graph.frames.push(frame);
                self.graph.frames.len() - 1
            }
        };
        let ids: Vec<Id> = (0..64)
            .filter(|i| node.deps >> i & 1 == 1)
            .map(|i| self.graph.add(Op::Param(i), Ty::Num, false, 1 << i))
            .collect();
        let id = self.graph.add(Op::Frame(k, ids), Ty::Num, true, node.deps);
        if node.ty == Ty::Num {
            return Ok(id);
        }
        let one = self.number(1.0);
        Ok(self
            .graph
            .add(Op::Bin(BinOp::Eq, id, one), Ty::Bool, true, node.deps))
    }

    fn name(&mut self, name: &str, e: &Expr) -> Result<Id, RuleError> {
        if let Some((_, col)) = Col::ALL.iter().find(|(n, _)| *n == name) {
            return Ok(self.graph.add(Op::Col(*col), Ty::Num, true, 0));
        }
        // The calendar values: `hour` is `hour()`; `new_day` is true/false.
        let calendar = |f: &Func| matches!(f, Func::Windowed(w) if w.calendar().is_some());
        if let Some(Func::Windowed(w)) = Func::named(name).filter(calendar) {
            let value = self
                .graph
                .add(Op::Call(Func::Windowed(w), Vec::new()), Ty::Num, true, 0);
            if w != Windowed::NewDay {
                return Ok(value);
            }
            let one = self.number(1.0);
            return Ok(self
                .graph
                .add(Op::Bin(BinOp::Eq, value, one), Ty::Bool, true, 0));
        }
        if let Some(&id) = self.define_ids.get(name) {
            return Ok(id);
        }
        if self.inside != Inside::Bars {
            if let Some((key, text)) = self.define_texts.get(name).cloned() {
                return self.define_here(name, &key, &text, e);
            }
        }
        if let Some(i) = self.params.iter().position(|p| p.name == name) {
            self.params[i].used = true;
            return Ok(self.graph.add(Op::Param(i), Ty::Num, false, 1 << i));
        }
        if self.key == crate::key::define(name) {
            return Err(err(e.span.start, format!("'{name}' refers to itself")));
        }
        if self.pending.contains(name) {
            return Err(err(
                e.span.start,
                format!(
                    "'{name}' is defined after this; a definition can use only the ones above it"
                ),
            ));
        }
        if Func::named(name).is_some() {
            return Err(err(
                e.span.start,
                format!("'{name}' is a function; call it with its arguments, e.g. {name}(...)"),
            ));
        }
        // Any other name is a column of the data, checked against it.
        Ok(self.data_column(name, false, e))
    }

    /// Definition `name` (config key `key`, `text`) compiled on the bars
    /// this graph reads (inside `tf(…)` or `informative(…)`), where it is
    /// first named; a mistake there is said at the name, naming it.
    fn define_here(
        &mut self,
        name: &str,
        key: &str,
        text: &str,
        e: &Expr,
    ) -> Result<Id, RuleError> {
        let (outer_key, outer_text) = (
            std::mem::replace(&mut self.key, key.to_string()),
            std::mem::replace(&mut self.text, text.to_string()),
        );
        let compiled = super::parse::parse(text).and_then(|x| self.expr(&x));
        self.key = outer_key;
        self.text = outer_text;
        match compiled {
            Ok(id) => {
                self.defines.push((name.to_string(), id));
                self.define_ids.insert(name.to_string(), id);
                Ok(id)
            }
            Err(inner) => Err(err(
                e.span.start,
                format!(
                    "'{name}' ({key} = \"{text}\") cannot be read here: {}",
                    inner.message
                ),
            )),
        }
    }

    /// The node reading data column `name` (`col("…")` when `quoted`).
    fn data_column(&mut self, name: &str, quoted: bool, e: &Expr) -> Id {
        let price = Col::ALL
            .iter()
            .find(|(n, c)| !c.is_state() && n.eq_ignore_ascii_case(name));
        if let Some((_, col)) = price.filter(|_| quoted) {
            return self.graph.add(Op::Col(*col), Ty::Num, true, 0);
        }
        let k = match self.graph.user.iter().position(|u| u.name == name) {
            Some(k) => k,
            None => {
                self.graph.user.push(UserColumn {
                    name: name.to_string(),
                    quoted,
                    key: self.key.clone(),
                    text: self.text.clone(),
                    at: e.span.start,
                });
                self.graph.user.len() - 1
            }
        };
        self.graph.add(Op::User(k), Ty::Num, true, 0)
    }

    /// A setting cannot be a data column: a bare name there is a typo (or a
    /// parameter missing from [strategy.params]), said now.
    fn not_a_column(&self, id: Id, arg: &Expr) -> Result<(), RuleError> {
        match self.node(id).op {
            Op::User(k) if !self.graph.user[k].quoted => {
                Err(err(arg.span.start, self.unknown(&self.graph.user[k].name)))
            }
            _ => Ok(()),
        }
    }

    /// The message for a name that is nothing the rules know.
    pub fn unknown(&self, name: &str) -> String {
        let known = bare_names(
            self.defines.iter().map(|(n, _)| n.as_str()),
            self.params.iter().map(|p| p.name.as_str()),
        );
        format!(
            "unknown name '{name}'{}; a parameter needs its values in [strategy.params]",
            suggest(name, known.iter().map(String::as_str))
        )
    }

    fn call(&mut self, name: &str, args: &[Expr], e: &Expr) -> Result<Id, RuleError> {
        if Func::named(name).is_none() && self.graph.functions.named(name).is_some() {
            return self.external(name, args, e);
        }
        let Some(func) = Func::named(name) else {
            if super::functions::ACROSS.contains(&name) {
                return Err(err(
                    e.span.start,
                    format!("{name}(...) compares a portfolio's instruments at one time: it is read in portfolio.weight and portfolio.rebalance only (the rules read the columns rank and count of portfolio.rank_by)"),
                ));
            }
            let mut names: Vec<&str> = Func::all().map(Func::name).collect();
            names.extend(self.graph.functions.0.iter().map(|f| f.name()));
            names.extend(super::functions::ACROSS);
            let hint = suggest(name, names);
            let yours = match self.graph.functions.is_empty() {
                true => String::new(),
                false => format!("; yours: {}", self.graph.functions.signatures().join(", ")),
            };
            return Err(err(
                e.span.start,
                format!(
                    "unknown function '{name}'{hint}; the functions are {}{yours}; across a portfolio's instruments (in portfolio.weight and portfolio.rebalance): {}",
                    Func::listing(),
                    super::functions::ACROSS.join(", ")
                ),
            ));
        };
        let want = func.args();
        if args.len() != want.len() {
            return Err(err(
                e.span.start,
                format!(
                    "{name} takes {} argument{}, got {}: {}",
                    want.len(),
                    if want.len() == 1 { "" } else { "s" },
                    args.len(),
                    func.signature()
                ),
            ));
        }
        let mut ids = Vec::with_capacity(args.len());
        let mut same: Option<Ty> = None;
        // A windowed function of a true/false series reads it as 1 / 0;
        // through a `Same` argument the result is true/false again.
        let mut bool_result = false;
        let remembers = func.is_windowed() || matches!(func, Func::CrossAbove | Func::CrossBelow);
        for (arg, kind) in args.iter().zip(&want) {
            let mut id = self.expr(arg)?;
            if remembers && self.node(id).state {
                return Err(err(
                    arg.span.start,
                    format!(
                        "{name} reads earlier bars, but entry_price, bars_held and position are known only bar by bar as the trade runs; use them in comparisons and arithmetic (e.g. close < entry_price * 0.95)"
                    ),
                ));
            }
            let what = format!("{} in {}", "this argument", func.signature());
            match kind {
                Arg::Num => self.expect(id, Ty::Num, arg, &what)?,
                Arg::Bool => self.expect(id, Ty::Bool, arg, &what)?,
                Arg::Same => match same {
                    None => same = Some(self.node(id).ty),
                    Some(t) => self.expect(id, t, arg, &what)?,
                },
                Arg::Window(min) => {
                    self.not_a_column(id, arg)?;
                    self.window(id, arg, func, *min)?
                }
                Arg::Scalar => {
                    self.not_a_column(id, arg)?;
                    self.expect(id, Ty::Num, arg, &what)?;
                    if self.node(id).series {
                        return Err(err(
                            arg.span.start,
                            format!(
                                "this argument of {} is a setting: a number, a parameter or arithmetic of those, not a value that changes from bar to bar",
                                func.signature()
                            ),
                        ));
                    }
                }
            }
            if func.is_windowed() && self.node(id).ty == Ty::Bool {
                bool_result |= *kind == Arg::Same;
                id = self.as_number(id);
            }
            ids.push(id);
        }
        // `new_day()` is true/false, as the value `new_day` is.
        bool_result |= func == Func::Windowed(Windowed::NewDay);
        // A crossing is about bars, so it is a series even of constants.
        let series = func.is_windowed()
            || matches!(func, Func::CrossAbove | Func::CrossBelow)
            || ids.iter().any(|&i| self.node(i).series);
        let deps = ids.iter().fold(0, |d, &i| d | self.node(i).deps);
        let ty = match func {
            Func::CrossAbove | Func::CrossBelow => Ty::Bool,
            Func::If => same.unwrap_or(Ty::Num),
            Func::Windowed(_) | Func::Abs | Func::Min | Func::Max | Func::Clamp => Ty::Num,
        };
        let call = self.graph.add(Op::Call(func, ids), ty, series, deps);
        if !bool_result {
            return Ok(call);
        }
        let one = self.number(1.0);
        Ok(self
            .graph
            .add(Op::Bin(BinOp::Eq, call, one), Ty::Bool, series, deps))
    }

    /// A call of a function defined outside sieve: its arguments are
    /// settings (numbers, parameters, arithmetic of those); the result is
    /// a series of numbers.
    fn external(&mut self, name: &str, args: &[Expr], e: &Expr) -> Result<Id, RuleError> {
        let (k, f) = self
            .graph
            .functions
            .named(name)
            .expect("checked by the caller");
        let signature = format!("{name}({})", f.arg_names().join(", "));
        let want = f.arg_names().len();
        let whole: Vec<bool> = (0..want)
            .map(|i| f.whole_args().get(i).copied().unwrap_or(false))
            .collect();
        let arg_names = f.arg_names().to_vec();
        if args.len() != want {
            return Err(err(
                e.span.start,
                format!(
                    "{name} takes {want} argument{}, got {}: {signature}",
                    if want == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        let mut ids = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            let id = self.expr(arg)?;
            self.not_a_column(id, arg)?;
            let node = self.node(id);
            if node.ty != Ty::Num || node.series || node.state {
                return Err(err(
                    arg.span.start,
                    format!(
                        "the arguments of {signature} are settings: numbers, parameters or arithmetic of those, not values that change from bar to bar"
                    ),
                ));
            }
            if whole[i] {
                self.whole_setting(id, arg, &format!("{} of {signature}", arg_names[i]))?;
            }
            ids.push(id);
        }
        let deps = ids.iter().fold(0, |d, &i| d | self.node(i).deps);
        Ok(self.graph.add(Op::Extern(k, ids), Ty::Num, true, deps))
    }

    /// A number node.
    pub(super) fn number(&mut self, v: f64) -> Id {
        self.graph.add(Op::Number(v.to_bits()), Ty::Num, false, 0)
    }

    /// True/false node `c` as a number: `if(c, 1, 0)`.
    fn as_number(&mut self, c: Id) -> Id {
        let (one, zero) = (self.number(1.0), self.number(0.0));
        let node = self.node(c).clone();
        self.graph.add(
            Op::Call(Func::If, vec![c, one, zero]),
            Ty::Num,
            node.series,
            node.deps,
        )
    }

    /// A window argument: whole numbers only (integers, parameters, `+ - *`).
    /// An argument declared a whole number (`what`: "n of st(n, mult)"): it
    /// must be one by construction, and the parameters it reads are whole
    /// numbers, as a window's are.
    fn whole_setting(&mut self, id: Id, arg: &Expr, what: &str) -> Result<(), RuleError> {
        if !self.node(id).whole {
            return Err(err(
                arg.span.start,
                format!("{what} is a whole number: an integer, a parameter, or + - * of those"),
            ));
        }
        let deps = self.node(id).deps;
        let column = self.column(arg.span.start);
        for p in (0..64).filter(|i| deps >> i & 1 == 1) {
            let u = &mut self.params[p];
            if u.window.is_none() {
                u.window = Some((self.key.clone(), column));
            }
        }
        Ok(())
    }

    fn window(&mut self, id: Id, arg: &Expr, func: Func, min: i64) -> Result<(), RuleError> {
        let node = self.node(id);
        let params: Vec<usize> = (0..64).filter(|i| node.deps >> i & 1 == 1).collect();
        if !node.whole {
            return Err(err(
                arg.span.start,
                format!(
                    "the window n of {} must be a whole number: an integer, a parameter, or + - * of those",
                    func.signature()
                ),
            ));
        }
        if params.is_empty() {
            let v = self.constant(id);
            if v < min as f64 {
                let message = if func == Func::Windowed(Windowed::Shift) {
                    format!("shift by {v} would read the future (look-ahead); n must be ≥ 0")
                } else {
                    format!(
                        "the window of {} must be at least {min}, got {v}",
                        func.name()
                    )
                };
                return Err(err(arg.span.start, message));
            }
        }
        let column = self.column(arg.span.start);
        let alone = matches!(self.node(id).op, Op::Param(_));
        for p in params {
            let u = &mut self.params[p];
            if u.window.is_none() {
                u.window = Some((self.key.clone(), column));
            }
            if alone {
                u.min = Some(u.min.map_or(min, |m: i64| m.max(min)));
            }
        }
        Ok(())
    }

    /// The value of a node that reads no parameter and no column.
    fn constant(&self, id: Id) -> f64 {
        super::ir::scalar_values(&self.graph, &[], id + 1)[id]
    }
}

#[cfg(test)]
mod suggest_tests {
    use super::suggest;

    /// Close misspellings are suggested; a different short name is not
    /// (`sar` was "did you mean 'atr'?").
    #[test]
    fn suggestions_are_near_misses_only() {
        let known = ["sma", "ema", "atr", "rsi", "stdev", "close", "cross_above"];
        assert_eq!(suggest("smaa", known), " (did you mean 'sma'?)");
        assert_eq!(suggest("clsoe", known), " (did you mean 'close'?)");
        assert_eq!(suggest("stdv", known), " (did you mean 'stdev'?)");
        assert_eq!(
            suggest("crossabove", known),
            " (did you mean 'cross_above'?)"
        );
        assert_eq!(suggest("sar", known), "");
        assert_eq!(suggest("obv", known), "");
        // Case first; lengths in characters, not bytes.
        assert_eq!(
            suggest("SPREAD", ["spread", "spreads"]),
            " (did you mean 'spread'?)"
        );
        assert_eq!(
            suggest("Signal_Line", ["signal_line"]),
            " (did you mean 'signal_line'?)"
        );
        assert_eq!(suggest("ab", ["日本語の列名"]), "");
        assert_eq!(suggest("列名x", ["列名"]), " (did you mean '列名'?)");
    }
}
