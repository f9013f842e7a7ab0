//! The exact engine with trade management: stops and targets that fill
//! inside a bar, exits after a number of bars, position sizes and
//! liquidation. The strategy decides on each close as before; what the
//! engine does to the position on its own (a stop, a target, `max_bars`,
//! a liquidation) goes back to the strategy as a flat position.
//!
//! One bar, in order (the [`Conventions`] switch parts of it):
//! 1. the open (`fill = "next_open"`): what the previous close decided
//!    fills here (an add to the position too);
//! 2. a waiting entry order the bar reaches fills (flat);
//! 3. inside the bar, for a position exposed to it: a stop or target whose
//!    level the open has gapped through fills at the open, else a level
//!    the bar touches fills at the level; the stop when both are touched;
//!    then an add order the bar reaches fills, and a trailing stop's peak
//!    moves;
//! 4. the close: a close that leaves equity at or below 0 liquidates;
//!    else the strategy decides (and `max_bars` ends a trade held that
//!    long), filled now (`fill = "close"`) or at the next open; a moving
//!    stop's level on this close tightens the stop.

use super::{
    stop_or_target, Account, Conventions, EngineConfig, EntryReason, ExitReason, Fill, Sink,
};
use crate::data::{Bars, Detail, DetailCounts};

/// A stop's or target's distance from the entry price, fixed for the
/// trade on the close that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Distance {
    #[default]
    Off,
    /// A fraction of the entry price (`stop_loss`, `take_profit`).
    Fraction(f64),
    /// Price units (`stop_distance`, `target_distance`).
    Price(f64),
}

impl Distance {
    /// `v` as a distance of the given kind; off unless finite and > 0.
    #[inline]
    pub fn new(v: f64, fraction: bool) -> Distance {
        if !(v.is_finite() && v > 0.0) {
            Distance::Off
        } else if fraction {
            Distance::Fraction(v)
        } else {
            Distance::Price(v)
        }
    }

    /// The level `sign` × this distance from `entry` (NaN when off):
    /// a long's stop is below (`sign` = −1), its target above.
    #[inline]
    fn level(self, entry: f64, sign: f64) -> f64 {
        match self {
            Distance::Off => f64::NAN,
            Distance::Fraction(v) => entry * (1.0 + sign * v),
            Distance::Price(v) => entry + sign * v,
        }
    }
}

/// What a trade is managed by, read on the close that decided it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TradePlan {
    pub stop: Distance,
    pub target: Distance,
    /// A trailing stop this far from the best price since entry (high for
    /// a long), moved inside each bar after the bar's stop check.
    pub trail: Distance,
    /// Leave on the close where the bars held reach this (NaN: never).
    pub max_bars: f64,
    /// Fraction of equity committed (NaN: 1).
    pub size: f64,
    /// The moving stop's level on this close (`stop_level`; NaN: none
    /// now): read on every close of the trade, it moves the stop only in
    /// the trade's favour.
    pub stop_level: f64,
    /// An entry by a stop order at this price, or by a limit order at
    /// that one (NaN: none; with entry orders on, an undefined level
    /// places no order), good for `order_bars` bars (NaN or < 1: 1).
    pub entry_stop: f64,
    pub entry_limit: f64,
    pub order_bars: f64,
    /// How many entries the position may take (NaN or < 1: 1): the
    /// strategy's entry signal while it holds adds `size` more.
    pub max_entries: f64,
}

impl Default for TradePlan {
    fn default() -> Self {
        TradePlan {
            stop: Distance::Off,
            target: Distance::Off,
            trail: Distance::Off,
            max_bars: f64::NAN,
            size: f64::NAN,
            stop_level: f64::NAN,
            entry_stop: f64::NAN,
            entry_limit: f64::NAN,
            order_bars: f64::NAN,
            max_entries: f64::NAN,
        }
    }
}

/// The strategy's decision on a close, for [`Managed::close`].
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    /// The position it wants.
    pub position: i8,
    /// Why a position it leaves is left.
    pub reason: ExitReason,
    /// The plan of a trade (or an add) it opens.
    pub plan: TradePlan,
    /// The sides whose exit signal fires (1, −1, 2: both, 0): it cancels
    /// a waiting entry order of that side.
    pub exit_signal: i8,
    /// The side whose entry signal alone fires (0: none): held, it adds
    /// to the position up to `max_entries`.
    pub entry_signal: i8,
}

/// The open trade as the rules read it (`position`, `entry_price`,
/// `bars_held`): what the engine holds, and since which bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TradeState {
    pub position: i8,
    /// NaN when flat.
    pub entry_price: f64,
    /// The fill bar (0 when flat).
    pub fill_bar: usize,
    /// The entries held (0 when flat) and the last one's price (NaN when
    /// flat; the first's without adds).
    pub entries: usize,
    pub last_entry_price: f64,
}

impl TradeState {
    pub const FLAT: TradeState = TradeState {
        position: 0,
        entry_price: f64::NAN,
        fill_bar: 0,
        entries: 0,
        last_entry_price: f64::NAN,
    };

