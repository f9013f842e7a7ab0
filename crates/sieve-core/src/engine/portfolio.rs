//! Several instruments trading from one account (issue 48). Entries draw
//! on one cash balance and exits return to it, on one [`Schedule`] over the
//! union of the instruments' times; each instrument decides on its own bars
//! and fills at its own next open (or at the deciding close), with its own
//! costs; longs and shorts, stops and targets inside a bar, position and
//! exposure limits.
//!
//! The order of a bar's fills follows vectorbt's `from_signals` with
//! `cash_sharing=True, call_seq="auto"`, so that a portfolio ported from it
//! reproduces: exits first (the largest position first), then entries, each
//! against the cash the fills before it left. Entries are ranked by
//! `rank` (highest first, undefined last, ties in instrument order); an
//! entry past `max_positions`, or with no cash left, is skipped, not
//! queued. [`super::simulate_weights`] rebalances to target weights instead.

use crate::data::Bars;

use super::{enter, exit, Clock, Costs, ExitReason, Holding, Sink, Trade};

/// What a size is a fraction of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeOf {
    /// The cash free at the fill (vectorbt's `size_type="percent"`: three
    /// entries at 0.5 commit 500, 250 and 125 of 1,000).
    Cash,
    /// The portfolio's value at the last close before the fill; an entry
    /// that needs more than the cash free is reduced to it.
    Equity,
}

/// The account's rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortfolioRules {
    pub initial_cash: f64,
    /// The fraction of [`SizeOf`] each entry commits.
    pub size: f64,
    pub size_of: SizeOf,
    /// At most this many positions open at once.
    pub max_positions: Option<usize>,
    /// The positions' value (each at its last close, an entry at its
    /// price) at most this many times the portfolio's value at the last
    /// close: an entry that would pass it is reduced to fit, or skipped
    /// when nothing fits.
    pub max_exposure: Option<f64>,
    /// Orders fill at the close that decides them (`backtest.fill =
    /// "close"`), not at the next open.
    pub at_close: bool,
}

impl PortfolioRules {
    /// A target-weight portfolio's rules ([`super::simulate_weights`]):
    /// only the cash, the exposure cap and the fill apply; the sizing
    /// fields of a signal portfolio are left at their neutral values.
    pub fn rebalancing(initial_cash: f64, max_exposure: Option<f64>, at_close: bool) -> Self {
        PortfolioRules {
            initial_cash,
            size: 1.0,
            size_of: SizeOf::Cash,
            max_positions: None,
            max_exposure,
            at_close,
        }
    }
}

/// The union of several instruments' times, and each instrument on it:
/// the step of each of its bars and its last close at every step. A
/// study's portfolio runs every combination on one schedule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schedule {
    pub time: Vec<i64>,
    /// Each instrument's bars' steps.
    steps: Vec<Vec<u32>>,
    /// Each instrument's last close at every step (NaN before its first
    /// bar): what a position in it is worth then.
    marks: Vec<Vec<f64>>,
}

impl Schedule {
    /// The schedule of these instruments (times strictly ascending).
    pub fn new(bars: &[&Bars]) -> Schedule {
        let mut clock = Clock::new(bars.iter().map(|b| b.time.as_slice()).collect());
        let mut s = Schedule {
            steps: bars.iter().map(|b| Vec::with_capacity(b.len())).collect(),
            ..Schedule::default()
        };
        let mut now = Vec::new();
        while let Some(t) = clock.advance(&mut now) {
            let step = s.time.len() as u32;
            s.time.push(t);
            for &(i, _) in &now {
                s.steps[i].push(step);
            }
        }
        s.marks = bars
            .iter()
            .zip(&s.steps)
            .map(|(b, steps)| {
                let mut marks = vec![f64::NAN; s.time.len()];
                for (k, &step) in steps.iter().enumerate() {
                    let end = steps.get(k + 1).map_or(marks.len(), |&n| n as usize);
                    marks[step as usize..end].fill(b.close[k]);
                }
                marks
            })
            .collect();
        s
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The step of instrument `leg`'s bar `k`.
    #[inline]
    pub fn step_of(&self, leg: usize, k: usize) -> usize {
        self.steps[leg][k] as usize
    }

    /// Instrument `leg`'s bar at step `t`, if it has one then.
    pub fn bar_of(&self, t: usize, leg: usize) -> Option<usize> {
        self.steps[leg].binary_search(&(t as u32)).ok()
    }

    /// How many of instrument `leg`'s bars fall in the first `end` steps.
    pub fn bars_until(&self, leg: usize, end: usize) -> usize {
        self.steps[leg].partition_point(|&s| (s as usize) < end)
    }

    /// Instrument `leg`'s last close at every step.
    pub fn marks(&self, leg: usize) -> &[f64] {
        &self.marks[leg]
    }

    /// The value of `cash` and `held` ((instrument, signed units), in
    /// instrument order) at step `t`'s close.
    #[inline]
    pub fn value(&self, cash: f64, held: &[(usize, f64)], t: usize) -> f64 {
        let mut value = cash;
        for &(i, units) in held {
            value += units * self.marks[i][t];
        }
        value
    }
}

/// What an instrument asks for on the close of one of its bars: the side
/// to hold from its next open (ignored where it holds that side already),
/// or one side no longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Long,
    Short,
    /// Neither.
    Flat,
    /// Not long (a long exit: nothing while short or flat).
    NotLong,
    /// Not short (a short exit: nothing while long or flat).
    NotShort,
}

