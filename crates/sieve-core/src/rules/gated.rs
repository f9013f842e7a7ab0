//! Rules whose every decision waits on a crossing of fewer parameters
//! than the strategy has: `entry = cross_above(macd, signal) and close >
//! sma(close, trend)`, `exit = cross_below(macd, signal)`. Such a crossing
//! (a *gate*) has one column per setting of its parameters, shared by every
//! combination of the others; its bars are found once per setting
//! ([`crate::indicators::event_bars`]) and each combination evaluates its
//! rules on those bars alone. Between them no rule can be true, so the
//! position stays as it is: the same positions as the bar-by-bar pass.

use std::sync::Arc;

use super::compiled::Rules;
use super::decide::decide;
use super::eval::{self, Machine, Signals};
use super::functions::Func;
use super::ir::{Id, Op};
use super::parse::BinOp;
use crate::data::Bars;
use crate::engine::{EngineConfig, Managed, Sink};
use crate::indicators::{IndicatorSet, RuleSeries, RULE_SETTING_LEN};
use crate::strategy::{Direction, Targets};

use super::gates::{Gated, GatedRule, Operand, Term, MAX_GATES};

impl Rules {
    /// [`Rules::gated`]: for each rule (entry, exit, and the short rules if
    /// any), one of its `and`-ed terms that is a crossing reading fewer
    /// parameters than the strategy has, all else in the rule reading no
    /// earlier bar, and trade-management keys that read no earlier bar
    /// either (the engine's exits are found bar by bar, the rules still
    /// only where a gate holds); `None` when some rule has none, or the
    /// strategy has a trailing stop or reads the trade's state (both
    /// remember the trade between the gates' bars).
    pub(super) fn find_gates(&self) -> Option<Gated> {
        let r = &self.roots;
        if r.stop.is_some() || self.plan.reads_state() || self.n_params >= 64 {
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
        let key = |id: Id| {
            self.pointwise(id, &gates)
                .then(|| self.operand(id).unwrap_or(Operand::Other(id)))
        };
        let keys = r.managed.try_map(key)?;
        Some(Gated { gates, rules, keys })
    }

    /// `i` as a whole column or a scalar, where it is one.
    fn operand(&self, i: Id) -> Option<Operand> {
        let node = &self.graph.nodes[i];
        match (node.series, self.plan.materialized[i], &node.op) {
            (false, _, _) => Some(Operand::Scalar(i)),
            (true, true, _) | (true, _, Op::Col(_)) => Some(Operand::Column(i)),
            _ => None,
        }
    }

    /// The terms of `id` joined by `and` (itself when it is not an `and`).
    pub(super) fn terms(&self, id: Id, out: &mut Vec<Id>) {
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
        Some(match self.graph.nodes[id].op {
            Op::Bin(op, a, b) if op.is_comparison() => match (self.operand(a), self.operand(b)) {
                (Some(x), Some(y)) => Term::Compare(op, x, y),
                _ => Term::Other(id),
            },
            _ => Term::Other(id),
        })
    }

    /// Whether `id` can be evaluated on one bar alone: it remembers no
    /// earlier bar but through `gates` and whole columns.
    pub(super) fn pointwise(&self, id: Id, gates: &[Id]) -> bool {
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

    /// The bars of each gate at `params` from the memo; `None` when the
    /// rules have no gates or the memo is off (the caller takes the
    /// bar-by-bar pass).
    fn gate_lists(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
    ) -> Option<(&Gated, GateLists)> {
        let gated = self.gated.as_ref()?;
        let memo = indicators.event_bars();
        let mut lists: GateLists = Default::default();
        for (slot, &g) in lists.iter_mut().zip(&gated.gates) {
            let key = self.gate_key(g, params);
            *slot = memo.get(key, || self.gate_bars(g, bars, indicators, params))?;
        }
        Some((gated, lists))
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
        let Some((gated, lists)) = self.gate_lists(bars, indicators, params) else {
            return false;
        };
        let n = n.min(bars.len());
        self.with_columns(bars, indicators, params, |scalars, full, _| {
            let mut events = Events::new(self, gated, &lists, direction, scalars, full);
            let mut machine = Machine::default();
            let mut from = 0;
            loop {
                let t = events.next(machine.position, from);
                if t >= n {
                    break;
                }
                if from < t {
                    out.quiet(from, t, machine.position);
                }
                let signals = events.signals(machine.position, t);
                if machine.step(&signals.view(&bars.close, t), 0).0 {
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

    /// [`Rules::manage`] from the gates' bars, the rules' state machine
    /// deciding: the engine works bar by bar where it has something to do
    /// (a fill waiting, a stop or target touched, a bar limit), the rules
    /// are evaluated only where a gate holds, and the stretches between
    /// pass at once. `false` (nothing sent to `sink`) when the rules have
    /// no gates or the memo of their bars is off.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn manage_gated(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        cfg: &EngineConfig,
        n: usize,
        sink: &mut dyn Sink,
    ) -> bool {
        // Adds read the held side's entry rule, which the gates skip.
        if self.roots.managed.max_entries.is_some() {
            return false;
        }
        let Some((gated, lists)) = self.gate_lists(bars, indicators, params) else {
            return false;
        };
        let n = n.min(bars.len());
        let mut engine = Managed::over_bars(cfg, bars, n, self.roots.managed.any());
        engine.set_moving_stop(self.roots.managed.stop_level.is_some());
        let m = &self.roots.managed;
        engine.set_entry_orders(m.entry_stop.is_some() || m.entry_limit.is_some());
        self.with_columns(bars, indicators, params, |scalars, full, _| {
            let mut events = Events::new(self, gated, &lists, direction, scalars, full);
            let mut machine = Machine::default();
            // Bars from here on pass untouched (streamed when something moves).
            let mut quiet_from: Option<usize> = None;
            let mut t = 0;
            while t < n {
                if engine.done() {
                    quiet_from.get_or_insert(t);
                    break;
                }
                // No rule can move the position before the next gate bar:
                // up to it, the engine alone decides, and the bars before
                // the first it works on pass at once.
                let e = events.next(machine.position, t).min(n);
                // A moving stop's level is read only to find the first
                // close it moves the stop on.
                let first = match gated.keys.stop_level {
                    Some(o) => engine.first_busy_with(t, e, |b| events.value(o, b)),
                    None => engine.first_busy(t, e),
                };
                if t < first {
                    quiet_from.get_or_insert(t);
                    t = first;
                    continue;
                }
                if let Some(q) = quiet_from.take() {
                    engine.pass(q, t, sink);
                }
                if let Some(held) = engine.before_close(t, sink) {
                    machine.position = held;
                }
                // The rules of the position after the engine's exits,
                // where one of their gates holds.
                let mut signals = match events.next(machine.position, t) == t {
                    true => events.signals(machine.position, t),
                    false => BarSignals::NONE,
                };
                // Flat with an entry order waiting: its side's exit signal
                // cancels it (the engine steps every bar it waits).
                let waiting = engine.pending_side();
                if machine.position == 0 && waiting != 0 {
                    let exits = events.signals(waiting, t);
                    signals.long_exit[0] |= exits.long_exit[0];
                    signals.short_exit[0] |= exits.short_exit[0];
                }
                let keys = gated.keys.map(|o| [events.value(o, t)]);
                let values = keys.as_ref().map(|k| &k[..]);
                let view = signals.view(&bars.close, t);
                decide(&mut engine, &mut machine, &view, &values, t, 0, sink);
                t += 1;
            }
            if let Some(q) = quiet_from {
                engine.pass(q, n, sink);
            }
        });
        engine.finish(n, sink);
        true
    }
}

/// Each gate's bars (ascending), in [`Gated::gates`]' order.
type GateLists = [Arc<[u32]>; MAX_GATES];

/// Gated rules read at chosen bars of one combination: where their gates
/// hold next, and what they say there.
struct Events<'a> {
    rules: &'a Rules,
    gated: &'a Gated,
    lists: [&'a [u32]; MAX_GATES],
    /// Each gate's cursor: at or before the bar being read.
    at: [usize; MAX_GATES],
    /// The rules Machine::step reads in each position: (long entry,
    /// short entry) when flat, (short entry, long exit) when long, (long
    /// entry, short exit) when short.
    movers: [(Option<&'a GatedRule>, Option<&'a GatedRule>); 3],
    scalars: &'a [f64],
    full: &'a [Option<&'a [f64]>],
    /// By position (as in `movers`): the last [`Events::next`] asked
    /// from `.0` and found `.1`, so no gate holds on the bars between
    /// (asked again from there, the answer stands: the bars read only go
    /// forward).
    found: [(usize, usize); 3],
}

/// One bar's signals (`Machine::step` reads those of its position).
struct BarSignals {
    long_entry: [u8; 1],
    long_exit: [u8; 1],
    short_entry: [u8; 1],
    short_exit: [u8; 1],
}

impl BarSignals {
    const NONE: BarSignals = BarSignals {
        long_entry: [0],
        long_exit: [0],
        short_entry: [0],
        short_exit: [0],
    };

    fn view<'s>(&'s self, close: &'s [f64], t: usize) -> Signals<'s> {
        Signals {
            long_entry: &self.long_entry,
            long_exit: &self.long_exit,
            short_entry: &self.short_entry,
            short_exit: &self.short_exit,
            stop: None,
            close: &close[t..t + 1],
        }
    }
}

impl<'a> Events<'a> {
    fn new(
        rules: &'a Rules,
        gated: &'a Gated,
        lists: &'a GateLists,
        direction: Direction,
        scalars: &'a [f64],
        full: &'a [Option<&'a [f64]>],
    ) -> Self {
        let rule = |root: Id| gated.rules.iter().find(|r| r.root == root);
        let r = &rules.roots;
        let short = r.short_rules(direction);
        Events {
            rules,
            gated,
            lists: std::array::from_fn(|k| &*lists[k]),
            at: [0; MAX_GATES],
            movers: [
                (rule(r.entry), short.and_then(|s| rule(s.0))),
                (short.and_then(|s| rule(s.0)), rule(r.exit)),
                (rule(r.entry), short.and_then(|s| rule(s.1))),
            ],
            scalars,
            full,
            found: [(usize::MAX, 0); 3],
        }
    }

    fn place(position: i8) -> usize {
        match position {
            0 => 0,
            1 => 1,
            _ => 2,
        }
    }

    fn movers(&self, position: i8) -> (Option<&'a GatedRule>, Option<&'a GatedRule>) {
        self.movers[Self::place(position)]
    }

    /// The first bar from `from` on (never before an earlier call's
    /// `from`) where a gate of the rules that can move `position` holds
    /// (`usize::MAX`: none).
    #[inline(always)]
    fn next(&mut self, position: i8, from: usize) -> usize {
        let (asked, found) = self.found[Self::place(position)];
        if asked <= from && from <= found {
            return found;
        }
        let next = self.seek_next(position, from);
        self.found[Self::place(position)] = (from, next);
        next
    }

    #[inline(never)]
    fn seek_next(&mut self, position: i8, from: usize) -> usize {
        let (a, b) = self.movers(position);
        let mut next = usize::MAX;
        for rule in [a, b].into_iter().flatten() {
            let (list, c) = (self.lists[rule.gate], &mut self.at[rule.gate]);
            *c = seek(list, *c, from);
            if let Some(&e) = list.get(*c) {
                next = next.min(e as usize);
            }
        }
        next
    }

    /// Whether gate `k` holds on bar `t` (its cursor at or before `t`).
    fn gate(&self, k: usize, t: usize) -> bool {
        let rest = &self.lists[k][self.at[k]..];
        match rest.first() {
            Some(&e) if e as usize >= t => e as usize == t,
            _ => rest.binary_search(&(t as u32)).is_ok(),
        }
    }

    /// `o`'s value on bar `t`.
    fn value(&self, o: Operand, t: usize) -> f64 {
        match o {
            Operand::Column(i) => self.full[i].map_or(f64::NAN, |c| c[t]),
            Operand::Scalar(i) => self.scalars[i],
            Operand::Other(id) => {
                let gate = |id: Id| {
                    let k = self.gated.gates.iter().position(|&g| g == id)?;
                    Some(self.gate(k, t))
                };
                eval::value_at(&self.rules.graph, id, t, self.full, self.scalars, &gate)
            }
        }
    }

    fn holds(&self, rule: Option<&GatedRule>, t: usize) -> bool {
        rule.is_some_and(|rule| {
            rule.terms.iter().all(|&term| match term {
                Term::Gate(k) => self.gate(k, t),
                Term::Compare(op, x, y) => {
                    super::scalar::compare(op, self.value(x, t), self.value(y, t))
                }
                Term::Other(id) => self.value(Operand::Other(id), t) != 0.0,
            })
        })
    }

    /// Bar `t`'s signals for a machine in `position` (the cursors at or
    /// before `t`).
    fn signals(&self, position: i8, t: usize) -> BarSignals {
        let (a, b) = self.movers(position);
        let (x, y) = (u8::from(self.holds(a, t)), u8::from(self.holds(b, t)));
        let (le, lx, se, sx) = match position {
            0 => (x, 0, y, 0),
            1 => (0, y, x, 0),
            _ => (x, 0, 0, y),
        };
        BarSignals {
            long_entry: [le],
            long_exit: [lx],
            short_entry: [se],
            short_exit: [sx],
        }
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

    use super::super::compiled::Rules;
    use super::super::keys::{KeyValue, Management};
    use super::super::source::RuleSource;
    use crate::grid::AxisValues;
    use crate::indicators::IndicatorSet;
    use crate::strategy::{Direction, PerBar};

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

    /// The rules of `source` on 700 synthetic bars (`seed`), the series of
    /// every combination of a ∈ {3, 6}, b ∈ {9, 14} and `c`.
    fn compiled(
        source: RuleSource,
        c: &[f64],
        seed: u64,
    ) -> (Rules, crate::data::Bars, IndicatorSet, Vec<[f64; 3]>) {
        let (mut rules, _) = Rules::compile(source).expect("compiles");
        // A crossing pair with filters takes the crosses' scan instead
        // (`pair.rs`); its gates are still what these tests compare.
        if rules.cross_pair.is_some() {
            rules.gated = rules.find_gates();
        }
        let bars = crate::data::synth(700, seed);
        let combos: Vec<[f64; 3]> = [3.0, 6.0]
            .iter()
            .flat_map(|&a| [9.0, 14.0].map(move |b| (a, b)))
            .flat_map(|(a, b)| c.iter().map(move |&c| [a, b, c]))
            .collect();
        let mut keys = Vec::new();
        for p in &combos {
            rules.indicators(p, &mut keys);
        }
        let set = IndicatorSet::build_for(&bars, &rules, keys);
        (rules, bars, set, combos)
    }

    /// Rules with gates hold the same positions from the gates' bars as
    /// bar by bar, in every combination and direction.
    fn same_positions(source: RuleSource, c: &[f64]) -> bool {
        let (rules, bars, set, combos) = compiled(source, c, 3);
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

    /// Entry order levels: above, at and below the deciding close.
    const ORDERS: &[&str] = &["high", "close", "low * 0.99"];

    /// Trade-management keys: scalars, parameters, whole columns and
    /// expressions of one bar.
    const STOPS: &[(&str, bool)] = &[
        ("0.02", true),
        ("c / 500", true),
        ("2 * atr(5)", false),
        ("c * 0.001 * close", false),
    ];
    const TARGETS: &[(&str, bool)] = &[("0.04", true), ("3 * atr(5)", false)];
    const MAX_BARS: &[&str] = &["c", "7"];
    const SIZES: &[&str] = &["0.5", "if(close > open, 1, 0.4)"];

    /// Managed rules with gates give the same record from the gates' bars
    /// as bar by bar (every bar's equity and position, every trade), in
    /// every combination, direction and fill mode.
    fn same_record(source: RuleSource, c: &[f64], conventions: crate::engine::Conventions) -> bool {
        use crate::engine::{Backtest, EngineConfig, Fill};
        let (rules, bars, set, combos) = compiled(source, c, 5);
        let record = |n: usize| Backtest {
            equity: vec![-7.0; n],
            position: vec![9; n],
            trades: Vec::new(),
            instruments: Vec::new(),
            detail: None,
        };
        for (fill, fee) in [(Fill::NextOpen, 0.0), (Fill::Close, 0.001)] {
            let cfg = EngineConfig {
                fill,
                fee,
                conventions,
                ..EngineConfig::default()
            };
            for direction in [Direction::Long, Direction::LongShort] {
                for p in &combos {
                    for n in [bars.len(), 451] {
                        let (mut by_bar, mut gated) = (record(n), record(n));
                        let mut machine = super::super::eval::Machine::default();
                        rules.manage(
                            &bars,
                            &set,
                            p,
                            direction,
                            &cfg,
                            n,
                            &mut machine,
                            &mut by_bar,
                        );
                        let used =
                            rules.manage_gated(&bars, &set, p, direction, &cfg, n, &mut gated);
                        assert!(used, "no gates, or the memo turned off");
                        let bits = |b: &Backtest| -> Vec<u64> {
                            b.equity.iter().map(|e| e.to_bits()).collect()
                        };
                        let at = format!("{p:?} {direction:?} {fill:?} n={n}");
                        assert_eq!(bits(&gated), bits(&by_bar), "equity {at}");
                        assert_eq!(gated.position, by_bar.position, "position {at}");
                        assert_eq!(
                            format!("{:?}", gated.trades),
                            format!("{:?}", by_bar.trades),
                            "trades {at}"
                        );
                    }
                }
            }
        }
        rules.gated.is_some()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]
        #[test]
        fn managed_gated_records_equal_the_bar_by_bar_ones(
            entry_gate in 0..GATES.len(),
            exit_gate in 0..GATES.len(),
            entry_filters in prop::collection::vec(0..FILTERS.len(), 0..2),
            short in prop::option::of((0..GATES.len(), 0..GATES.len())),
            stop in prop::option::of(0..STOPS.len()),
            target in prop::option::of(0..TARGETS.len()),
            max_bars in prop::option::of(0..MAX_BARS.len()),
            size in prop::option::of(0..SIZES.len()),
            order in prop::option::of((0..ORDERS.len(), any::<bool>(), 1..4u8)),
            moving in any::<bool>(),
            trail in prop::option::of(0..STOPS.len()),
            preset in 0..3usize,
            real_c in any::<bool>(),
        ) {
            use crate::engine::Conventions;
            let conventions = [Conventions::SIEVE, Conventions::VECTORBT, Conventions::BACKTESTING_PY][preset];
            let c: &[f64] = if real_c { &[10.0, 2.5] } else { &[10.0, 20.0] };
            let text = |s: &str| KeyValue::Expr(s.to_string());
            let source = RuleSource {
                name: "managed".into(),
                // Every parameter read, whatever the gates read.
                entry: rule(entry_gate, &entry_filters, true, real_c) + " and c > 0 and a + b > 0",
                exit: rule(exit_gate, &[], true, real_c),
                short_entry: short.map(|(g, _)| GATES[g].to_string()),
                short_exit: short.map(|(_, g)| GATES[g].to_string()),
                management: Management {
                    stop: stop.map(|k| (text(STOPS[k].0), STOPS[k].1)),
                    target: target.map(|k| (text(TARGETS[k].0), TARGETS[k].1)),
                    trail: trail.map(|k| (text(STOPS[k].0), STOPS[k].1)),
                    // At least one key: a managed strategy.
                    max_bars: max_bars.or(Some(0)).map(|k| text(MAX_BARS[k])),
                    size: size.map(|k| text(SIZES[k])),
                    // An entry stop or limit good for 1–3 bars, and a stop
                    // that moves on every close.
                    entry_stop: order.filter(|o| o.1).map(|o| text(ORDERS[o.0])),
                    entry_limit: order.filter(|o| !o.1).map(|o| text(ORDERS[o.0])),
                    order_bars: order.map(|o| KeyValue::Number(f64::from(o.2))),
                    stop_level: moving.then(|| text("close - 2 * atr(5)")),
                    max_entries: None,
                },
                params: vec![
                    ("a".into(), Ok(axis(&[3.0, 6.0]))),
                    ("b".into(), Ok(axis(&[9.0, 14.0]))),
                    ("c".into(), Ok(axis(c))),
                ],
                ..RuleSource::default()
            };
            prop_assert!(same_record(source, c, conventions), "the rules had no gates");
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
