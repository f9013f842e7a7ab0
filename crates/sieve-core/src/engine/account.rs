//! The fill step: one order against one instrument's [`Holding`] and the
//! cash it draws on, as pure functions ([`exit`], [`enter`],
//! [`stop_or_target`]) that every engine calls — the plain loop, the
//! managed engine and the screen's lanes — so that a fill is computed one
//! way everywhere. [`Account`] is a single instrument's account built from
//! them: cash and one holding. An account several instruments share holds
//! one cash balance and a holding per instrument and calls the same steps.

use super::{EngineConfig, ExitReason, Fill, Sink, Targets, Trade};

/// What a fill costs in one instrument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// Fraction of traded notional charged on every fill, taken from cash.
    pub fee: f64,
    /// Buy at p·(1+slippage), sell at p·(1−slippage).
    pub slippage: f64,
    /// Units are rounded down to a multiple of this; 0 = fractional units.
    pub lot_size: f64,
}

impl Costs {
    pub fn of(cfg: &EngineConfig) -> Costs {
        Costs {
            fee: cfg.fee,
            slippage: cfg.slippage,
            lot_size: cfg.lot_size,
        }
    }
}

/// What is held in one instrument: a side (1, −1, or 0 when flat), its
/// units, and the trade that opened it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Holding {
    pub side: i8,
    pub units: f64,
    pub trade: Option<Trade>,
}

impl Holding {
    pub const FLAT: Holding = Holding {
        side: 0,
        units: 0.0,
        trade: None,
    };

    /// The units held, signed by side (what equity marks against the close).
    #[inline]
    pub fn signed_units(&self) -> f64 {
        f64::from(self.side) * self.units
    }
}

/// A holding closed: the cash it returns (sale proceeds less the fee; a
/// short's buy-back as a negative amount) and the trade it ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exited {
    pub cash_in: f64,
    pub trade: Option<Trade>,
    /// The fill price (slippage included).
    pub price: f64,
}

/// A holding opened: it, and the cash it takes (a long's cost and fee; a
/// short's fee less its proceeds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entered {
    pub holding: Holding,
    pub cash_out: f64,
}

/// Closes `held` at raw price `p` on bar `t`; flat when it already is
/// (nothing returned).
#[inline(always)]
pub fn exit(costs: &Costs, held: &Holding, p: f64, t: usize, reason: ExitReason) -> Exited {
    if held.side == 0 {
        return Exited {
            cash_in: 0.0,
            trade: None,
            price: f64::NAN,
        };
    }
    let side = f64::from(held.side);
    // Closing a long sells; closing a short buys back.
    let price = p * (1.0 - side * costs.slippage);
    let notional = held.units * price;
    let fee = notional * costs.fee;
    let trade = held.trade.map(|mut trade| {
        // Its own units' fee (the holding may hold added units too).
        trade.close(t, price, trade.units * price * costs.fee, reason);
        trade
    });
    Exited {
        cash_in: side * notional - fee,
        trade,
        price,
    }
}

/// Opens `side` at raw price `p` on bar `t`, committing `size` × `base`
/// (the amount a size is a fraction of: a single account's equity when
/// flat); `None` when nothing opens: `side` 0, `base` ≤ 0 (a bankrupt
/// account opens nothing), or less than one lot affordable.
#[inline(always)]
pub fn enter(costs: &Costs, side: i8, p: f64, t: usize, size: f64, base: f64) -> Option<Entered> {
    if side == 0 || base <= 0.0 {
        return None;
    }
    let price = p * (1.0 + f64::from(side) * costs.slippage);
    let mut units = size * base / (price * (1.0 + costs.fee));
    if costs.lot_size > 0.0 {
        units = (units / costs.lot_size).floor() * costs.lot_size;
    }
    let notional = units * price;
    // No units, or so many that their cost overflows (a size of 1e308):
    // no trade, rather than a holding of ∞ or NaN units.
    if !(units > 0.0 && notional.is_finite()) {
        return None;
    }
    let fee = notional * costs.fee;
    Some(Entered {
        holding: Holding {
            side,
            units,
            trade: Some(Trade::open(side, t, price, units, fee)),
        },
        cash_out: f64::from(side) * notional + fee,
    })
}