impl Want {
    /// The side it opens: 1, −1 or 0.
    pub fn opens(self) -> i8 {
        match self {
            Want::Long => 1,
            Want::Short => -1,
            Want::Flat | Want::NotLong | Want::NotShort => 0,
        }
    }

    /// Whether it ends a position of side `held`.
    pub fn ends(self, held: i8) -> bool {
        match self {
            Want::Long => held < 0,
            Want::Short => held > 0,
            Want::Flat => held != 0,
            Want::NotLong => held > 0,
            Want::NotShort => held < 0,
        }
    }

    /// The want of a target position.
    pub fn of_target(target: i8) -> Want {
        match target.signum() {
            1 => Want::Long,
            -1 => Want::Short,
            _ => Want::Flat,
        }
    }
}

/// One signal: the bar whose close decides it, and what it wants from the
/// next bar's open; or an exit inside the next bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signal {
    pub bar: usize,
    pub want: Want,
    /// An exit inside the next bar (a stop or a target touched): its price
    /// before slippage and why. Filled after that bar's open's orders.
    pub inside: Option<(f64, ExitReason)>,
}

impl Signal {
    /// `want`, decided on bar `bar`'s close: filled at the next open, or
    /// at that close ([`PortfolioRules::at_close`]).
    pub fn new(bar: usize, want: Want) -> Signal {
        Signal {
            bar,
            want,
            inside: None,
        }
    }
}

/// Signals of long entry and exit flags per bar (and short ones, empty
/// for none): an entry and an exit of one side on one bar cancel, and so
/// do a long and a short entry; an exit ends only its side.
pub fn signals_of_flags(
    entries: &[bool],
    exits: &[bool],
    short_entries: &[bool],
    short_exits: &[bool],
    out: &mut Vec<Signal>,
) {
    out.clear();
    let at = |v: &[bool], k: usize| v.get(k).copied().unwrap_or(false);
    for (bar, (&e, &x)) in entries.iter().zip(exits).enumerate() {
        let (se, sx) = (at(short_entries, bar), at(short_exits, bar));
        let long = e && !x;
        let short = se && !sx;
        let want = match (long, short) {
            (true, false) => Want::Long,
            (false, true) => Want::Short,
            (true, true) => continue,
            (false, false) => match (x && !e, sx && !se) {
                (true, true) => Want::Flat,
                (true, false) => Want::NotLong,
                (false, true) => Want::NotShort,
                (false, false) => continue,
            },
        };
        out.push(Signal::new(bar, want));
    }
}

/// One instrument of a portfolio: its bars, its signals in bar order,
/// what orders its entries on one step (highest first; `None`: equal) and
/// its costs.
#[derive(Debug, Clone, Copy)]
pub struct Leg<'a> {
    pub bars: &'a Bars,
    pub signals: &'a [Signal],
    pub rank: Option<&'a [f64]>,
    pub costs: Costs,
}

/// A portfolio's run: its value at every time of the union, the number of
/// positions open then and their gross exposure (their value at the close
/// over the portfolio's), and every trade with its instrument (bars counted
/// in the instrument's own bars; a trade still open at the end has no exit).
#[derive(Debug, Clone, PartialEq)]
pub struct PortfolioRun {
    pub time: Vec<i64>,
    pub equity: Vec<f64>,
    pub positions: Vec<u32>,
    pub exposure: Vec<f64>,
    pub trades: Vec<(usize, Trade)>,
}

/// An order of a target-weight portfolio: instrument, its bar, units
/// (negative: sold), the price paid or received (slippage in) and the fee.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Order {
    pub instrument: usize,
    pub bar: usize,
    pub units: f64,
    pub price: f64,
    pub fee: f64,
}

/// What a portfolio's run reports as it goes.
pub trait Ledger {
    /// Steps `from..to`, between fills: `cash` and the positions `held`
    /// ((instrument, signed units), in instrument order), each worth its
    /// last close ([`Schedule::value`]).
    fn steps(&mut self, from: usize, to: usize, cash: f64, held: &[(usize, f64)], on: &Schedule);
    /// A trade of instrument `leg` (bars in its own bars), with the steps
    /// of its entry and exit fills.
    fn trade(&mut self, leg: usize, trade: &Trade, entry_step: usize, exit_step: Option<usize>);
    /// An order of a target-weight portfolio ([`super::simulate_weights`]).
    fn order(&mut self, _order: &Order) {}
}