    /// The same state (NaN entry prices alike).
    pub fn same(&self, other: &TradeState) -> bool {
        self.position == other.position
            && self.entry_price.to_bits() == other.entry_price.to_bits()
            && self.fill_bar == other.fill_bar
            && self.entries == other.entries
            && self.last_entry_price.to_bits() == other.last_entry_price.to_bits()
    }

    /// Bars held at bar `t`'s close: 0 on the close of the fill bar (NaN
    /// when flat).
    pub fn bars_held(&self, t: usize) -> f64 {
        if self.position == 0 {
            f64::NAN
        } else {
            t.saturating_sub(self.fill_bar) as f64
        }
    }
}

/// The engine with trade management, stepped one bar at a time by the
/// strategy: [`Managed::before_close`] then [`Managed::close`] for each
/// bar in order, then [`Managed::finish`].
pub struct Managed<'a> {
    acct: Account<'a>,
    fill: Fill,
    conv: Conventions,
    max_leverage: f64,
    open: &'a [f64],
    high: &'a [f64],
    low: &'a [f64],
    close: &'a [f64],
    /// The position the last close decided, why a position it leaves is
    /// left, and the plan of a trade it opens.
    intended: i8,
    reason: ExitReason,
    plan: TradePlan,
    /// The open trade's levels (NaN: none), fill bar and bar limit.
    stop: f64,
    target: f64,
    max_bars: f64,
    fill_bar: usize,
    /// Whether a close at or below zero equity ends trading (trade
    /// management), or the account trades on as the plain engine's does
    /// (a trailing stop's exit reasons only).
    liquidates: bool,
    liquidated: bool,
    /// Whether the stop moves on closes (`stop_level`): then every close
    /// of a trade is the engine's business.
    moving: bool,
    /// How many entries the open position may take, and the plan of an
    /// add the last close decided (filled at this open).
    max_entries: usize,
    add_at_open: Option<TradePlan>,
    /// Which of the open trade's stops is the tightest (its stop's exit
    /// reason): the fixed stop, the moving stop or the trailing stop.
    stop_by: ExitReason,
    /// The trailing stop's distance and the best price since entry.
    trail: Distance,
    peak: f64,
    /// The last bar a stop or target filled on.
    stopped_at: Option<usize>,
    /// Whether entries are orders at a level (`entry_stop`,
    /// `entry_limit`) rather than at the next open.
    orders: bool,
    /// The entry order waiting to fill.
    pending: Option<EntryOrder>,
    /// Whether the open trade entered inside its fill bar by a stop
    /// order (its target may fill on that bar) or a limit order.
    entered_by: Option<OrderKind>,
    /// Finer bars walked where a bar's order of fills is ambiguous, and
    /// how that went.
    detail: Option<&'a Detail>,
    counts: DetailCounts,
    /// Walks every covered bar, ambiguous or not (the property the
    /// ambiguity test must keep: the same run).
    #[cfg(test)]
    walk_all: bool,
}

/// What happened inside a bar (or a detail bar) to the position.
enum Inside {
    Nothing,
    /// An entry order filled: the side now held.
    Entered(i8),
    /// A stop or target ended the trade.
    Out,
}

/// A stop order (fills when the price rises to it, for a buy) or a limit
/// order (when it falls to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OrderKind {
    Stop,
    Limit,
}

/// An entry order: its side, kind and level, the last bar it is good for,
/// and the plan of the trade it opens.
#[derive(Debug, Clone, Copy)]
struct EntryOrder {
    side: i8,
    kind: OrderKind,
    level: f64,
    until: usize,
    plan: TradePlan,
    /// An add to the position held (pyramiding), not a new entry.
    add: bool,
}

impl EntryOrder {
    /// The order the plan's `entry_stop` / `entry_limit` places for
    /// `side` on bar `t`'s close (none without a level).
    fn placed(side: i8, plan: TradePlan, t: usize, add: bool) -> Option<EntryOrder> {
        let (kind, level) = match plan.entry_stop.is_nan() {
            false => (OrderKind::Stop, plan.entry_stop),
            true => (OrderKind::Limit, plan.entry_limit),
        };
        let bars = match plan.order_bars >= 1.0 {
            true => plan.order_bars as usize,
            false => 1,
        };
        (level.is_finite() && level > 0.0).then_some(EntryOrder {
            side,
            kind,
            level,
            until: t + bars,
            plan,
            add,
        })
    }
}

impl EntryOrder {
    /// Its fill price on a bar (o, h, l), if the bar reaches its level: a
    /// buy stop at max(open, level) when the high reaches it, a buy limit
    /// at min(open, level) when the low does; a sell mirrored.
    #[inline]
    fn fill(&self, o: f64, h: f64, l: f64) -> Option<f64> {
        let level = self.level;
        match (self.kind, self.side > 0) {
            (OrderKind::Stop, true) => (h >= level).then(|| o.max(level)),
            (OrderKind::Stop, false) => (l <= level).then(|| o.min(level)),
            (OrderKind::Limit, true) => (l <= level).then(|| o.min(level)),
            (OrderKind::Limit, false) => (h >= level).then(|| o.max(level)),
        }
    }
}

