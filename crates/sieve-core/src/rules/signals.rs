//! Signals of one's own (an entry and an exit per bar, from pandas, TA-Lib
//! or a model) traded by the rule strategies' state machine, with or
//! without trade management.

use super::decide::{decide, Decider};
use super::eval::{Machine, Signals};
use super::keys::{KeySeries, ManagedKeys};
use crate::data::Bars;
use crate::engine::{EngineConfig, Managed, Sink};
use crate::strategy::{Direction, PerBar};

/// Trade-management values for one set of signals, one per bar (or one
/// for all bars), read on the close that decides an entry (as the
/// `[strategy]` keys' values are).
pub type SignalKeys<'a> = ManagedKeys<KeySeries<'a>>;

/// The four signal series the state machine reads: an entry and an exit on
/// the same bar cancel, and so do a long and a short entry (as vectorbt's
/// `from_signals`); with `long_short` and no short signals, an exit enters
/// short and an entry covers it, as a rule `exit` does.
struct Decisions {
    long_entry: Vec<u8>,
    long_exit: Vec<u8>,
    short_entry: Vec<u8>,
    short_exit: Vec<u8>,
}

impl Decisions {
    fn new(long: (&[u8], &[u8]), short: Option<(&[u8], &[u8])>, direction: Direction) -> Self {
        let apart = |a: &[u8], b: &[u8]| -> (Vec<u8>, Vec<u8>) {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| (u8::from(x != 0 && y == 0), u8::from(y != 0 && x == 0)))
                .unzip()
        };
        let (mut long_entry, long_exit) = apart(long.0, long.1);
        let (short_entry, short_exit) = match (direction, short) {
            (Direction::Long, _) => (vec![0; long_entry.len()], vec![0; long_entry.len()]),
            (Direction::LongShort, None) => (long_exit.clone(), long_entry.clone()),
            (Direction::LongShort, Some((a, b))) => {
                // A long and a short entry on the same bar cancel too.
                let (short_entry, short_exit) = apart(a, b);
                let (l, s) = apart(&long_entry, &short_entry);
                long_entry = l;
                (s, short_exit)
            }
        };
        Decisions {
            long_entry,
            long_exit,
            short_entry,
            short_exit,
        }
    }

    fn signals<'a>(&'a self, close: &'a [f64]) -> Signals<'a> {
        Signals {
            long_entry: &self.long_entry,
            long_exit: &self.long_exit,
            short_entry: &self.short_entry,
            short_exit: &self.short_exit,
            stop: None,
            close,
        }
    }
}

/// The targets (the position held after each bar's close) that signals of
/// one's own give, by the rule strategies' state machine: a long entry
/// while flat goes long, an exit while long goes flat, an entry while long
/// and an exit while flat do nothing; see [`Decisions`] for the rest.
/// Signals are 0/1 bytes, one per bar.
pub fn signal_targets(
    close: &[f64],
    long: (&[u8], &[u8]),
    short: Option<(&[u8], &[u8])>,
    direction: Direction,
) -> Vec<i8> {
    let decisions = Decisions::new(long, short, direction);
    let mut out = vec![0i8; close.len()];
    Machine::default().run(&decisions.signals(close), 0, &mut PerBar(&mut out));
    out
}

/// Signals with trade management through the managed engine over bars
/// `..end`, streamed into `sink`: the state machine decides on each close
/// from the position the engine holds, so after a stop or a target an entry
/// signal on that very close enters again (as a level rule does).
#[allow(clippy::too_many_arguments)]
pub fn simulate_signals<S: Sink + ?Sized>(
    bars: &Bars,
    long: (&[u8], &[u8]),
    short: Option<(&[u8], &[u8])>,
    direction: Direction,
    keys: &SignalKeys,
    cfg: &EngineConfig,
    end: usize,
    sink: &mut S,
) {
    let n = end.min(bars.len());
    let decisions = Decisions::new(long, short, direction);
    let signals = decisions.signals(&bars.close[..n]);
    let mut engine = Managed::over_bars(cfg, bars, n, true);
    engine.set_moving_stop(keys.stop_level.is_some());
    engine.set_entry_orders(keys.entry_stop.is_some() || keys.entry_limit.is_some());
    let mut machine = Machine::default();
    for t in 0..n {
        if let Some(held) = engine.before_close(t, sink) {
            machine.set_position(held);
        }
        decide(&mut engine, &mut machine, &signals, keys, 0, t, sink);
    }
    engine.finish(n, sink);
}