/// An order due: its step, instrument, bar and what it wants, and the
/// rank of the bar that decided it.
#[derive(Debug, Clone, Copy)]
struct Due {
    step: usize,
    leg: usize,
    bar: usize,
    want: Want,
    inside: Option<(f64, ExitReason)>,
    rank: f64,
}

/// What [`simulate_portfolio`] reuses from one run to the next.
#[derive(Debug, Default)]
pub struct PortfolioScratch {
    due: Vec<Due>,
    held: Vec<(usize, f64)>,
    holdings: Vec<Holding>,
    entered_at: Vec<usize>,
}

/// Runs `legs` from one account under `rules` over the first `end` steps
/// of `schedule` (the schedule of the legs' bars), reporting to `ledger`.
///
/// The orders of a step are each instrument's signal of its bar before,
/// filled at this bar's open (or of this bar, at its close: `at_close`):
/// exits first (the largest position first, as vectorbt orders its sells),
/// then entries by rank (highest first, undefined last, ties in instrument
/// order), each against the cash the fills before it left. Exits inside
/// the bar (stops and targets) come after the open's orders, or before the
/// close's. Between fills the portfolio is marked at each instrument's last
/// close, in instrument order (as vectorbt sums its group's value).
pub fn simulate_portfolio<L: Ledger + ?Sized>(
    legs: &[Leg<'_>],
    rules: &PortfolioRules,
    schedule: &Schedule,
    end: usize,
    scratch: &mut PortfolioScratch,
    ledger: &mut L,
) {
    let end = end.min(schedule.len());
    let PortfolioScratch {
        due,
        held,
        holdings,
        entered_at,
    } = scratch;
    due.clear();
    held.clear();
    holdings.clear();
    holdings.resize(legs.len(), Holding::FLAT);
    entered_at.clear();
    entered_at.resize(legs.len(), 0);
    for (leg, l) in legs.iter().enumerate() {
        for s in l.signals {
            // The bar it fills on: the next (at its open, or inside it),
            // or its own (at its close).
            let bar = match (s.inside, rules.at_close) {
                (None, true) => s.bar,
                _ => s.bar + 1,
            };
            if bar >= l.bars.len() {
                break;
            }
            let step = schedule.step_of(leg, bar);
            if step >= end {
                break;
            }
            let rank = l.rank.map_or(0.0, |r| r[s.bar]);
            due.push(Due {
                step,
                leg,
                bar,
                want: s.want,
                inside: s.inside,
                rank,
            });
        }
    }
    // By step, instrument order within one (an instrument's order at the
    // open before its exit inside the bar).
    due.sort_unstable_by_key(|d| (d.step, d.leg, d.inside.is_some()));
    // The cash, proceeds of short sales included: a long may spend it; a
    // short only what is free of it, `cash − 2 · debt`, `debt` the shorts'
    // value at their entries (as vectorbt counts a short: its proceeds and
    // as much again are held).
    let mut cash = rules.initial_cash;
    let mut debt = 0.0;
    let mut from = 0;
    let mut at = 0;
    while at < due.len() {
        let step = due[at].step;
        let mut until = at;
        while until < due.len() && due[until].step == step {
            until += 1;
        }
        ledger.steps(from, step, cash, held, schedule);
        from = step;
        let orders = &mut due[at..until];
        // At the open: the orders at the open, then the exits inside the
        // bar. At the close: the exits inside the bar, then the orders at
        // the close.
        let phases = match rules.at_close {
            false => [Phase::Exits, Phase::Entries, Phase::Inside],
            true => [Phase::Inside, Phase::Exits, Phase::Entries],
        };
        // The bar a fill is priced at: its open, or its close.
        let price = |d: &Due| match rules.at_close {
            false => legs[d.leg].bars.open[d.bar],
            true => legs[d.leg].bars.close[d.bar],
        };
        // Equity sizing's value: at the close before the open's orders, or
        // at this close before its orders (after the bar's stops).
        let mut value = cash;
        for phase in phases {
            match phase {
                Phase::Exits => {
                    value = match (rules.size_of, rules.at_close, step) {
                        (SizeOf::Cash, ..) => cash,
                        (SizeOf::Equity, true, _) => schedule.value(cash, held, step),
                        (SizeOf::Equity, false, 1..) => schedule.value(cash, held, step - 1),
                        (SizeOf::Equity, false, 0) => cash,
                    };
                    // Positions whose side is no longer wanted, the largest
                    // first (a stable sort: ties in instrument order).
                    let worth = |d: &Due| (holdings[d.leg].units * price(d)).abs();
                    orders.sort_by(|a, b| worth(b).total_cmp(&worth(a)));
                    let mut closed_short = false;
                    for d in orders.iter().filter(|d| d.inside.is_none()) {
                        let (leg, h) = (&legs[d.leg], &mut holdings[d.leg]);
                        if !d.want.ends(h.side) {
                            continue;
                        }
                        let reason = match d.want.opens() {
                            0 => ExitReason::Rule,
                            _ => ExitReason::Reversal,
                        };
                        let out = exit(&leg.costs, h, price(d), d.bar, reason);
                        cash += out.cash_in;
                        if let Some(trade) = out.trade {
                            ledger.trade(d.leg, &trade, entered_at[d.leg], Some(step));
                        }
                        closed_short |= h.side < 0;
                        *h = Holding::FLAT;
                        held.retain(|&(i, _)| i != d.leg);
                    }
                    if closed_short {
                        debt = debt_of(held, holdings);
                    }
                }
                Phase::Entries => {
                    // By rank: highest first, undefined last, ties in
                    // instrument order.
                    orders.sort_by(|a, b| {
                        match (a.rank.is_nan(), b.rank.is_nan()) {
                            (false, false) => b.rank.total_cmp(&a.rank),
                            (x, y) => x.cmp(&y),
                        }
                        .then(a.leg.cmp(&b.leg))
                    });
                    for d in orders.iter().filter(|d| d.inside.is_none()) {
                        let (leg, h) = (&legs[d.leg], &mut holdings[d.leg]);
                        let side = d.want.opens();
                        if side == 0 || h.side != 0 {
                            continue;
                        }
                        if rules.max_positions.is_some_and(|m| held.len() >= m) {
                            continue;
                        }
                        // What an entry may spend, as vectorbt counts it
                        // with shared cash: a long the cash (short sales'
                        // proceeds included), a short the cash free of
                        // twice the shorts' value.
                        let free = match side {
                            1 => cash,
                            _ => cash - 2.0 * debt,
                        };
                        let base = match rules.size_of {
                            SizeOf::Cash => free,
                            SizeOf::Equity => value,
                        };
                        // What the entry commits, fee included, at most
                        // what it may spend.
                        let mut commit = (rules.size * base).min(free);
                        if let Some(max) = rules.max_exposure {
                            // The room left under the cap, in notional;
                            // notional x fits when exposed + x ≤ max ·
                            // (value − x · fee): the fee paid lowers the
                            // value. Positions at their last closes.
                            let marked = match rules.at_close {
                                false => step.saturating_sub(1),
                                true => step,
                            };
                            let value = schedule.value(cash, held, marked);
                            let exposed: f64 = held
                                .iter()
                                .map(|&(i, units)| (units * schedule.marks(i)[marked]).abs())
                                .sum();
                            let fee = leg.costs.fee;
                            let room = (max * value - exposed) / (1.0 + max * fee);
                            commit = commit.min(room * (1.0 + fee));
                        }
                        // Fewer units than vectorbt's smallest order (a
                        // rounding scrap of cash) open nothing.
                        let entered = enter(&leg.costs, side, price(d), d.bar, 1.0, commit)
                            .filter(|e| e.holding.units >= MIN_UNITS);
                        if let Some(e) = entered {
                            cash -= e.cash_out;
                            *h = e.holding;
                            entered_at[d.leg] = step;
                            let place = held.partition_point(|&(i, _)| i < d.leg);
                            held.insert(place, (d.leg, h.signed_units()));
                            if side < 0 {
                                debt = debt_of(held, holdings);
                            }
                        }
                    }
                }
                Phase::Inside => {
                    // Stops and targets touched, in instrument order.
                    orders.sort_by_key(|d| d.leg);
                    let mut closed_short = false;
                    for d in orders.iter() {
                        let (leg, h) = (&legs[d.leg], &mut holdings[d.leg]);
                        let Some((price, reason)) = d.inside else {
                            continue;
                        };
                        if h.side == 0 {
                            continue;
                        }
                        let out = exit(&leg.costs, h, price, d.bar, reason);
                        cash += out.cash_in;
                        if let Some(trade) = out.trade {
                            ledger.trade(d.leg, &trade, entered_at[d.leg], Some(step));
                        }
                        closed_short |= h.side < 0;
                        *h = Holding::FLAT;
                        held.retain(|&(i, _)| i != d.leg);
                    }
                    if closed_short {
                        debt = debt_of(held, holdings);
                    }
                }
            }
        }
        at = until;
    }
    ledger.steps(from, end, cash, held, schedule);
    // Trades still open at the end, in instrument order, marked at their
    // instrument's last close.
    if let Some(last) = end.checked_sub(1) {
        for &(i, _) in held.iter() {
            if let Some(mut trade) = holdings[i].trade {
                trade.mark(schedule.marks(i)[last]);
                ledger.trade(i, &trade, entered_at[i], None);
            }
        }
    }
}

/// A step's kinds of fills, in the order they run.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Exits at the open (or close) of the bar.
    Exits,
    /// Entries there.
    Entries,
    /// Exits inside the bar (stops and targets).
    Inside,
}