impl<'a> Managed<'a> {
    /// A flat account over these prices (all of one length); `liquidates`:
    /// see [`Managed::liquidates`].
    pub fn new(
        cfg: &'a EngineConfig,
        open: &'a [f64],
        high: &'a [f64],
        low: &'a [f64],
        close: &'a [f64],
        liquidates: bool,
    ) -> Self {
        Managed {
            acct: Account::new(cfg),
            fill: cfg.fill,
            conv: cfg.conventions,
            max_leverage: cfg.max_leverage,
            open,
            high,
            low,
            close,
            intended: 0,
            reason: ExitReason::Rule,
            plan: TradePlan::default(),
            stop: f64::NAN,
            target: f64::NAN,
            max_bars: f64::NAN,
            fill_bar: 0,
            liquidates,
            liquidated: false,
            moving: false,
            max_entries: 1,
            add_at_open: None,
            stop_by: ExitReason::StopLoss,
            trail: Distance::Off,
            peak: f64::NAN,
            stopped_at: None,
            orders: false,
            pending: None,
            entered_by: None,
            detail: None,
            counts: DetailCounts::default(),
            #[cfg(test)]
            walk_all: false,
        }
    }

    /// The side of the entry order waiting to fill (0: none).
    #[inline]
    pub fn pending_side(&self) -> i8 {
        self.pending.map_or(0, |o| o.side)
    }

    /// Makes entries orders at the plan's `entry_stop` / `entry_limit`
    /// level, filled inside a later bar, instead of at the next open.
    pub fn set_entry_orders(&mut self, on: bool) {
        self.orders = on;
    }

    /// Moves the stop on each close of a trade to the plan's
    /// `stop_level` where that is tighter ([`TradePlan::stop_level`]).
    pub fn set_moving_stop(&mut self, on: bool) {
        self.moving = on;
    }

    /// A flat account over the first `n` bars of `bars`.
    pub fn over_bars(cfg: &'a EngineConfig, bars: &'a Bars, n: usize, liquidates: bool) -> Self {
        let mut engine = Managed::new(
            cfg,
            &bars.open[..n],
            &bars.high[..n],
            &bars.low[..n],
            &bars.close[..n],
            liquidates,
        );
        engine.detail = bars.detail.as_deref();
        engine
    }

    /// The open trade now.
    #[inline]
    pub fn trade_state(&self) -> TradeState {
        if self.acct.position() == 0 {
            TradeState::FLAT
        } else {
            TradeState {
                position: self.acct.position(),
                entry_price: self.acct.entry_price(),
                fill_bar: self.fill_bar,
                entries: self.acct.entries(),
                last_entry_price: self.acct.last_entry_price(),
            }
        }
    }

    /// Bars held at bar `t`'s close: 0 on the close of the fill bar (NaN
    /// when flat).
    #[inline]
    fn bars_held(&self, t: usize) -> f64 {
        self.trade_state().bars_held(t)
    }

    /// Steps 1 and 2 of bar `t`. Where the engine changed the position
    /// itself, the position the strategy holds from here: 0 after a stop
    /// or a target, the side of an entry order that filled.
    #[inline]
    pub fn before_close<S: Sink + ?Sized>(&mut self, t: usize, sink: &mut S) -> Option<i8> {
        if self.liquidated {
            return None;
        }
        let (o, h, l) = (self.open[t], self.high[t], self.low[t]);
        let mut changed = None;
        if self.fill == Fill::NextOpen && t > 0 && self.intended != self.acct.position() {
            // The peers check the trade's stop and target before the order
            // the last close decided (an exit, a reversal) fills at the open.
            if !self.conv.exit_before_stop && self.acct.position() != 0 && self.exposed(t) {
                if let Some(hit) = self.first_level_hit(t, o, h, l) {
                    let order = self.intended;
                    self.stop_out(hit, t, sink);
                    changed = Some(0);
                    if !self.conv.drop_orders_on_stop_bar {
                        // The rest of the order (a reversal's entry) fills
                        // at the open still.
                        self.intended = order;
                        changed = Some(order);
                    }
                }
            }
            if self.intended != self.acct.position() {
                self.move_to(self.intended, o, t, sink);
            }
        }
        if let Some(plan) = self.add_at_open.take() {
            let side = self.acct.position();
            if self.intended == side && side != 0 {
                // An open through the position's stop or target ends it
                // there before the add could fill.
                match self.exposed(t).then(|| self.levels_hit(o, o, o)).flatten() {
                    Some(hit) => {
                        self.stop_out(hit, t, sink);
                        return Some(0);
                    }
                    None => self.add(o, t, plan, EntryReason::Add),
                }
            }
        }
        if self.pending.is_some_and(|order| t > order.until) {
            self.pending = None;
        }
        if let Some(detail) = self.detail {
            if self.walks(self.ambiguous(t, o, h, l)) {
                match detail.of_bar(t) {
                    Some(fine) => {
                        self.counts.walked += 1;
                        return self.walk(t, detail, fine, changed, sink);
                    }
                    None => self.counts.uncovered += 1,
                }
            }
        }
        match self.inside(t, (o, h, l), self.exposed(t), sink) {
            Inside::Out => Some(0),
            Inside::Entered(side) => Some(side),
            Inside::Nothing => changed,
        }
    }