/// Where a bar of open `o`, high `h` and low `l` ends a `side` holding
/// with these levels (NaN: none): the price and why. A gap through a level
/// fills at the open; inside the bar the stop is taken first (which of the
/// two a bar touched first is not known). With `stop_first`, the stop is
/// taken whenever the bar reaches it, even where the open gapped through
/// the target (the peers' rule).
#[inline(always)]
pub fn stop_or_target(
    side: i8,
    o: f64,
    h: f64,
    l: f64,
    stop: f64,
    target: f64,
    stop_first: bool,
) -> Option<(f64, ExitReason)> {
    // A long's mirror image: a short's stop above, its target below.
    let (o, h, l, stop, target) = match side > 0 {
        true => (o, h, l, stop, target),
        false => (-o, -l, -h, -stop, -target),
    };
    let sign = if side > 0 { 1.0 } else { -1.0 };
    let hit = if o <= stop {
        Some((o, ExitReason::StopLoss))
    } else if stop_first && l <= stop {
        Some((stop, ExitReason::StopLoss))
    } else if o >= target {
        Some((o, ExitReason::TakeProfit))
    } else if l <= stop {
        Some((stop, ExitReason::StopLoss))
    } else if h >= target {
        Some((target, ExitReason::TakeProfit))
    } else {
        None
    };
    hit.map(|(p, reason)| (sign * p, reason))
}

/// A single instrument's account while simulating: cash and one holding.
pub(crate) struct Account<'a> {
    cfg: &'a EngineConfig,
    costs: Costs,
    pub(crate) cash: f64,
    pub(crate) held: Holding,
    /// Units added to the holding (pyramiding), each its own trade; the
    /// holding's trade is the first entry's.
    adds: Vec<Trade>,
}

impl<'a> Account<'a> {
    /// All cash, no position.
    pub(crate) fn new(cfg: &'a EngineConfig) -> Self {
        Account {
            cfg,
            costs: Costs::of(cfg),
            cash: cfg.initial_cash,
            held: Holding::FLAT,
            adds: Vec::new(),
        }
    }

    /// The side held: 1, −1 or 0.
    #[inline(always)]
    pub(crate) fn position(&self) -> i8 {
        self.held.side
    }

    /// The units held, signed by side (what equity marks against the close).
    #[inline]
    pub(crate) fn signed_units(&self) -> f64 {
        self.held.signed_units()
    }

    /// The fill on bar `t`, if the target it reads differs from what is
    /// held.
    #[inline]
    pub(crate) fn fill<T: Targets, S: Sink + ?Sized>(
        &mut self,
        targets: &mut T,
        open: &[f64],
        close: &[f64],
        t: usize,
        sink: &mut S,
    ) {
        let target = match self.cfg.fill {
            Fill::NextOpen if t > 0 => Some((targets.at(t - 1), open[t])),
            Fill::NextOpen => None,
            Fill::Close => Some((targets.at(t), close[t])),
        };
        if let Some((target, price)) = target {
            if target != self.held.side {
                self.rebalance(target, price, t, sink);
            }
        }
    }

    /// The first bar after `t` (or `positions.len()`, one past with a
    /// next-open fill) whose fill could change the position: nothing
    /// changes on the bars in between.
    #[inline]
    pub(crate) fn next_fill<T: Targets>(&self, targets: &mut T, t: usize) -> usize {
        match self.cfg.fill {
            Fill::NextOpen => targets.first_differing(t, self.held.side) + 1,
            Fill::Close => targets.first_differing(t + 1, self.held.side),
        }
    }

    /// Moves to `target` at raw price `p` on bar `t`: closes the old
    /// position first (a reversal when `target` is the other side, else
    /// the strategy's exit), then opens the new one with all equity.
    #[inline(always)]
    pub(crate) fn rebalance<S: Sink + ?Sized>(
        &mut self,
        target: i8,
        p: f64,
        t: usize,
        sink: &mut S,
    ) {
        let reason = if target == -self.held.side {
            ExitReason::Reversal
        } else {
            ExitReason::Rule
        };
        self.exit(p, t, reason, sink);
        self.enter(target, p, t, 1.0);
    }

    /// Closes the position (if any) at raw price `p` on bar `t`.
    #[inline(always)]
    pub(crate) fn exit<S: Sink + ?Sized>(
        &mut self,
        p: f64,
        t: usize,
        reason: ExitReason,
        sink: &mut S,
    ) {
        if self.held.side == 0 {
            return;
        }
        let out = exit(&self.costs, &self.held, p, t, reason);
        self.cash += out.cash_in;
        if let Some(trade) = &out.trade {
            sink.trade(trade);
        }
        for mut add in self.adds.drain(..) {
            add.close(t, out.price, add.units * out.price * self.costs.fee, reason);
            sink.trade(&add);
        }
        self.held = Holding::FLAT;
    }

