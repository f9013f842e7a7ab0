//! The exact f64 engine: fills a target position per bar with
//! all equity, fees and slippage on both sides, optional whole lots, shorts
//! that mirror longs, and equity marked at every close.
//!
//! [`simulate`] streams every bar's equity and every trade to a [`Sink`], so
//! the same arithmetic serves the exact backtest (which keeps everything) and
//! the screen (which only accumulates its window's objective).
//!
//! One fill is one pure step ([`account`]: an order against a holding and
//! the cash it draws on), apart from the loops over bars that decide the
//! orders: [`simulate`] here, [`Managed`] (stops, targets, sizes, bar
//! limits) and the screen's lanes. [`Clock`] walks several instruments'
//! bars in time order, for an account they share.

mod account;
mod clock;
mod managed;
mod trade;

pub(crate) use account::Account;
pub use account::{enter, exit, stop_or_target, Costs, Entered, Exited, Holding};
pub use clock::Clock;
pub use managed::{Distance, Managed, TradePlan, TradeState};
pub use trade::{ExitReason, Side, Trade};

use crate::data::Bars;

/// When a target decided on bar t's close is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// At open[t+1]; a target on the last bar is not filled.
    #[default]
    NextOpen,
    /// At close[t].
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineConfig {
    pub fill: Fill,
    /// Fraction of traded notional charged on every fill, taken from cash.
    pub fee: f64,
    /// Buy at p·(1+slippage), sell at p·(1−slippage).
    pub slippage: f64,
    /// Units are rounded down to a multiple of this; 0 = fractional units.
    pub lot_size: f64,
    pub initial_cash: f64,
    /// The largest `strategy.size` a trade may take (a larger one is
    /// capped here).
    pub max_leverage: f64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            fill: Fill::NextOpen,
            fee: 0.0,
            slippage: 0.0,
            lot_size: 0.0,
            initial_cash: 10_000.0,
            max_leverage: 1.0,
        }
    }
}

/// Receives the simulation as it happens.
pub trait Sink {
    /// Equity at bar `t`'s close and the position then held.
    fn bar(&mut self, t: usize, equity: f64, position: i8);
    /// A trade that closed on bar `trade.exit_bar`, or (once, at the end) the
    /// position still open.
    fn trade(&mut self, trade: &Trade);

    /// Bars `from..to` all flat with the same `equity` (the simulation's fast
    /// path through flat stretches). Must equal calling `bar` for each.
    #[inline]
    fn flat(&mut self, from: usize, to: usize, equity: f64) {
        for t in from..to {
            self.bar(t, equity, 0);
        }
    }

