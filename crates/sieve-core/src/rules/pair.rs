//! A crossing pair with filters: `entry = cross_above(a, b) and close >
//! tf("1d", sma(close, n))`, `exit = cross_below(a, b)`. The built-in
//! crosses' scan finds every crossing of `a` and `b` (each one a change of
//! its targets: 1 at an upward crossing, else a downward one); the other
//! terms of each rule are then read at those bars alone. No rule can be
//! true elsewhere, so the position changes nowhere else: the same
//! positions as the rules bar by bar.

use super::compiled::Rules;
use super::eval;
use super::functions::Func;
use super::ir::{Id, Op};

use crate::data::Bars;
use crate::indicators::IndicatorSet;
use crate::strategy::{Changes, Direction};

impl Rules {
    /// `root`'s crossing `cross` (`cross_above` / `cross_below`) and its
    /// other `and`-ed terms, each read on one bar alone; `None` when it
    /// has no such crossing or a term reads earlier bars.
    pub(super) fn pair_terms(&self, root: Id, cross: Func) -> Option<(Id, Vec<Id>)> {
        let mut terms = Vec::new();
        self.terms(root, &mut terms);
        let is_cross = |id: &Id| matches!(&self.graph.nodes[*id].op, Op::Call(f, _) if *f == cross);
        let k = terms.iter().position(is_cross)?;
        let crossing = terms.remove(k);
        terms
            .iter()
            .all(|&id| self.pointwise(id, &[]))
            .then_some((crossing, terms))
    }

    /// `changes` of the plain crossing pair (the scan's) for `params`,
    /// kept where the rules' other terms hold on the crossing's bar:
    /// an upward crossing enters long where the entry's terms hold; a
    /// downward one leaves (long only) or goes short (long and short)
    /// where the exit's do. `events` is scratch.
    pub(super) fn filter_pair(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        changes: &mut Changes,
        events: &mut Vec<(usize, i8)>,
    ) {
        let filters = &self.pair_filters;
        events.clear();
        // The first entry is the flat start, not a crossing.
        events.extend(changes.entries().skip(1));
        let len = changes.len();
        changes.reset(len);
        self.with_columns(bars, indicators, params, |scalars, full, _| {
            let holds = |terms: &[Id], t: usize| {
                let none = |_: Id| None;
                terms
                    .iter()
                    .all(|&id| eval::value_at(&self.graph, id, t, full, scalars, &none) != 0.0)
            };
            let mut position = 0i8;
            for &(t, target) in events.iter() {
                let next = match target {
                    1 if holds(&filters.entry, t) => 1,
                    1 => position,
                    _ if holds(&filters.exit, t) => match direction {
                        Direction::Long => 0,
                        Direction::LongShort => -1,
                    },
                    _ => position,
                };
                if next != position {
                    changes.push(t, next);
                    position = next;
                }
            }
        });
    }
}