/// The shorts' value at their entries (with slippage), in instrument
/// order.
fn debt_of(held: &[(usize, f64)], holdings: &[Holding]) -> f64 {
    let mut debt = 0.0;
    for &(i, units) in held {
        if units < 0.0 {
            let entry = holdings[i].trade.map_or(0.0, |t| t.entry_price);
            debt += -units * entry;
        }
    }
    debt
}

impl Ledger for PortfolioRun {
    fn steps(&mut self, from: usize, to: usize, cash: f64, held: &[(usize, f64)], on: &Schedule) {
        for t in from..to {
            let value = on.value(cash, held, t);
            let mut gross = 0.0;
            for &(i, units) in held {
                gross += (units * on.marks(i)[t]).abs();
            }
            self.equity.push(value);
            self.positions.push(held.len() as u32);
            self.exposure.push(gross / value);
        }
    }
    fn trade(&mut self, leg: usize, trade: &Trade, _: usize, _: Option<usize>) {
        self.trades.push((leg, *trade));
    }
}

/// Runs `legs` from one account under `rules`, keeping everything.
pub fn run_portfolio(legs: &[Leg<'_>], rules: &PortfolioRules) -> PortfolioRun {
    let bars: Vec<&Bars> = legs.iter().map(|l| l.bars).collect();
    let schedule = Schedule::new(&bars);
    let mut run = PortfolioRun {
        time: schedule.time.clone(),
        equity: Vec::new(),
        positions: Vec::new(),
        exposure: Vec::new(),
        trades: Vec::new(),
    };
    let mut scratch = PortfolioScratch::default();
    simulate_portfolio(
        legs,
        rules,
        &schedule,
        schedule.len(),
        &mut scratch,
        &mut run,
    );
    run
}

/// A [`Ledger`] that streams a portfolio to an engine [`Sink`] on the
/// schedule's steps: each step a bar (its position 1 while anything is
/// open), each trade with its bars turned into steps. The vector is room
/// for a stretch's equity.
pub struct OnSteps<'s, S: ?Sized>(pub &'s mut S, pub &'s mut Vec<f64>);

impl<S: Sink + ?Sized> Ledger for OnSteps<'_, S> {
    #[inline]
    fn steps(&mut self, from: usize, to: usize, cash: f64, held: &[(usize, f64)], on: &Schedule) {
        match held {
            [] => self.0.flat(from, to, cash),
            // cash + units · mark, as [`Schedule::value`] sums it.
            &[(i, units)] => self.0.held(from, to, cash, units, on.marks(i), 1),
            _ => {
                // Instrument by instrument over the stretch (vector code),
                // each step summed as [`Schedule::value`] sums it.
                let equity = &mut *self.1;
                equity.clear();
                equity.resize(to - from, cash);
                for &(i, units) in held {
                    for (e, m) in equity.iter_mut().zip(&on.marks(i)[from..to]) {
                        *e += units * m;
                    }
                }
                self.0.equities(from, equity, 1);
            }
        }
    }
    fn trade(&mut self, leg: usize, trade: &Trade, entry_step: usize, exit_step: Option<usize>) {
        let on_steps = Trade {
            entry_bar: entry_step,
            exit_bar: exit_step,
            ..*trade
        };
        self.0.instrument_trade(leg, &on_steps);
    }
}

