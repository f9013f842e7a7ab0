//! The decision on each close of a managed simulation: the rules' state
//! machine, or a built-in's targets read as events ([`TargetEvents`]), and
//! [`decide`], which hands it to the engine.

use super::eval::{Machine, Signals};
use super::keys::{KeyRead, ManagedKeys};
use crate::engine::{Decision, Distance, ExitReason, Managed, Sink, TradePlan};

/// Step 3 of bar `t` of the block starting at `start`: the decider's
/// decision with the plan of the keys on this close, filled or kept for the
/// next open by the engine (which may end the trade: the decider then holds
/// what the engine holds).
#[inline(always)]
pub(super) fn decide<S: Sink + ?Sized, K: KeyRead>(
    engine: &mut Managed,
    decider: &mut impl Decider,
    signals: &Signals,
    keys: &ManagedKeys<K>,
    start: usize,
    t: usize,
    sink: &mut S,
) {
    let reason = decider.step(signals, start, t);
    let read = |k: Option<K>| k.map_or(f64::NAN, |k| k.at(t));
    let distance =
        |k: Option<(K, bool)>| k.map_or(Distance::Off, |(k, f)| Distance::new(k.at(t), f));
    let plan = TradePlan {
        stop: distance(keys.stop),
        target: distance(keys.target),
        trail: distance(keys.trail),
        max_bars: read(keys.max_bars),
        size: read(keys.size),
        stop_level: read(keys.stop_level),
        entry_stop: read(keys.entry_stop),
        entry_limit: read(keys.entry_limit),
        order_bars: read(keys.order_bars),
        max_entries: read(keys.max_entries),
    };
    let decision = Decision {
        position: decider.position(),
        reason,
        plan,
        exit_signal: decider.exit_signal(signals, start, t),
        entry_signal: decider.entry_signal(signals, start, t),
    };
    let held = engine.close(start + t, decision, sink);
    decider.set_position(held);
}

/// What decides the position on each close of a managed simulation: the
/// rules' state machine, or a built-in's targets read as events.
pub(super) trait Decider {
    /// Whether bars `b..e` of the block starting at `start` decide nothing.
    fn quiet(&self, signals: &Signals, start: usize, b: usize, e: usize) -> bool;
    /// Bar `t`'s decision (the position is then [`Decider::position`]),
    /// and why a position it leaves is left.
    fn step(&mut self, signals: &Signals, start: usize, t: usize) -> ExitReason;
    fn position(&self) -> i8;
    /// The position the engine holds (flat after a stop).
    fn set_position(&mut self, position: i8);
    /// The sides whose exit signal fires on bar `t` (1: the long's, −1: the
    /// short's, 2: both, 0: none): it cancels an entry order of that side.
    fn exit_signal(&self, signals: &Signals, start: usize, t: usize) -> i8;
    /// The side whose entry signal alone fires on bar `t` (0: none, or
    /// both): held, it adds to the position (pyramiding).
    fn entry_signal(&self, signals: &Signals, start: usize, t: usize) -> i8;
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
    #[inline(always)]
    fn entry_signal(&self, signals: &Signals, _start: usize, t: usize) -> i8 {
        match (signals.long_entry[t] != 0, signals.short_entry[t] != 0) {
            (true, false) => 1,
            (false, true) => -1,
            _ => 0,
        }
    }
    #[inline(always)]
    fn exit_signal(&self, signals: &Signals, _start: usize, t: usize) -> i8 {
        match (signals.long_exit[t] != 0, signals.short_exit[t] != 0) {
            (true, true) => 2,
            (true, false) => 1,
            (false, true) => -1,
            (false, false) => 0,
        }
    }
}

/// A built-in's targets as events: where its target changes, the position
/// moves there (after a stop, its next change decides again).
pub(crate) struct TargetEvents<'a> {
    pub(super) targets: &'a [i8],
    /// The target of the bar before.
    pub(super) last: i8,
    pub(super) position: i8,
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
    /// A built-in's targets hold a position: no adds.
    fn entry_signal(&self, _signals: &Signals, _start: usize, _t: usize) -> i8 {
        0
    }
    /// A target leaving a side (to flat or the other side) is its exit.
    fn exit_signal(&self, _signals: &Signals, start: usize, t: usize) -> i8 {
        let (now, before) = (
            self.targets[start + t],
            match start + t {
                0 => 0,
                i => self.targets[i - 1],
            },
        );
        match before != now {
            true => before,
            false => 0,
        }
    }
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