    /// Closes the position (if any) at raw price `p` on bar `t`, with
    /// slippage or without (a stop order filled at its level).
    #[inline(always)]
    pub(crate) fn exit_with<S: Sink + ?Sized>(
        &mut self,
        p: f64,
        t: usize,
        reason: ExitReason,
        slippage: bool,
        sink: &mut S,
    ) {
        if slippage {
            return self.exit(p, t, reason, sink);
        }
        let costs = self.costs;
        self.costs.slippage = 0.0;
        self.exit(p, t, reason, sink);
        self.costs = costs;
    }

    /// Opens `target` (when not 0) at raw price `p` on bar `t` from a flat
    /// account, committing `size` × equity; whether it opened.
    #[inline(always)]
    pub(crate) fn enter(&mut self, target: i8, p: f64, t: usize, size: f64) -> bool {
        // Flat: the equity is the cash.
        match enter(&self.costs, target, p, t, size, self.cash) {
            Some(e) => {
                self.cash -= e.cash_out;
                self.held = e.holding;
                true
            }
            None => false,
        }
    }

    /// The open trade's entry price (with slippage).
    pub(crate) fn entry_price(&self) -> f64 {
        self.held.trade.map_or(f64::NAN, |t| t.entry_price)
    }

    /// Says how the last entry (an add, or the first) was made.
    pub(crate) fn set_entry_reason(&mut self, reason: super::EntryReason) {
        if let Some(t) = self.adds.last_mut().or(self.held.trade.as_mut()) {
            t.entry_reason = reason;
        }
    }

    /// The last entry's price (the first's without adds; NaN when flat).
    pub(crate) fn last_entry_price(&self) -> f64 {
        self.adds
            .last()
            .map_or_else(|| self.entry_price(), |t| t.entry_price)
    }

    /// The entries the position holds: 1 and its adds (0 when flat).
    pub(crate) fn entries(&self) -> usize {
        match self.held.side {
            0 => 0,
            _ => 1 + self.adds.len(),
        }
    }

    /// Adds to the position at raw price `p` on bar `t`, committing `size`
    /// × equity, within `max_leverage` × equity for the whole position;
    /// whether it added.
    pub(crate) fn add(&mut self, p: f64, t: usize, size: f64, max_leverage: f64) -> bool {
        let side = self.held.side;
        let equity = self.cash + self.held.signed_units() * p;
        if side == 0 || equity.is_nan() || equity <= 0.0 {
            return false;
        }
        let size = size.min(max_leverage - self.held.units * p / equity);
        if size.is_nan() || size <= 0.0 {
            return false;
        }
        match enter(&self.costs, side, p, t, size, equity) {
            Some(e) => {
                self.cash -= e.cash_out;
                self.held.units += e.holding.units;
                self.adds.extend(e.holding.trade);
                true
            }
            None => false,
        }
    }