/// The smallest order filled, in units (vectorbt's `min_size`).
pub(super) const MIN_UNITS: f64 = 1e-8;

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::engine::Side;

    /// Bars of these times, opens and closes (high and low their max and
    /// min).
    pub(in crate::engine) fn bars(time: &[i64], open: &[f64], close: &[f64]) -> Bars {
        Bars {
            time: time.to_vec(),
            open: open.to_vec(),
            high: open.iter().zip(close).map(|(o, c)| o.max(*c)).collect(),
            low: open.iter().zip(close).map(|(o, c)| o.min(*c)).collect(),
            close: close.to_vec(),
            volume: None,
            timezone: None,
            extra: Vec::new(),
            unread: Vec::new(),
            detail: None,
            frames: None,
        }
    }

    pub(in crate::engine) const FREE: Costs = Costs {
        fee: 0.0,
        slippage: 0.0,
        lot_size: 0.0,
    };

    /// The signals of flags per bar.
    fn flags(entries: &[bool], exits: &[bool]) -> Vec<Signal> {
        let mut out = Vec::new();
        signals_of_flags(entries, exits, &[], &[], &mut out);
        out
    }

    fn close_to(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Three instruments wanting in on one bar at half the cash each
    /// commit 500, 250 and 125 of 1,000, in instrument order.
    #[test]
    fn each_entry_takes_its_fraction_of_the_cash_left() {
        let b = bars(&[1, 2, 3], &[10.0, 10.0, 10.0], &[10.0, 10.0, 10.0]);
        let signals = flags(&[true, false, false], &[false; 3]);
        let leg = Leg {
            bars: &b,
            signals: &signals,
            rank: None,
            costs: FREE,
        };
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 0.5,
            size_of: SizeOf::Cash,
            max_positions: None,
            max_exposure: None,
            at_close: false,
        };
        let run = run_portfolio(&[leg, leg, leg], &rules);
        let units: Vec<f64> = run.trades.iter().map(|(_, t)| t.units).collect();
        assert_eq!(units, vec![50.0, 25.0, 12.5]);
        assert_eq!(run.positions, vec![0, 3, 3]);
        assert_eq!(run.equity, vec![1000.0; 3]);
        // 875 of 1,000 held once the three are in.
        assert_eq!(run.exposure, vec![0.0, 0.875, 0.875]);
    }

    /// By hand: three instruments over 6 times, a missing bar, a rank
    /// tie, an entry and an exit that cancel, and a position limit of 2.
    /// A has bars at times 1–6, B at 1, 2, 4, 5, 6 (none at 3), C at 2–6.
    /// Fee 1 %, no slippage, cash 1,000, each entry 0.6 of the cash.
    /// * Time 2: A and B, entered on time 1's close with equal ranks, fill
    ///   in instrument order: A commits 600 at 10, B 0.6 · 400 = 240 at 20.
    /// * Time 3: C (decided at 2, rank 5) finds two positions open: skipped.
    ///   B has no bar and is valued at its last close.
    /// * Time 4: A exits at 12 (decided at 3); then C (decided at 3) enters
    ///   at 6 with 0.6 of the cash A's exit left. B's entry and exit at
    ///   time 2 cancelled: it holds.
    #[test]
    fn a_small_portfolio_by_hand() {
        let a = bars(
            &[1, 2, 3, 4, 5, 6],
            &[10.0, 10.0, 11.0, 12.0, 13.0, 14.0],
            &[10.0, 10.5, 11.5, 12.5, 13.5, 14.5],
        );
        let b = bars(
            &[1, 2, 4, 5, 6],
            &[20.0, 20.0, 22.0, 23.0, 24.0],
            &[20.0, 21.0, 22.5, 23.5, 24.5],
        );
        let c = bars(
            &[2, 3, 4, 5, 6],
            &[5.0, 5.0, 6.0, 7.0, 8.0],
            &[5.0, 5.5, 6.5, 7.5, 8.5],
        );
        let costs = Costs { fee: 0.01, ..FREE };
        let (ae, ax) = (
            [true, false, false, false, false, false],
            [false, false, true, false, false, false],
        );
        let (be, bx) = (
            [true, true, false, false, false],
            [false, true, false, false, false],
        );
        let (ce, cx) = ([true, true, false, false, false], [false; 5]);
        let ranks_a = [1.0; 6];
        let ranks_b = [1.0; 5];
        let ranks_c = [5.0, 0.0, 0.0, 0.0, 0.0];
        let legs = [
            Leg {
                bars: &a,
                signals: &flags(&ae, &ax),
                rank: Some(&ranks_a),
                costs,
            },
            Leg {
                bars: &b,
                signals: &flags(&be, &bx),
                rank: Some(&ranks_b),
                costs,
            },
            Leg {
                bars: &c,
                signals: &flags(&ce, &cx),
                rank: Some(&ranks_c),
                costs,
            },
        ];
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 0.6,
            size_of: SizeOf::Cash,
            max_positions: Some(2),
            max_exposure: None,
            at_close: false,
        };
        let run = run_portfolio(&legs, &rules);
        // Time 2: A then B (tie: instrument order).
        let ua = 600.0 / (10.0 * 1.01);
        let ub = 240.0 / (20.0 * 1.01);
        let cash2 = 1000.0 - 600.0 - 240.0;
        assert!(close_to(run.equity[1], cash2 + ua * 10.5 + ub * 21.0));
        // Time 3: C skipped (two open); B has no bar and is valued at 21.
        assert_eq!(run.positions[2], 2);
        assert!(close_to(run.equity[2], cash2 + ua * 11.5 + ub * 21.0));
        // Time 4: A out at 12 less the fee, then C in with 0.6 of the cash.
        let cash4 = cash2 + ua * 12.0 * 0.99;
        let uc = 0.6 * cash4 / (6.0 * 1.01);
        let cash4 = cash4 - 0.6 * cash4;
        assert!(
            close_to(run.equity[3], cash4 + ub * 22.5 + uc * 6.5),
            "{:?}",
            run.equity
        );
        assert_eq!(run.positions[3], 2);
        // The trades: A closed; then B and C still open, in instrument order.
        let summary: Vec<(usize, usize, Option<usize>)> = run
            .trades
            .iter()
            .map(|(i, t)| (*i, t.entry_bar, t.exit_bar))
            .collect();
        assert_eq!(summary, vec![(0, 1, Some(3)), (1, 1, None), (2, 2, None)]);
        assert!(close_to(run.trades[0].1.units, ua));
        assert!(close_to(run.trades[2].1.units, uc));
    }

    /// By hand: a cap of 0.5 on the exposure, a 1 % fee. A and B both
    /// want all of the equity at time 2. A fits notional x where x =
    /// 0.5 · (1,000 − 0.01 x), x = 500 / 1.005 (at 10, the fee on top);
    /// B then finds no room. B's entry at time 4 (decided at 3) finds
    /// none either: A is worth more by then.
    #[test]
    fn entries_fit_under_the_exposure_cap() {
        let a = bars(
            &[1, 2, 3, 4],
            &[10.0, 10.0, 12.0, 12.0],
            &[10.0, 10.0, 12.0, 12.0],
        );
        let b = bars(&[1, 2, 3, 4], &[20.0; 4], &[20.0; 4]);
        let costs = Costs { fee: 0.01, ..FREE };
        let (sa, sb) = (
            flags(&[true, false, false, false], &[false; 4]),
            flags(&[true, false, true, false], &[false; 4]),
        );
        let legs = [
            Leg {
                bars: &a,
                signals: &sa,
                rank: None,
                costs,
            },
            Leg {
                bars: &b,
                signals: &sb,
                rank: None,
                costs,
            },
        ];
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 1.0,
            size_of: SizeOf::Equity,
            max_positions: None,
            max_exposure: Some(0.5),
            at_close: false,
        };
        let run = run_portfolio(&legs, &rules);
        let x = 500.0 / 1.005;
        assert_eq!(run.trades.len(), 1, "{:?}", run.trades);
        assert_eq!(run.trades[0].0, 0);
        assert!(close_to(run.trades[0].1.units, x / 10.0));
        // At the entry's price, after its fee: half the portfolio.
        assert!(close_to(run.exposure[1], 0.5));
        assert!(close_to(run.equity[1], 1000.0 - 0.01 * x));
    }

    /// By hand, a long and a short from one account (fee 1 %, half the
    /// free cash each). A short's proceeds come into the cash, and it
    /// holds as much again: the cash free is `cash − 2 · debt`.
    /// * Time 2: A long at 10 commits 500; B short at 20 then commits half
    ///   of the 500 free: its proceeds less the fee come in.
    /// * Time 3: B covers at 18 (its buy-back and fee go out).
    /// * Time 4: A reverses at 12: sold, then short half the cash.
    #[test]
    fn shorts_share_the_cash_by_hand() {
        let a = bars(
            &[1, 2, 3, 4],
            &[10.0, 10.0, 11.0, 12.0],
            &[10.0, 10.5, 11.5, 12.5],
        );
        let b = bars(
            &[1, 2, 3, 4],
            &[20.0, 20.0, 18.0, 16.0],
            &[20.0, 19.0, 17.0, 15.0],
        );
        let costs = Costs { fee: 0.01, ..FREE };
        let at = Signal::new;
        let sa = [at(0, Want::Long), at(2, Want::Short)];
        let sb = [at(0, Want::Short), at(1, Want::Flat)];
        let legs = [
            Leg {
                bars: &a,
                signals: &sa,
                rank: None,
                costs,
            },
            Leg {
                bars: &b,
                signals: &sb,
                rank: None,
                costs,
            },
        ];
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 0.5,
            size_of: SizeOf::Cash,
            max_positions: None,
            max_exposure: None,
            at_close: false,
        };
        let run = run_portfolio(&legs, &rules);
        // Time 2.
        let ua = 500.0 / (10.0 * 1.01);
        let mut cash = 500.0;
        let ub = 250.0 / (20.0 * 1.01);
        cash += ub * 20.0 - ub * 20.0 * 0.01;
        assert!(close_to(cash - 2.0 * ub * 20.0, 250.0));
        assert!(close_to(run.equity[1], cash + ua * 10.5 - ub * 19.0));
        // Time 3.
        cash -= ub * 18.0 * 1.01;
        assert!(close_to(run.equity[2], cash + ua * 11.5));
        // Time 4: out of A at 12, then short A with half the cash.
        cash += ua * 12.0 * 0.99;
        let us = 0.5 * cash / (12.0 * 1.01);
        cash += us * 12.0 * 0.99;
        assert!(
            close_to(run.equity[3], cash - us * 12.5),
            "{:?}",
            run.equity
        );
        let summary: Vec<(usize, Side, Option<usize>, ExitReason)> = run
            .trades
            .iter()
            .map(|(i, t)| (*i, t.side, t.exit_bar, t.exit_reason))
            .collect();
        assert_eq!(
            summary,
            vec![
                (1, Side::Short, Some(2), ExitReason::Rule),
                (0, Side::Long, Some(3), ExitReason::Reversal),
                (0, Side::Short, None, ExitReason::End),
            ]
        );
        // B's profit: sold at 20, bought back at 18, both fees paid.
        let pnl = ub * 20.0 * 0.99 - ub * 18.0 * 1.01;
        assert!(close_to(run.trades[0].1.pnl, pnl));
        assert!(close_to(run.trades[2].1.units, us));
    }

    /// An exit inside a bar (a stop) fills after the bar's open: its cash
    /// is not there for an entry at that open. All of the cash in A at
    /// time 2; at time 3 B enters at the open with nothing free (skipped)
    /// and A is stopped inside the bar at 9.
    #[test]
    fn exits_inside_a_bar_come_after_its_open() {
        let a = bars(
            &[1, 2, 3, 4],
            &[10.0, 10.0, 10.0, 10.0],
            &[10.0, 10.0, 9.5, 9.0],
        );
        let b = bars(&[1, 2, 3, 4], &[20.0; 4], &[20.0; 4]);
        let stop = Signal {
            bar: 1,
            want: Want::Flat,
            inside: Some((9.0, ExitReason::StopLoss)),
        };
        let sa = [Signal::new(0, Want::Long), stop];
        let sb = [Signal::new(1, Want::Long), Signal::new(2, Want::Flat)];
        let legs = [
            Leg {
                bars: &a,
                signals: &sa,
                rank: None,
                costs: FREE,
            },
            Leg {
                bars: &b,
                signals: &sb,
                rank: None,
                costs: FREE,
            },
        ];
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 1.0,
            size_of: SizeOf::Cash,
            max_positions: None,
            max_exposure: None,
            at_close: false,
        };
        let run = run_portfolio(&legs, &rules);
        // Only A traded: in at 10, out at 9 inside the third bar.
        assert_eq!(run.trades.len(), 1, "{:?}", run.trades);
        let (i, t) = run.trades[0];
        assert_eq!(
            (i, t.exit_bar, t.exit_reason),
            (0, Some(2), ExitReason::StopLoss)
        );
        assert_eq!(t.exit_price, 9.0);
        assert_eq!(run.equity, vec![1000.0, 1000.0, 900.0, 900.0]);
        assert_eq!(run.positions, vec![0, 1, 0, 0]);
    }

    /// By hand, 3 instruments over 10 times: a cash shortfall, a rank tie
    /// and a missing bar, sized by equity (0.6), no costs. B has no bar at
    /// time 5.
    /// * Time 2: A and B (decided at 1, equal ranks) in instrument order:
    ///   A 0.6 · 1,000 = 600 at 10 (60 units); B wants 600 too, finds 400:
    ///   20 units at 20.
    /// * Time 3: C (rank 9) finds no cash: skipped.
    /// * Time 4: B closes at 30. Time 5: A out at 12 (720 in); B, with no
    ///   bar, is worth its last close, 30: the value is 1,320.
    /// * Time 6: C wants 0.6 · 1,320 = 792, finds 720: 144 units at 5.
    #[test]
    fn ten_bars_of_three_by_hand() {
        let times: Vec<i64> = (1..=10).collect();
        let a_open = [10.0, 10.0, 10.0, 10.0, 12.0, 12.0, 12.0, 12.0, 12.0, 12.0];
        let a_close = [10.0, 10.0, 10.0, 10.0, 12.0, 12.0, 12.0, 12.0, 12.0, 12.0];
        let a = bars(&times, &a_open, &a_close);
        let b_times = [1, 2, 3, 4, 6, 7, 8, 9, 10];
        let b_open = [20.0, 20.0, 20.0, 20.0, 30.0, 30.0, 30.0, 30.0, 30.0];
        let b_close = [20.0, 20.0, 20.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0];
        let b = bars(&b_times, &b_open, &b_close);
        let c = bars(&times, &[5.0; 10], &[5.0; 10]);
        let sa = [Signal::new(0, Want::Long), Signal::new(3, Want::Flat)];
        let sb = [Signal::new(0, Want::Long)];
        // C's second entry is decided at time 5 (its bar 4).
        let sc = [Signal::new(1, Want::Long), Signal::new(4, Want::Long)];
        let (ra, rb, rc) = ([1.0; 10], [1.0; 9], [9.0; 10]);
        let legs = [
            Leg {
                bars: &a,
                signals: &sa,
                rank: Some(&ra),
                costs: FREE,
            },
            Leg {
                bars: &b,
                signals: &sb,
                rank: Some(&rb),
                costs: FREE,
            },
            Leg {
                bars: &c,
                signals: &sc,
                rank: Some(&rc),
                costs: FREE,
            },
        ];
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 0.6,
            size_of: SizeOf::Equity,
            max_positions: None,
            max_exposure: None,
            at_close: false,
        };
        let run = run_portfolio(&legs, &rules);
        let want = [
            1000.0, 1000.0, 1000.0, 1200.0, 1320.0, 1320.0, 1320.0, 1320.0, 1320.0, 1320.0,
        ];
        for (t, (got, want)) in run.equity.iter().zip(want).enumerate() {
            assert!(close_to(*got, want), "time {}: {got} vs {want}", t + 1);
        }
        assert_eq!(run.positions, vec![0, 2, 2, 2, 1, 2, 2, 2, 2, 2]);
        let summary: Vec<(usize, usize, Option<usize>, f64)> = run
            .trades
            .iter()
            .map(|(i, t)| (*i, t.entry_bar, t.exit_bar, t.units))
            .collect();
        assert_eq!(summary.len(), 3);
        assert_eq!((summary[0].0, summary[0].1, summary[0].2), (0, 1, Some(4)));
        assert!(close_to(summary[0].3, 60.0));
        assert_eq!((summary[1].0, summary[1].1, summary[1].2), (1, 1, None));
        assert!(close_to(summary[1].3, 20.0));
        assert_eq!((summary[2].0, summary[2].1, summary[2].2), (2, 5, None));
        assert!(close_to(summary[2].3, 144.0));
    }
}
