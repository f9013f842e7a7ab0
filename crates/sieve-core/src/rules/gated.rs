//! Rules whose every decision waits on a crossing of fewer parameters
//! than the strategy has: `entry = cross_above(macd, signal) and close >
//! sma(close, trend)`, `exit = cross_below(macd, signal)`. Such a crossing
//! (a *gate*) has one column per setting of its parameters, shared by every
//! combination of the others; its bars are found once per setting
//! ([`crate::indicators::event_bars`]) and each combination evaluates its
//! rules on those bars alone. Between them no rule can be true, so the
//! position stays as it is: the same positions as the bar-by-bar pass.

use std::sync::Arc;

use super::check::{Func, Id, Op};
use super::eval::{self, Machine, Signals};
use super::parse::BinOp;
use super::{Direction, Rules, Targets};
use crate::data::Bars;
use crate::indicators::{IndicatorSet, RuleSeries, RULE_SETTING_LEN};

/// The most gates a strategy's rules may have (one per rule).
const MAX_GATES: usize = 4;

/// The gates of a strategy's rules, and each rule as its `and`-ed terms.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Gated {
    gates: Vec<Id>,
    rules: Vec<GatedRule>,
}

#[derive(Debug, Clone, PartialEq)]
struct GatedRule {
    root: Id,
    /// Its gate's position in [`Gated::gates`].
    gate: usize,
    /// Its terms, the cheap first: true when every one is.
    terms: Vec<Term>,
}

/// One `and`-ed term of a rule.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Term {
    /// A gate holds (its position in [`Gated::gates`]).
    Gate(usize),
    /// A comparison of two whole columns or scalars.
    Compare(BinOp, Operand, Operand),
    /// Anything else that reads no earlier bar.
    Other(Id),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Operand {
    Column(Id),
    Scalar(Id),
}

impl Gated {
    /// How many crossings gate the rules.
    pub(super) fn gate_count(&self) -> usize {
        self.gates.len()
    }
}