    /// Steps 2 and 3 on one stretch of bar `t`'s prices (o, h, l): the
    /// whole bar's, or one of its detail bars'. `exposed`: whether the
    /// held trade's stop and target are live there.
    #[inline]
    fn inside<S: Sink + ?Sized>(
        &mut self,
        t: usize,
        (o, h, l): (f64, f64, f64),
        exposed: bool,
        sink: &mut S,
    ) -> Inside {
        let mut entered = None;
        if let Some(order) = self.pending {
            if self.acct.position() == 0 && !order.add {
                if let Some(price) = order.fill(o, h, l) {
                    self.pending = None;
                    self.plan = order.plan;
                    self.move_to(order.side, price, t, sink);
                    if self.acct.position() == 0 {
                        // No units (no cash): nothing to manage.
                        return Inside::Nothing;
                    }
                    self.intended = order.side;
                    self.entered_by = Some(order.kind);
                    self.acct.set_entry_reason(match order.kind {
                        OrderKind::Stop => EntryReason::EntryStop,
                        OrderKind::Limit => EntryReason::EntryLimit,
                    });
                    entered = Some(order.kind);
                }
            }
        }
        let side = self.acct.position();
        if side == 0 {
            return Inside::Nothing;
        }
        let exposed = exposed && entered.is_none();
        let hit = if exposed {
            self.levels_hit(o, h, l)
        } else if entered == Some(OrderKind::Stop) && !self.conv.stop_from_close {
            // A stop entry's target touched while its stop is not fills on
            // the fill bar (backtesting.py's rule).
            let target_only = match side > 0 {
                // (No stop, NaN, is never touched.)
                true => h >= self.target && (self.stop.is_nan() || l > self.stop),
                false => l <= self.target && (self.stop.is_nan() || h < self.stop),
            };
            target_only.then_some((self.target, ExitReason::TakeProfit))
        } else {
            None
        };
        if let Some(hit) = hit {
            self.stop_out(hit, t, sink);
            return Inside::Out;
        }
        // An add order reached after the position's own check.
        if let Some(order) = self.pending.filter(|o| o.add && o.side == side) {
            if let Some(price) = order.fill(o, h, l) {
                self.pending = None;
                let how = match order.kind {
                    OrderKind::Stop => EntryReason::AddStop,
                    OrderKind::Limit => EntryReason::AddLimit,
                };
                self.add(price, t, order.plan, how);
            }
        }
        if exposed && self.trail != Distance::Off {
            // The stop was checked first; then the peak moves.
            self.peak = match side > 0 {
                true => self.peak.max(h),
                false => self.peak.min(l),
            };
            self.tighten(side, self.trail_level(side, self.peak), ExitReason::Trail);
        }
        match entered {
            Some(_) => Inside::Entered(side),
            None => Inside::Nothing,
        }
    }

    /// The trailing stop's level for a position of side `side` whose best
    /// price is `peak`.
    #[inline]
    fn trail_level(&self, side: i8, peak: f64) -> f64 {
        self.trail.level(peak, -f64::from(side))
    }

    /// Whether OHLC cannot say in which order bar `t`'s fills came (the
    /// open's fills done): an entry order fills on it with a stop, target
    /// or trailing stop the rest of the bar may reach; or the held trade's
    /// stop and target are both reached (neither at the open), its
    /// trailing stop moved to the bar's high would be reached too, or an
    /// add order fills on it.
    #[inline]
    fn ambiguous(&self, t: usize, o: f64, h: f64, l: f64) -> bool {
        let side = self.acct.position();
        if side == 0 {
            return self.pending.is_some_and(|order| {
                let p = order.plan;
                !order.add
                    && order.fill(o, h, l).is_some()
                    && (p.stop != Distance::Off
                        || p.target != Distance::Off
                        || p.trail != Distance::Off)
            });
        }
        let adds = self
            .pending
            .is_some_and(|order| order.add && order.fill(o, h, l).is_some());
        if !self.exposed(t) {
            return adds;
        }
        if self.open_decides(o) {
            return false;
        }
        // The trailing stop moved to the bar's best price, tighter than the
        // stop now, and still inside the bar.
        let trailed = self.trail != Distance::Off && {
            let (peak, reached) = match side > 0 {
                true => (self.peak.max(h), l),
                false => (self.peak.min(l), h),
            };
            let level = self.trail_level(side, peak);
            self.tightens(side, level) && f64::from(side) * (level - reached) >= 0.0
        };
        // An add fills inside the bar with the add's own stop and target,
        // which the rest of the bar may reach.
        self.both_reached(o, h, l) || trailed || adds
    }