    /// Reports the trade still open at the end, marked at `last_close`.
    pub(crate) fn finish<S: Sink + ?Sized>(mut self, last_close: Option<f64>, sink: &mut S) {
        let adds = std::mem::take(&mut self.adds);
        for mut trade in self.held.trade.take().into_iter().chain(adds) {
            if let Some(c) = last_close {
                trade.mark(c);
            }
            sink.trade(&trade);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COSTS: Costs = Costs {
        fee: 0.01,
        slippage: 0.02,
        lot_size: 10.0,
    };

    /// A long by hand: 1,000 at a raw 50 buys at 51; 1,000 / (51 · 1.01)
    /// = 19.41… units, 10 in whole lots: 510 plus a 5.10 fee. Sold at a
    /// raw 60 (58.80): 588 less 5.88.
    #[test]
    fn a_long_with_fee_slippage_and_lots_by_hand() {
        let e = enter(&COSTS, 1, 50.0, 3, 1.0, 1000.0).unwrap();
        assert_eq!(e.holding.units, 10.0);
        assert!((e.cash_out - 515.1).abs() < 1e-9, "{}", e.cash_out);
        let x = exit(&COSTS, &e.holding, 60.0, 7, ExitReason::Rule);
        assert!((x.cash_in - (588.0 - 5.88)).abs() < 1e-9, "{}", x.cash_in);
        let trade = x.trade.unwrap();
        assert_eq!((trade.entry_bar, trade.exit_bar), (3, Some(7)));
        // Cash out minus cash in.
        assert!((trade.pnl - (582.12 - 515.1)).abs() < 1e-9, "{}", trade.pnl);
    }

    /// A size whose units' cost overflows (1e308 × 10,000 / 100 = 1e310)
    /// takes no trade, where it used to hold ∞ units and make equity NaN;
    /// the largest size that fits still trades.
    #[test]
    fn a_size_whose_cost_overflows_takes_no_trade() {
        let plain = Costs {
            fee: 0.0,
            slippage: 0.0,
            lot_size: 0.0,
        };
        assert!(enter(&plain, 1, 100.0, 0, 1e308, 10_000.0).is_none());
        assert!(enter(&plain, -1, 100.0, 0, 1e308, 10_000.0).is_none());
        let e = enter(&plain, 1, 100.0, 0, 1e300, 10_000.0).unwrap();
        assert_eq!(e.holding.units, 1e302);
    }

    /// A short: its entry brings in its proceeds less the fee (a negative
    /// cash out), its exit buys back (a negative cash in).
    #[test]
    fn a_short_takes_in_then_pays_out() {
        let costs = Costs {
            lot_size: 0.0,
            ..COSTS
        };
        let e = enter(&costs, -1, 100.0, 0, 0.5, 2000.0).unwrap();
        // Sold at 98: 0.5 · 2000 / (98 · 1.01) units.
        let units = 1000.0 / (98.0 * 1.01);
        assert!((e.holding.units - units).abs() < 1e-12);
        assert!((e.cash_out - (-units * 98.0 + units * 98.0 * 0.01)).abs() < 1e-9);
        let x = exit(&costs, &e.holding, 90.0, 1, ExitReason::Rule);
        // Bought back at 91.8.
        assert!((x.cash_in - (-units * 91.8 - units * 91.8 * 0.01)).abs() < 1e-9);
    }

    /// Nothing opens flat, bankrupt or below one lot; a flat exit is
    /// nothing.
    #[test]
    fn what_does_not_fill() {
        assert!(enter(&COSTS, 0, 50.0, 0, 1.0, 1000.0).is_none());
        assert!(enter(&COSTS, 1, 50.0, 0, 1.0, 0.0).is_none());
        assert!(enter(&COSTS, 1, 50.0, 0, 1.0, 400.0).is_none());
        let x = exit(&COSTS, &Holding::FLAT, 50.0, 0, ExitReason::Rule);
        assert_eq!((x.cash_in, x.trade), (0.0, None));
    }

    /// Gaps fill at the open, touches at the level, the stop first.
    #[test]
    fn stops_and_targets_by_hand() {
        use ExitReason::{StopLoss, TakeProfit};
        // Long, stop 95, target 110.
        assert_eq!(
            stop_or_target(1, 94.0, 99.0, 90.0, 95.0, 110.0, false),
            Some((94.0, StopLoss))
        );
        assert_eq!(
            stop_or_target(1, 111.0, 115.0, 108.0, 95.0, 110.0, false),
            Some((111.0, TakeProfit))
        );
        assert_eq!(
            stop_or_target(1, 100.0, 112.0, 94.0, 95.0, 110.0, false),
            Some((95.0, StopLoss))
        );
        assert_eq!(
            stop_or_target(1, 100.0, 112.0, 96.0, 95.0, 110.0, false),
            Some((110.0, TakeProfit))
        );
        assert_eq!(
            stop_or_target(1, 100.0, 105.0, 96.0, 95.0, 110.0, false),
            None
        );
        // Short, stop 105, target 90; NaN levels never touch.
        assert_eq!(
            stop_or_target(-1, 100.0, 106.0, 89.0, 105.0, 90.0, false),
            Some((105.0, StopLoss))
        );
        assert_eq!(
            stop_or_target(-1, 88.0, 95.0, 85.0, 105.0, 90.0, false),
            Some((88.0, TakeProfit))
        );
        assert_eq!(
            stop_or_target(1, 100.0, 200.0, 1.0, f64::NAN, f64::NAN, false),
            None
        );
    }

    /// The peers' rule: the open gaps through the target (111 over 110)
    /// and the bar falls to the stop (95): the stop at its level, not the
    /// target at the open. A gap through the stop is still the open.
    #[test]
    fn the_stop_first_whenever_the_bar_reaches_it() {
        use ExitReason::{StopLoss, TakeProfit};
        let first = |side, o, h, l, stop, target| stop_or_target(side, o, h, l, stop, target, true);
        assert_eq!(
            first(1, 111.0, 115.0, 94.0, 95.0, 110.0),
            Some((95.0, StopLoss))
        );
        assert_eq!(
            first(1, 111.0, 115.0, 96.0, 95.0, 110.0),
            Some((111.0, TakeProfit))
        );
        assert_eq!(
            first(1, 94.0, 115.0, 90.0, 95.0, 110.0),
            Some((94.0, StopLoss))
        );
        assert_eq!(
            first(-1, 89.0, 106.0, 85.0, 105.0, 90.0),
            Some((105.0, StopLoss))
        );
        assert_eq!(
            first(-1, 89.0, 104.0, 85.0, 105.0, 90.0),
            Some((89.0, TakeProfit))
        );
    }
}