impl Rules {
    /// [`Rules::gated`]: for each rule (entry, exit, and the short rules if
    /// any), one of its `and`-ed terms that is a crossing reading fewer
    /// parameters than the strategy has, all else in the rule reading no
    /// earlier bar; `None` when some rule has none, or the strategy has a
    /// trailing stop, trade management or reads the trade's state (the
    /// engine's exits move the position between the gates' bars).
    pub(super) fn find_gates(&self) -> Option<Gated> {
        let r = &self.roots;
        if r.stop.is_some() || r.managed.any() || self.plan.reads_state() || self.n_params >= 64 {
            return None;
        }
        let every = (1u64 << self.n_params) - 1;
        let mut roots = vec![r.entry, r.exit];
        if let Some((a, b)) = r.short {
            roots.extend([a, b]);
        }
        let mut gates: Vec<Id> = Vec::new();
        let mut rules = Vec::new();
        for root in roots {
            let mut ids = Vec::new();
            self.terms(root, &mut ids);
            let gate = *ids.iter().find(|&&id| {
                let node = &self.graph.nodes[id];
                matches!(node.op, Op::Call(Func::CrossAbove | Func::CrossBelow, _))
                    && node.deps != every
                    && node.deps.count_ones() as usize <= RULE_SETTING_LEN
            })?;
            if !gates.contains(&gate) {
                gates.push(gate);
            }
            rules.push((root, gate, ids));
        }
        if gates.len() > MAX_GATES {
            return None;
        }
        let rules = rules
            .into_iter()
            .map(|(root, gate, ids)| {
                let mut terms: Vec<Term> = Vec::with_capacity(ids.len());
                for id in ids {
                    terms.push(self.term(id, &gates)?);
                }
                // Gates, then comparisons, then the rest: most bars fail early.
                terms.sort_by_key(|t| match t {
                    Term::Gate(_) => 0,
                    Term::Compare(..) => 1,
                    Term::Other(_) => 2,
                });
                let gate = gates.iter().position(|&g| g == gate)?;
                Some(GatedRule { root, gate, terms })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Gated { gates, rules })
    }

    /// The terms of `id` joined by `and` (itself when it is not an `and`).
    fn terms(&self, id: Id, out: &mut Vec<Id>) {
        match self.graph.nodes[id].op {
            Op::Bin(BinOp::And, a, b) => {
                self.terms(a, out);
                self.terms(b, out);
            }
            _ => out.push(id),
        }
    }

    /// Term `id` of a rule; `None` when it reads an earlier bar (other than
    /// through `gates`).
    fn term(&self, id: Id, gates: &[Id]) -> Option<Term> {
        if let Some(k) = gates.iter().position(|&g| g == id) {
            return Some(Term::Gate(k));
        }
        if !self.pointwise(id, gates) {
            return None;
        }
        let operand = |i: Id| {
            let node = &self.graph.nodes[i];
            match (node.series, self.plan.materialized[i], &node.op) {
                (false, _, _) => Some(Operand::Scalar(i)),
                (true, true, _) | (true, _, Op::Col(_)) => Some(Operand::Column(i)),
                _ => None,
            }
        };
        Some(match self.graph.nodes[id].op {
            Op::Bin(op, a, b) if op.is_comparison() => match (operand(a), operand(b)) {
                (Some(x), Some(y)) => Term::Compare(op, x, y),
                _ => Term::Other(id),
            },
            _ => Term::Other(id),
        })
    }

    /// Whether `id` can be evaluated on one bar alone: it remembers no
    /// earlier bar but through `gates` and whole columns.
    fn pointwise(&self, id: Id, gates: &[Id]) -> bool {
        let node = &self.graph.nodes[id];
        if !node.series || gates.contains(&id) || self.plan.materialized[id] {
            return !node.state;
        }
        match &node.op {
            Op::Col(c) => !c.is_state(),
            Op::Neg(a) | Op::Not(a) => self.pointwise(*a, gates),
            Op::Bin(_, a, b) => self.pointwise(*a, gates) && self.pointwise(*b, gates),
            Op::Call(Func::If | Func::Abs | Func::Min | Func::Max | Func::Clamp, args) => {
                args.iter().all(|&a| self.pointwise(a, gates))
            }
            _ => false,
        }
    }

    /// Gate `g`'s key at `params`: its node and the values of the
    /// parameters it reads.
    fn gate_key(&self, g: Id, params: &[f64]) -> RuleSeries {
        let mut setting = [0u64; RULE_SETTING_LEN];
        let deps = self.graph.nodes[g].deps;
        let read = (0..self.n_params).filter(|&i| deps >> i & 1 == 1);
        for (s, i) in setting.iter_mut().zip(read) {
            *s = params[i].to_bits();
        }
        RuleSeries {
            node: g as u32,
            setting,
        }
    }

    /// The bars where gate `g` holds at `params` (the whole data).
    fn gate_bars(&self, g: Id, bars: &Bars, indicators: &IndicatorSet, params: &[f64]) -> Vec<u32> {
        let mut out = Vec::new();
        self.blocks(
            bars,
            indicators,
            params,
            Direction::Long,
            bars.len(),
            |block| {
                let on = block.frame.bools(g, block.len);
                for (i, &v) in on.iter().enumerate() {
                    if v != 0 {
                        out.push((block.start + i) as u32);
                    }
                }
            },
        );
        out
    }

    /// [`Rules::hold`] from the gates' bars: the positions of `params` on
    /// bars `..n`, the rules evaluated only where a gate holds. `false`
    /// (nothing written) when the rules have no gates or the memo of their
    /// bars is off: the caller takes the bar-by-bar pass.
    pub(super) fn hold_gated(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        out: &mut impl Targets,
    ) -> bool {
        let Some(gated) = &self.gated else {
            return false;
        };
        let memo = indicators.event_bars();
        let mut found: [Option<Arc<[u32]>>; MAX_GATES] = Default::default();
        for (slot, &g) in found.iter_mut().zip(&gated.gates) {
            let key = self.gate_key(g, params);
            let Some(list) = memo.get(key, || self.gate_bars(g, bars, indicators, params)) else {
                return false;
            };
            *slot = Some(list);
        }
        let mut lists: [&[u32]; MAX_GATES] = [&[]; MAX_GATES];
        for (l, f) in lists.iter_mut().zip(&found) {
            *l = f.as_deref().unwrap_or(&[]);
        }
        let rule = |root: Id| gated.rules.iter().find(|r| r.root == root);
        // The rules Machine::step reads in each position: (long entry,
        // short entry) when flat, (short entry, long exit) when long,
        // (long entry, short exit) when short.
        let r = &self.roots;
        let short = match (direction, r.short) {
            (Direction::Long, _) => None,
            (Direction::LongShort, None) => Some((r.exit, r.entry)),
            (Direction::LongShort, Some(pair)) => Some(pair),
        };
        let movers = [
            (rule(r.entry), short.and_then(|s| rule(s.0))),
            (short.and_then(|s| rule(s.0)), rule(r.exit)),
            (rule(r.entry), short.and_then(|s| rule(s.1))),
        ];
        let n = n.min(bars.len());
        self.with_columns(bars, indicators, params, |scalars, full, _| {
            let mut at = [0usize; MAX_GATES];
            let mut machine = Machine::default();
            let mut from = 0;
            loop {
                let (a, b) = movers[match machine.position {
                    0 => 0,
                    1 => 1,
                    _ => 2,
                }];
                // The next bar from `from` on where one of their gates holds.
                let mut next = usize::MAX;
                for rule in [a, b].into_iter().flatten() {
                    let (list, c) = (lists[rule.gate], &mut at[rule.gate]);
                    *c = seek(list, *c, from);
                    if let Some(&e) = list.get(*c) {
                        next = next.min(e as usize);
                    }
                }
                if next >= n {
                    break;
                }
                let t = next;
                if from < t {
                    out.quiet(from, t, machine.position);
                }
                // Whether gate k holds on bar t (its cursor is at or before
                // t: at t for the gates looked at above).
                let gate = |k: usize| {
                    let rest = &lists[k][at[k]..];
                    match rest.first() {
                        Some(&e) if e as usize >= t => e as usize == t,
                        _ => rest.binary_search(&(t as u32)).is_ok(),
                    }
                };
                let value = |o: Operand| match o {
                    Operand::Column(i) => full[i].map_or(f64::NAN, |c| c[t]),
                    Operand::Scalar(i) => scalars[i],
                };
                let holds = |rule: Option<&GatedRule>| {
                    rule.is_some_and(|rule| {
                        rule.terms.iter().all(|&term| match term {
                            Term::Gate(k) => gate(k),
                            Term::Compare(op, x, y) => eval::compare(op, value(x), value(y)),
                            Term::Other(id) => {
                                let gate =
                                    |id: Id| gated.gates.iter().position(|&g| g == id).map(gate);
                                eval::value_at(&self.graph, id, t, full, scalars, &gate) != 0.0
                            }
                        })
                    })
                };
                let (x, y) = (u8::from(holds(a)), u8::from(holds(b)));
                let (le, lx, se, sx) = match machine.position {
                    0 => (x, 0, y, 0),
                    1 => (0, y, x, 0),
                    _ => (x, 0, 0, y),
                };
                let signals = Signals {
                    long_entry: &[le],
                    long_exit: &[lx],
                    short_entry: &[se],
                    short_exit: &[sx],
                    stop: None,
                    close: &bars.close[t..t + 1],
                };
                if machine.step(&signals, 0).0 {
                    out.moved(t, machine.position);
                }
                out.bar(t, machine.position);
                from = t + 1;
            }
            if from < n {
                out.quiet(from, n, machine.position);
            }
        });
        true
    }
}

/// The first position at or after `c` in `list` (ascending) whose bar is
/// at or after `from`: a few steps forward (the usual case: the next
/// event), else a binary search of the rest.
#[inline(always)]
fn seek(list: &[u32], mut c: usize, from: usize) -> usize {
    for _ in 0..4 {
        match list.get(c) {
            Some(&e) if (e as usize) < from => c += 1,
            _ => return c,
        }
    }
    c + list[c.min(list.len())..].partition_point(|&e| (e as usize) < from)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{Direction, PerBar, RuleSource, Rules};
    use crate::grid::AxisValues;
    use crate::indicators::IndicatorSet;

    /// Crossings of `a` and `b` (fewer parameters than the strategy's).
    const GATES: &[&str] = &[
        "cross_above(sma(close, a), ema(close, b))",
        "cross_below(sma(close, a), ema(close, b))",
        "cross_below(close, sma(close, a))",
        "cross_above(rsi(close, a), 50)",
        "cross_above(ema(close, a) - ema(close, b), ema(ema(close, a) - ema(close, b), 3))",
        "cross_below(ema(close, a) - ema(close, b), ema(ema(close, a) - ema(close, b), 3))",
    ];
    /// Terms reading `c` (whole or real) or no parameter: comparisons of
    /// columns, and other bar-by-bar expressions.
    const FILTERS: &[&str] = &[
        "close > sma(close, c)",
        "rsi(close, 5) < 60 + c",
        "abs(close - open) < c * 0.002 * close",
        "not (close < shift(close, 1))",
        "high - low > atr(4) or close > open",
        "if(close > open, close, open) >= sma(close, 7)",
        "volume > 0",
    ];

    fn axis(values: &[f64]) -> AxisValues {
        AxisValues {
            values: values.to_vec(),
            integers: values.iter().all(|v| v.fract() == 0.0),
        }
    }

    /// With a real-valued `c`, the first filter reads it through a column
    /// computed per combination (a window must be whole).
    fn rule(gate: usize, filters: &[usize], gate_first: bool, real_c: bool) -> String {
        let text = |f: usize| match (f, real_c) {
            (0, true) => "ema(close * c, 5) > close * 9.99",
            _ => FILTERS[f],
        };
        let mut terms: Vec<String> = filters.iter().map(|&f| format!("({})", text(f))).collect();
        let g = GATES[gate].to_string();
        match gate_first {
            true => terms.insert(0, g),
            false => terms.push(g),
        }
        terms.join(" and ")
    }

    /// Rules with gates hold the same positions from the gates' bars as
    /// bar by bar, in every combination and direction.
    fn same_positions(source: RuleSource, c: &[f64]) -> bool {
        let (rules, _) = Rules::compile(source).expect("compiles");
        let bars = crate::data::synth(700, 3);
        let mut keys = Vec::new();
        let combos: Vec<[f64; 3]> = [3.0, 6.0]
            .iter()
            .flat_map(|&a| [9.0, 14.0].map(move |b| (a, b)))
            .flat_map(|(a, b)| c.iter().map(move |&c| [a, b, c]))
            .collect();
        for p in &combos {
            rules.indicators(p, &mut keys);
        }
        let set = IndicatorSet::build_for(&bars, &rules, keys);
        for direction in [Direction::Long, Direction::LongShort] {
            // Twice: the second pass reads the memo's kept bars.
            for p in combos.iter().chain(&combos) {
                for n in [bars.len(), 451] {
                    let (mut by_bar, mut gated) = (vec![9i8; n], vec![9i8; n]);
                    rules.hold_by_bar(&bars, &set, p, direction, n, &mut PerBar(&mut by_bar));
                    let used =
                        rules.hold_gated(&bars, &set, p, direction, n, &mut PerBar(&mut gated));
                    assert!(used, "no gates, or the memo turned off");
                    assert_eq!(gated, by_bar, "{p:?} {direction:?} n={n}");
                }
            }
        }
        rules.gated.is_some()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]
        #[test]
        fn gated_positions_equal_the_bar_by_bar_ones(
            entry_gate in 0..GATES.len(),
            exit_gate in 0..GATES.len(),
            entry_filters in prop::collection::vec(0..FILTERS.len(), 0..3),
            exit_filters in prop::collection::vec(0..FILTERS.len(), 0..2),
            short in prop::option::of((0..GATES.len(), 0..GATES.len(), 0..FILTERS.len())),
            order in any::<(bool, bool)>(),
            real_c in any::<bool>(),
        ) {
            let c: &[f64] = if real_c { &[10.0, 2.5] } else { &[10.0, 20.0] };
            let source = RuleSource {
                name: "gated".into(),
                // Terms of no bar, and every parameter read.
                entry: rule(entry_gate, &entry_filters, order.0, real_c) + " and c > 0 and a + b > 0",
                exit: rule(exit_gate, &exit_filters, order.1, real_c),
                short_entry: short.map(|(g, _, f)| rule(g, &[f], true, real_c)),
                short_exit: short.map(|(_, g, _)| GATES[g].to_string()),
                params: vec![
                    ("a".into(), Ok(axis(&[3.0, 6.0]))),
                    ("b".into(), Ok(axis(&[9.0, 14.0]))),
                    ("c".into(), Ok(axis(c))),
                ],
                ..RuleSource::default()
            };
            prop_assert!(same_positions(source, c), "the rules had no gates");
        }
    }

    #[test]
    fn a_crossing_of_every_parameter_or_one_remembering_terms_is_no_gate() {
        let compile = |entry: &str, exit: &str| {
            let source = RuleSource {
                name: "t".into(),
                entry: format!("{entry} and c > 0"),
                exit: exit.into(),
                params: vec![
                    ("a".into(), Ok(axis(&[3.0]))),
                    ("c".into(), Ok(axis(&[10.0]))),
                ],
                ..RuleSource::default()
            };
            Rules::compile(source).expect("compiles").0.gated
        };
        let gate = "cross_above(sma(close, a), 50)";
        assert!(compile(
            &format!("{gate} and close > sma(close, c)"),
            "cross_below(close, 1)"
        )
        .is_some());
        // Reads both parameters: a crossing per combination.
        assert!(compile("cross_above(sma(close, a), sma(close, c))", gate).is_none());
        // An `or` at the top: no term the rule waits on.
        assert!(compile(&format!("{gate} or close > 1"), gate).is_none());
        // A crossing not and-ed in, read beside the gate: it remembers bars.
        assert!(compile(
            &format!("{gate} and not cross_below(close, sma(close, c))"),
            gate
        )
        .is_none());
    }
}