    /// Whether the open of a bar opening at `o` is through the held
    /// trade's stop (or its target, but under `stop_priority = "stop"`):
    /// that fill is the bar's, whatever happens after.
    #[inline]
    fn open_decides(&self, o: f64) -> bool {
        let [o, _, _, stop, target] = self.long_terms(o, o, o);
        o <= stop || (!self.conv.stop_always_first && o >= target)
    }

    /// Whether a bar is walked on its detail bars: where `ambiguous` (in
    /// the tests, every covered bar when asked).
    #[inline]
    fn walks(&self, ambiguous: bool) -> bool {
        #[cfg(test)]
        if self.walk_all {
            return true;
        }
        ambiguous
    }

    /// Bar `t` at the level of its detail bars `fine` (the open's fills
    /// done; `changed` what they changed): steps 2 and 3 on each detail
    /// bar in order, a trade entered on one exposed from the next.
    fn walk<S: Sink + ?Sized>(
        &mut self,
        t: usize,
        detail: &Detail,
        fine: std::ops::Range<usize>,
        mut changed: Option<i8>,
        sink: &mut S,
    ) -> Option<i8> {
        let held_exposed = self.acct.position() != 0 && self.exposed(t);
        let mut entered_at = None;
        for j in fine {
            let exposed =
                held_exposed || entered_at.is_some_and(|f| j > f && !self.conv.stop_from_close);
            let prices = (detail.open[j], detail.high[j], detail.low[j]);
            match self.inside(t, prices, exposed, sink) {
                Inside::Out => return Some(0),
                Inside::Entered(side) => {
                    entered_at = Some(j);
                    changed = Some(side);
                }
                Inside::Nothing => {}
            }
        }
        changed
    }

    /// Whether the open trade's stop and target are live on bar `t`: from
    /// the fill bar's open on with a next-open fill (or from the next bar,
    /// as the conventions say), from the next bar after a fill at the
    /// close or inside a bar (an entry order).
    #[inline]
    fn exposed(&self, t: usize) -> bool {
        match (self.fill, self.entered_by) {
            (_, Some(_)) if self.fill_bar == t => false,
            (Fill::NextOpen, _) if !self.conv.stop_from_next_bar => self.fill_bar <= t,
            _ => self.fill_bar < t,
        }
    }

    /// The held trade's stop or target that bar (o, h, l) reaches: the
    /// price and why.
    #[inline]
    fn levels_hit(&self, o: f64, h: f64, l: f64) -> Option<(f64, ExitReason)> {
        let side = self.acct.position();
        stop_or_target(
            side,
            o,
            h,
            l,
            self.stop,
            self.target,
            self.conv.stop_always_first,
        )
        .map(|(price, reason)| match reason {
            ExitReason::StopLoss => (price, self.stop_by),
            _ => (price, reason),
        })
    }

    /// [`Managed::levels_hit`] on bar `t`, where a bar that reaches both
    /// levels (neither at the open) is resolved by its detail bars: the
    /// first to reach one (for the peers' check before the open's order).
    fn first_level_hit(&mut self, t: usize, o: f64, h: f64, l: f64) -> Option<(f64, ExitReason)> {
        let hit = self.levels_hit(o, h, l)?;
        let Some(detail) = self.detail else {
            return Some(hit);
        };
        if !self.walks(self.both_reached(o, h, l)) {
            return Some(hit);
        }
        match detail.of_bar(t) {
            Some(fine) => {
                self.counts.walked += 1;
                let first = fine
                    .map(|j| (detail.open[j], detail.high[j], detail.low[j]))
                    .find_map(|(o, h, l)| self.levels_hit(o, h, l));
                Some(first.unwrap_or(hit))
            }
            None => {
                self.counts.uncovered += 1;
                Some(hit)
            }
        }
    }

    /// Whether bar (o, h, l) reaches both the held trade's stop and its
    /// target, neither at the open.
    #[inline]
    fn both_reached(&self, o: f64, h: f64, l: f64) -> bool {
        let [_, h, l, stop, target] = self.long_terms(o, h, l);
        !self.open_decides(o) && l <= stop && h >= target
    }

    /// A bar's open, high and low and the held trade's stop and target in
    /// a long's terms: a short's mirrored (negated, high and low swapped).
    #[inline]
    fn long_terms(&self, o: f64, h: f64, l: f64) -> [f64; 5] {
        let (stop, target) = (self.stop, self.target);
        match self.acct.position() > 0 {
            true => [o, h, l, stop, target],
            false => [-o, -l, -h, -stop, -target],
        }
    }

    /// Ends the held trade at a stop or target on bar `t`.
    #[inline]
    fn stop_out<S: Sink + ?Sized>(
        &mut self,
        (price, reason): (f64, ExitReason),
        t: usize,
        sink: &mut S,
    ) {
        self.acct
            .exit_with(price, t, reason, self.conv.stop_slippage, sink);
        self.intended = 0;
        self.stopped_at = Some(t);
    }

