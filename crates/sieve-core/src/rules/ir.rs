//! The rules' intermediate form: one [`Graph`] of typed nodes ([`Op`],
//! [`Ty`], [`Col`]), children before parents, shared by the checker that
//! builds it, the planner, the evaluators and the WGSL generator; and what
//! its settings (the nodes that read no column) evaluate to.

use std::collections::HashMap;

use super::external::ExternalFunctions;
use super::functions::Func;
use super::parse::BinOp;
use super::scalar::{arith, compare, max, min};
use crate::data::timeframe::Timeframe;

pub type Id = usize;

/// The data columns a rule can read, and the open trade's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Col {
    Open,
    High,
    Low,
    Close,
    Volume,
    /// The open position's entry price (undefined when flat).
    EntryPrice,
    /// Bars the open position has been held (undefined when flat).
    BarsHeld,
    /// 1, −1 or 0.
    Position,
    /// The entries the open position holds (1 and its adds; 0 when flat).
    Entries,
    /// The last entry's price (the first's without adds; undefined when
    /// flat).
    LastEntryPrice,
    /// The highest high and the lowest low from the fill bar through this
    /// bar (undefined when flat).
    HighSinceEntry,
    LowSinceEntry,
}

impl Col {
    pub const ALL: [(&'static str, Col); 12] = [
        ("open", Col::Open),
        ("high", Col::High),
        ("low", Col::Low),
        ("close", Col::Close),
        ("volume", Col::Volume),
        ("entry_price", Col::EntryPrice),
        ("bars_held", Col::BarsHeld),
        ("position", Col::Position),
        ("entries", Col::Entries),
        ("last_entry_price", Col::LastEntryPrice),
        ("high_since_entry", Col::HighSinceEntry),
        ("low_since_entry", Col::LowSinceEntry),
    ];

    /// The trade's state: known only as the engine runs, bar by bar.
    pub fn is_state(self) -> bool {
        matches!(
            self,
            Col::EntryPrice
                | Col::BarsHeld
                | Col::Position
                | Col::Entries
                | Col::LastEntryPrice
                | Col::HighSinceEntry
                | Col::LowSinceEntry
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Num,
    Bool,
}

impl Ty {
    pub(super) fn describe(self) -> &'static str {
        match self {
            Ty::Num => "a number",
            Ty::Bool => "true/false (a comparison or rule)",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// A number, by its bits (so equal numbers share a node).
    Number(u64),
    Bool(bool),
    Param(usize),
    Col(Col),
    /// A column of the data beyond prices and volume: `Graph::user[k]`.
    User(usize),
    Neg(Id),
    Not(Id),
    Bin(BinOp, Id, Id),
    Call(Func, Vec<Id>),
    /// A function defined outside sieve, `Graph::functions[k]`, at
    /// settings that do not change from bar to bar.
    Extern(usize, Vec<Id>),
    /// An expression on other bars, `Graph::frames[k]` (a higher
    /// timeframe, another instrument), as of each bar's close; the
    /// arguments are the parameters it reads.
    Frame(usize, Vec<Id>),
}

impl Op {
    pub fn children(&self) -> Vec<Id> {
        match self {
            Op::Number(_) | Op::Bool(_) | Op::Param(_) | Op::Col(_) | Op::User(_) => Vec::new(),
            Op::Neg(a) | Op::Not(a) => vec![*a],
            Op::Bin(_, a, b) => vec![*a, *b],
            Op::Call(_, args) | Op::Extern(_, args) | Op::Frame(_, args) => args.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub op: Op,
    pub ty: Ty,
    /// Varies from bar to bar (reads a column somewhere below).
    pub series: bool,
    /// Bit i: reads parameter i.
    pub deps: u64,
    /// A whole number by construction: integers, parameters, and `+ - *`
    /// (or unary `-`) of those — what a window may be.
    pub whole: bool,
    /// Reads the trade's state (`entry_price`, `bars_held`, `position`).
    pub state: bool,
}

/// Every node of a strategy, children before parents.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    pub nodes: Vec<Node>,
    index: HashMap<Op, Id>,
    /// The data columns the rules read by name, beyond prices and volume.
    pub user: Vec<UserColumn>,
    /// The functions defined outside sieve ([`Op::Extern`]).
    pub functions: ExternalFunctions,
    /// The expressions read on other bars ([`Op::Frame`]).
    pub frames: Vec<FrameGraph>,
}

/// Which bars an [`Op::Frame`] reads.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameOn {
    /// These bars resampled: `tf("1d", …)`.
    Timeframe(Timeframe),
    /// `data.informative`'s instrument of that name, at its own bars or
    /// resampled (`informative("btc", …)`).
    Informative(String),
}

/// An expression evaluated on other bars: its own graph (the parameters
/// are the strategy's, by the same index) and root.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameGraph {
    pub on: FrameOn,
    pub graph: Graph,
    pub root: Id,
    /// The call as written, for `--describe`.
    pub text: String,
}

/// A name the rules read as a column of the data; whether the data has it
/// is known only when the data is (an unknown name is reported then).
#[derive(Debug, Clone, PartialEq)]
pub struct UserColumn {
    pub name: String,
    /// Written `col("…")` rather than as a bare name.
    pub quoted: bool,
    /// Where it is first read: the key, its text and the byte offset.
    pub key: String,
    pub text: String,
    pub at: usize,
}

impl Graph {
    /// An empty graph that may call `functions`.
    pub(super) fn with_functions(functions: ExternalFunctions) -> Graph {
        Graph {
            functions,
            ..Graph::default()
        }
    }

    pub(super) fn add(&mut self, op: Op, ty: Ty, series: bool, deps: u64) -> Id {
        if let Some(&id) = self.index.get(&op) {
            return id;
        }
        let whole = match &op {
            Op::Number(bits) => f64::from_bits(*bits).fract() == 0.0,
            Op::Param(_) => true,
            Op::Bin(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
                self.nodes[*a].whole && self.nodes[*b].whole
            }
            Op::Neg(a) => self.nodes[*a].whole,
            _ => false,
        };
        let state = match &op {
            Op::Col(c) => c.is_state(),
            op => op.children().iter().any(|&c| self.nodes[c].state),
        };
        let id = self.nodes.len();
        self.index.insert(op.clone(), id);
        self.nodes.push(Node {
            op,
            ty,
            series,
            deps,
            whole,
            state,
        });
        id
    }
}

/// The value of every node that reads no column (numbers, parameters and
/// arithmetic of those), for nodes `0..upto`; booleans as 1 / 0, series NaN.
/// `params` may be empty (every parameter undefined).
pub fn scalar_values(graph: &Graph, params: &[f64], upto: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; upto];
    scalar_values_into(graph, params, &mut out);
    out
}

pub fn scalar_values_into(graph: &Graph, params: &[f64], out: &mut [f64]) {
    for id in 0..out.len() {
        let node = &graph.nodes[id];
        if node.series {
            out[id] = f64::NAN;
            continue;
        }
        let v = |i: Id| out[i];
        let b = |i: Id| out[i] != 0.0;
        out[id] = match &node.op {
            Op::Number(bits) => f64::from_bits(*bits),
            Op::Bool(x) => f64::from(u8::from(*x)),
            Op::Param(i) => params.get(*i).copied().unwrap_or(f64::NAN),
            Op::Col(_) | Op::User(_) | Op::Extern(..) | Op::Frame(..) => f64::NAN,
            Op::Neg(a) => -v(*a),
            Op::Not(a) => f64::from(u8::from(!b(*a))),
            Op::Bin(op, a, c) => match op {
                BinOp::And => f64::from(u8::from(b(*a) && b(*c))),
                BinOp::Or => f64::from(u8::from(b(*a) || b(*c))),
                _ if op.is_comparison() => f64::from(u8::from(compare(*op, v(*a), v(*c)))),
                _ => arith(*op, v(*a), v(*c)),
            },
            Op::Call(f, args) => {
                let a = |k: usize| v(args[k]);
                match f {
                    Func::Abs => a(0).abs(),
                    Func::Min => min(a(0), a(1)),
                    Func::Max => max(a(0), a(1)),
                    Func::Clamp => min(max(a(0), a(1)), a(2)),
                    Func::If => {
                        if b(args[0]) {
                            a(1)
                        } else {
                            a(2)
                        }
                    }
                    // Windowed functions and crossings are series.
                    Func::Windowed(_) | Func::CrossAbove | Func::CrossBelow => f64::NAN,
                }
            }
        };
    }
}
