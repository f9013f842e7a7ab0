//! The gates of rules gated by a crossing ([`Gated`]): each rule as its
//! `and`-ed terms and the crossing that gates it, found when the rules are
//! compiled (`gated.rs` finds and runs them); and the terms of a crossing
//! pair's rules beside its crossings (`pair.rs`).

use super::ir::Id;
use super::keys::ManagedKeys;
use super::parse::BinOp;

/// The most gates a strategy's rules may have (one per rule).
pub(super) const MAX_GATES: usize = 4;

/// The gates of a strategy's rules, and each rule as its `and`-ed terms.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Gated {
    pub(super) gates: Vec<Id>,
    pub(super) rules: Vec<GatedRule>,
    /// The trade-management keys, each read on one bar alone.
    pub(super) keys: GatedKeys,
}

/// The trade-management keys of gated rules: the engine reads them on
/// every close it works on, gate or not.
pub(super) type GatedKeys = ManagedKeys<Operand>;

#[derive(Debug, Clone, PartialEq)]
pub(super) struct GatedRule {
    pub(super) root: Id,
    /// Its gate's position in [`Gated::gates`].
    pub(super) gate: usize,
    /// Its terms, the cheap first: true when every one is.
    pub(super) terms: Vec<Term>,
}

/// One `and`-ed term of a rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Term {
    /// A gate holds (its position in [`Gated::gates`]).
    Gate(usize),
    /// A comparison of two whole columns or scalars.
    Compare(BinOp, Operand, Operand),
    /// Anything else that reads no earlier bar.
    Other(Id),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Operand {
    Column(Id),
    Scalar(Id),
    /// Anything else that reads no earlier bar (the keys only).
    Other(Id),
}

impl Gated {
    /// How many crossings gate the rules.
    pub(super) fn gate_count(&self) -> usize {
        self.gates.len()
    }
}

/// The terms `and`-ed into a crossing pair's entry and exit beside their
/// crossings (none: the plain pair).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct PairFilters {
    pub(super) entry: Vec<Id>,
    pub(super) exit: Vec<Id>,
}

impl PairFilters {
    pub(super) fn is_empty(&self) -> bool {
        self.entry.is_empty() && self.exit.is_empty()
    }
}