    /// Step 3 of bar `t`: the strategy's decision on this close (the
    /// position it wants, why it leaves one, the plan of a trade it opens).
    /// Returns the position the strategy holds from here: 0 where the
    /// engine ended the trade (`max_bars`, a liquidation).
    #[inline]
    pub fn close<S: Sink + ?Sized>(&mut self, t: usize, decision: Decision, sink: &mut S) -> i8 {
        let Decision {
            position: mut intended,
            mut reason,
            plan,
            exit_signal: cancels,
            entry_signal: entry,
        } = decision;
        let c = self.close[t];
        if self.liquidated {
            sink.bar(t, self.acct.cash, 0);
            return 0;
        }
        let side = self.acct.position();
        // Held, or flat after a stop or an open fill that lost more than
        // the equity.
        if self.liquidates && self.acct.cash + self.acct.signed_units() * c <= 0.0 {
            self.acct.exit(c, t, ExitReason::Liquidated, sink);
            self.acct.cash = self.acct.cash.max(0.0);
            self.liquidated = true;
            self.intended = 0;
            sink.bar(t, self.acct.cash, 0);
            return 0;
        }
        if self.fill == Fill::Close
            && self.conv.drop_orders_on_stop_bar
            && self.stopped_at == Some(t)
        {
            // A stop filled on this bar: its close decides nothing.
            intended = side;
        }
        if side != 0 && intended == side && self.bars_held(t) >= self.max_bars {
            intended = 0;
            reason = ExitReason::MaxBars;
        }
        // Pyramiding: the held side's entry signal adds, up to max_entries.
        let adds = side != 0
            && intended == side
            && entry == side
            && self.acct.entries() < self.max_entries;
        if self.orders {
            // An exit signal of its side cancels a waiting entry order.
            if let Some(order) = self.pending {
                if cancels == 2 || cancels == order.side {
                    self.pending = None;
                }
            }
            if intended != 0 && intended != side {
                // The entry is an order for the next bars (a new one
                // replaces the one waiting); a reversal's exit still fills
                // at the next open. No level, no order.
                self.pending = EntryOrder::placed(intended, plan, t, false);
                intended = 0;
            } else if adds {
                self.pending = EntryOrder::placed(side, plan, t, true);
            }
        }
        self.intended = intended;
        self.reason = reason;
        self.plan = plan;
        if self.fill == Fill::Close && intended != side {
            self.move_to(intended, c, t, sink);
        }
        if adds && !self.orders {
            match self.fill {
                Fill::Close => self.add(c, t, plan, EntryReason::Add),
                Fill::NextOpen => self.add_at_open = Some(plan),
            }
        }
        let held = self.acct.position();
        if self.moving && held != 0 && intended == held {
            self.tighten(held, plan.stop_level, ExitReason::StopLevel);
        }
        sink.bar(
            t,
            self.acct.cash + self.acct.signed_units() * c,
            self.acct.position(),
        );
        intended
    }

    /// Whether bars `from..to` pass with nothing for the engine to do: no
    /// decision waits for its fill, and a position held touches neither
    /// its stop nor its target, closes no bar at or below zero equity and
    /// reaches no bar limit there (or the account is liquidated). The
    /// strategy must also decide nothing there; then [`Managed::pass`]
    /// streams these bars at once.
    #[inline]
    pub fn quiet(&self, from: usize, to: usize) -> bool {
        self.first_busy(from, to) == to
    }

    /// The first bar of `from..to` on which the engine has something to
    /// do (`to`: none): [`Managed::quiet`] holds over the bars before it
    /// and not over it.
    #[inline]
    pub fn first_busy(&self, from: usize, to: usize) -> usize {
        if self.moving && self.acct.position() != 0 && from < to {
            // Every close may move the stop: not known here.
            return from;
        }
        self.first_busy_with(from, to, |_| f64::NAN)
    }

    /// [`Managed::first_busy`] where the moving stop's level on each close
    /// is `level(t)`: a close whose level would tighten the stop is busy,
    /// the others pass.
    #[inline]
    pub fn first_busy_with(&self, from: usize, to: usize, level: impl Fn(usize) -> f64) -> usize {
        if self.liquidated || from >= to {
            return to;
        }
        let side = self.acct.position();
        if self.intended != side {
            return from;
        }
        let adds = side != 0 && self.acct.entries() < self.max_entries;
        if (side != 0 && self.trail != Distance::Off)
            || self.pending.is_some()
            || adds
            || self.add_at_open.is_some()
        {
            // Every bar may move the trailing stop, fill the order or add
            // to the position.
            return from;
        }
        if side == 0 {
            // Flat: unless a loss beyond the equity waits to liquidate.
            return match !self.liquidates || self.acct.cash > 0.0 {
                true => to,
                false => from,
            };
        }
        let (cash, units) = (self.acct.cash, self.acct.signed_units());
        let (stop, target) = (self.stop, self.target);
        // A close at or below zero equity: only where it liquidates.
        let floor = if self.liquidates {
            0.0
        } else {
            f64::NEG_INFINITY
        };
        // The bars held only grow: looked at per bar only where the last
        // bar reaches the limit.
        let limit = self.bars_held(to - 1) >= self.max_bars;
        let moving = self.moving;
        (from..to)
            .find(|&t| {
                let (h, l, c) = (self.high[t], self.low[t], self.close[t]);
                let touched = match side > 0 {
                    true => (l <= stop) | (h >= target),
                    false => (h >= stop) | (l <= target),
                };
                touched
                    | (cash + units * c <= floor)
                    | (limit && self.bars_held(t) >= self.max_bars)
                    || (moving && self.tightens(side, level(t)))
            })
            .unwrap_or(to)
    }