    /// Bars `from..to` holding `position` unchanged: equity at bar t is
    /// `cash + signed_units * close[t]`. Must equal calling `bar` for each.
    #[inline]
    fn held(
        &mut self,
        from: usize,
        to: usize,
        cash: f64,
        signed_units: f64,
        close: &[f64],
        position: i8,
    ) {
        for (t, &c) in close.iter().enumerate().take(to).skip(from) {
            self.bar(t, cash + signed_units * c, position);
        }
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    #[inline(always)]
    fn bar(&mut self, t: usize, equity: f64, position: i8) {
        (**self).bar(t, equity, position);
    }
    fn trade(&mut self, trade: &Trade) {
        (**self).trade(trade);
    }
    fn flat(&mut self, from: usize, to: usize, equity: f64) {
        (**self).flat(from, to, equity);
    }
    fn held(
        &mut self,
        from: usize,
        to: usize,
        cash: f64,
        signed_units: f64,
        close: &[f64],
        position: i8,
    ) {
        (**self).held(from, to, cash, signed_units, close, position);
    }
}

/// Feeds one simulation to two sinks (e.g. the full record and window
/// accumulators), so nothing is simulated twice.
pub struct Tee<A, B>(pub A, pub B);

impl<A: Sink, B: Sink> Sink for Tee<A, B> {
    #[inline(always)]
    fn bar(&mut self, t: usize, equity: f64, position: i8) {
        self.0.bar(t, equity, position);
        self.1.bar(t, equity, position);
    }
    fn trade(&mut self, trade: &Trade) {
        self.0.trade(trade);
        self.1.trade(trade);
    }
    fn flat(&mut self, from: usize, to: usize, equity: f64) {
        self.0.flat(from, to, equity);
        self.1.flat(from, to, equity);
    }
    fn held(
        &mut self,
        from: usize,
        to: usize,
        cash: f64,
        signed_units: f64,
        close: &[f64],
        position: i8,
    ) {
        self.0.held(from, to, cash, signed_units, close, position);
        self.1.held(from, to, cash, signed_units, close, position);
    }
}

/// First index ≥ `from` whose target differs from `current`
/// (`targets.len()` if none), eight targets per step.
#[inline]
pub(crate) fn next_change(targets: &[i8], from: usize, current: i8) -> usize {
    let splat = u64::from_ne_bytes([current as u8; 8]);
    let mut i = from;
    while i + 8 <= targets.len() {
        let mut word = [0u8; 8];
        for (w, &p) in word.iter_mut().zip(&targets[i..i + 8]) {
            *w = p as u8;
        }
        let diff = u64::from_le_bytes(word) ^ splat;
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < targets.len() && targets[i] == current {
        i += 1;
    }
    i
}

/// Where the engine reads a strategy's targets: one per bar, or
/// [`crate::strategy::Changes`].
pub(crate) trait Targets {
    /// The target of bar `t` (bars asked for never go backwards).
    fn at(&mut self, t: usize) -> i8;
    /// The first bar at or after `from` whose target differs from
    /// `target` (the number of bars if none).
    fn first_differing(&mut self, from: usize, target: i8) -> usize;
}

impl Targets for &[i8] {
    #[inline(always)]
    fn at(&mut self, t: usize) -> i8 {
        self[t]
    }
    #[inline(always)]
    fn first_differing(&mut self, from: usize, target: i8) -> usize {
        next_change(self, from, target)
    }
}

/// Simulates `positions` (one target per bar) over bars `0..end`.
pub fn simulate<S: Sink + ?Sized>(
    bars: &Bars,
    positions: &[i8],
    cfg: &EngineConfig,
    end: usize,
    sink: &mut S,
) {
    let end = end.min(bars.len()).min(positions.len());
    let mut acct = Account::new(cfg);
    let (open, close) = (&bars.open[..end], &bars.close[..end]);
    let mut positions = &positions[..end];
    let mut t = 0;
    while t < end {
        acct.fill(&mut positions, open, close, t, sink);
        // Nothing changes until the next fill: hand the run to the sink whole.
        let next_fill = acct.next_fill(&mut positions, t).min(end);
        if acct.position() == 0 {
            sink.flat(t, next_fill, acct.cash);
        } else {
            sink.held(
                t,
                next_fill,
                acct.cash,
                acct.signed_units(),
                close,
                acct.position(),
            );
        }
        t = next_fill;
    }
    acct.finish(close.last().copied(), sink);
}

/// Everything the exact engine produced for one parameter set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Backtest {
    /// Equity at every bar's close.
    pub equity: Vec<f64>,
    /// Position held at every bar's close.
    pub position: Vec<i8>,
    /// Closed trades in order, then the open one (if any).
    pub trades: Vec<Trade>,
}

impl Sink for Backtest {
    #[inline(always)]
    fn bar(&mut self, t: usize, equity: f64, position: i8) {
        // Sized up front by `backtest`: a store, not a push.
        self.equity[t] = equity;
        self.position[t] = position;
    }
    fn trade(&mut self, trade: &Trade) {
        self.trades.push(*trade);
    }

    fn flat(&mut self, from: usize, to: usize, equity: f64) {
        self.equity[from..to].fill(equity);
        self.position[from..to].fill(0);
    }

    fn held(
        &mut self,
        from: usize,
        to: usize,
        cash: f64,
        signed_units: f64,
        close: &[f64],
        position: i8,
    ) {
        for (e, &c) in self.equity[from..to].iter_mut().zip(&close[from..to]) {
            *e = cash + signed_units * c;
        }
        self.position[from..to].fill(position);
    }
}

/// Runs the exact engine over every bar and keeps the whole record.
pub fn backtest(bars: &Bars, positions: &[i8], cfg: &EngineConfig) -> Backtest {
    let n = bars.len().min(positions.len());
    let mut out = Backtest {
        equity: vec![0.0; n],
        position: vec![0; n],
        trades: Vec::new(),
    };
    simulate(bars, positions, cfg, bars.len(), &mut out);
    out
}