    /// Whether the account was liquidated (it trades no more).
    #[inline]
    pub fn done(&self) -> bool {
        self.liquidated
    }

    /// Streams bars `from..to` that [`Managed::quiet`] passed.
    #[inline]
    pub fn pass<S: Sink + ?Sized>(&self, from: usize, to: usize, sink: &mut S) {
        if self.acct.position() == 0 {
            sink.flat(from, to, self.acct.cash);
        } else {
            sink.held(
                from,
                to,
                self.acct.cash,
                self.acct.signed_units(),
                self.close,
                self.acct.position(),
            );
        }
    }

    /// The trade still open at the end of bars `..end`, marked at the last
    /// close.
    pub fn finish<S: Sink + ?Sized>(self, end: usize, sink: &mut S) {
        if self.detail.is_some() {
            sink.detail(self.counts);
        }
        let last = end.checked_sub(1).map(|t| self.close[t]);
        self.acct.finish(last, sink);
    }

    /// Whether `level` would move the stop of a position of side `side`
    /// ([`Managed::tighten`]).
    #[inline]
    fn tightens(&self, side: i8, level: f64) -> bool {
        level.is_finite()
            && level > 0.0
            && level != self.stop
            && (self.stop.is_nan()
                || match side > 0 {
                    true => level > self.stop,
                    false => level < self.stop,
                })
    }

    /// Moves the stop of a position of side `side` to `level` where that
    /// is in the trade's favour (up for a long, down for a short), `by`
    /// then being its exit reason; an undefined level or one ≤ 0 moves
    /// nothing.
    #[inline]
    fn tighten(&mut self, side: i8, level: f64, by: ExitReason) {
        // (No stop yet, NaN, is looser than any level.)
        if self.tightens(side, level) {
            self.stop = level;
            self.stop_by = by;
        }
    }

    /// Adds to the position held at raw price `p` on bar `t` with the plan
    /// of the close that decided it: the whole position's target is then
    /// the last entry's, and so is its stop where that is tighter.
    fn add(&mut self, p: f64, t: usize, plan: TradePlan, how: EntryReason) {
        let size = match plan.size.is_finite() && plan.size > 0.0 {
            true => plan.size,
            false => 1.0,
        };
        if !self.acct.add(p, t, size, self.max_leverage) {
            return;
        }
        self.acct.set_entry_reason(how);
        let entry = match self.conv.stop_from_close {
            true => self.close[t],
            false => self.acct.last_entry_price(),
        };
        let side = self.acct.position();
        let sign = f64::from(side);
        // The last entry's stop where it is tighter (never looser: a moving
        // or trailing stop already above it stays); its target.
        self.tighten(side, plan.stop.level(entry, -sign), ExitReason::StopLoss);
        self.target = plan.target.level(entry, sign);
    }

    /// Fills the decided position at raw price `p` on bar `t`.
    #[inline]
    fn move_to<S: Sink + ?Sized>(&mut self, target: i8, p: f64, t: usize, sink: &mut S) {
        let reason = if target == -self.acct.position() {
            ExitReason::Reversal
        } else {
            self.reason
        };
        self.acct.exit(p, t, reason, sink);
        let plan = self.plan;
        let size = if plan.size.is_finite() && plan.size > 0.0 {
            plan.size.min(self.max_leverage)
        } else {
            1.0
        };
        if self.acct.enter(target, p, t, size) {
            // What the levels are measured from: the fill price (with
            // slippage), or the fill bar's close.
            let entry = match self.conv.stop_from_close {
                true => self.close[t],
                false => self.acct.entry_price(),
            };
            let sign = f64::from(target);
            self.stop = plan.stop.level(entry, -sign);
            self.stop_by = ExitReason::StopLoss;
            self.trail = plan.trail;
            self.peak = entry;
            self.tighten(target, plan.trail.level(entry, -sign), ExitReason::Trail);
            self.entered_by = None;
            self.target = plan.target.level(entry, sign);
            self.max_bars = if plan.max_bars > 0.0 {
                plan.max_bars
            } else {
                f64::NAN
            };
            self.fill_bar = t;
            self.max_entries = match plan.max_entries >= 1.0 {
                true => plan.max_entries as usize,
                false => 1,
            };
            self.add_at_open = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::coarsen;
    use crate::engine::{Backtest, Fill};
    use crate::random::SplitMix64 as Rng;

    /// `n` bars of `k` detail bars each that move without gaps: each
    /// detail bar opens at the last one's close.
    fn continuous(n: usize, k: usize, rng: &mut Rng) -> Bars {
        let mut fine = crate::data::synth(n * k, 1);
        let mut close = 100.0;
        for j in 0..n * k {
            let open = close;
            close = open * (0.006 * (rng.uniform() - 0.5)).exp();
            fine.time[j] = j as i64 * 60_000;
            fine.open[j] = open;
            fine.close[j] = close;
            fine.high[j] = open.max(close) * (1.0 + 0.002 * rng.uniform());
            fine.low[j] = open.min(close) * (1.0 - 0.002 * rng.uniform());
        }
        let mut bars = coarsen(&fine, k);
        let detail = Detail::map(bars.prices(), fine.prices()).unwrap();
        bars.detail = Some(std::sync::Arc::new(detail));
        bars
    }

    /// A distance of `scale` × (0.5..1.5) of the price, or none.
    fn distance(rng: &mut Rng, p_on: f64, scale: f64) -> Distance {
        let (on, v) = (rng.uniform() < p_on, rng.uniform());
        match on {
            true => Distance::Fraction(scale * (0.5 + v)),
            false => Distance::Off,
        }
    }

    /// Random decisions and plans on every close, the same stream
    /// whatever the engine does.
    fn run(bars: &Bars, cfg: &EngineConfig, seed: u64, orders: bool, walk_all: bool) -> Backtest {
        let n = bars.len();
        let mut engine = Managed::over_bars(cfg, bars, n, true);
        engine.set_entry_orders(orders);
        engine.set_moving_stop(true);
        engine.walk_all = walk_all;
        let mut bt = Backtest {
            equity: vec![0.0; n],
            position: vec![0; n],
            ..Default::default()
        };
        let mut rng = Rng(seed);
        let mut held = 0i8;
        for t in 0..n {
            if let Some(p) = engine.before_close(t, &mut bt) {
                held = p;
            }
            let c = bars.close[t];
            let (turn, side) = (rng.uniform(), rng.uniform());
            let position = match turn < 0.25 {
                true => [-1, 0, 1][(side * 3.0) as usize],
                false => held,
            };
            let pyramid = !cfg.conventions.stop_from_close && rng.uniform() < 0.3;
            let (above, level, bars_good) = (rng.uniform() < 0.5, rng.uniform(), rng.uniform());
            let moving = rng.uniform() < 0.3;
            let plan = TradePlan {
                stop: distance(&mut rng, 0.6, 0.006),
                target: distance(&mut rng, 0.6, 0.006),
                trail: distance(&mut rng, 0.3, 0.005),
                max_bars: f64::NAN,
                size: if pyramid { 0.3 } else { f64::NAN },
                stop_level: match moving {
                    true => c * (1.0 - f64::from(held) * 0.003),
                    false => f64::NAN,
                },
                entry_stop: match above {
                    true => c * (1.0 + f64::from(position) * 0.004 * level),
                    false => f64::NAN,
                },
                entry_limit: match above {
                    true => f64::NAN,
                    false => c * (1.0 - f64::from(position) * 0.004 * level),
                },
                order_bars: 1.0 + (bars_good * 3.0).floor(),
                max_entries: if pyramid { 3.0 } else { 1.0 },
            };
            let (exit, entry) = (rng.uniform(), rng.uniform());
            let decision = Decision {
                position,
                reason: ExitReason::Rule,
                plan,
                exit_signal: if exit < 0.05 { 2 } else { 0 },
                entry_signal: if entry < 0.5 { position } else { 0 },
            };
            held = engine.close(t, decision, &mut bt);
        }
        engine.finish(n, &mut bt);
        bt
    }

    /// Walking only the bars the engine calls ambiguous gives the run that
    /// walking every bar gives, where the detail bars move without gaps:
    /// every other bar is one OHLC decides alone.
    #[test]
    fn walking_the_ambiguous_bars_is_walking_every_bar() {
        let presets = [
            Conventions::SIEVE,
            Conventions::VECTORBT,
            Conventions::BACKTESTING_PY,
        ];
        let mut walked = 0;
        for case in 0..240u64 {
            let mut rng = Rng(case);
            let bars = continuous(150, 2 + (case % 6) as usize * 3, &mut rng);
            let cfg = EngineConfig {
                fill: match case % 4 {
                    0 => Fill::Close,
                    _ => Fill::NextOpen,
                },
                conventions: presets[(case / 4 % 3) as usize],
                max_leverage: 2.0,
                ..EngineConfig::default()
            };
            let orders = case % 2 == 1;
            let gated = run(&bars, &cfg, case, orders, false);
            let every = run(&bars, &cfg, case, orders, true);
            let key = |bt: &Backtest| {
                let equity: Vec<u64> = bt.equity.iter().map(|e| e.to_bits()).collect();
                (format!("{:?}", bt.trades), equity, bt.position.clone())
            };
            assert!(key(&gated) == key(&every), "case {case}");
            let counts = gated.detail.unwrap();
            assert!(counts.walked <= every.detail.unwrap().walked);
            walked += counts.walked;
        }
        assert!(walked > 100, "only {walked} bars walked");
    }
}
