//! Several instruments trading from one account (issue 48, its first
//! slice: long signal portfolios). Entries draw on one cash balance and
//! exits return to it, on one [`Clock`] over the union of the instruments'
//! times; each instrument decides on its own bars and fills at its own
//! next open, with its own costs.
//!
//! The order of a bar's fills follows vectorbt's `from_signals` with
//! `cash_sharing=True, call_seq="auto"`, so that a portfolio ported from it
//! reproduces: exits first (the largest position first), then entries, each
//! against the cash the fills before it left. Entries are ranked by
//! `rank` (highest first, undefined last, ties in instrument order); an
//! entry past `max_positions`, or with no cash left, is skipped, not
//! queued.

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
}

/// One instrument of a portfolio: its bars, its signals (decided at each
/// bar's close; an entry and an exit on the same bar cancel) and costs.
#[derive(Debug, Clone, Copy)]
pub struct Leg<'a> {
    pub bars: &'a Bars,
    pub entries: &'a [bool],
    pub exits: &'a [bool],
    /// Orders entries wanting the same bar, highest first; `None`: equal.
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

/// The union of several instruments' times, walked once and kept: at each
/// step the `(instrument, bar)` pairs that have a bar then, in instrument
/// order. A study's portfolio runs every combination on one schedule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schedule {
    pub time: Vec<i64>,
    /// Where each step's pairs start in `at` (one more entry than steps).
    starts: Vec<u32>,
    at: Vec<(u32, u32)>,
}

impl Schedule {
    /// The schedule of these instruments' times (each strictly ascending).
    pub fn new(times: Vec<&[i64]>) -> Schedule {
        let mut clock = Clock::new(times);
        let mut s = Schedule {
            starts: vec![0],
            ..Schedule::default()
        };
        let mut now = Vec::new();
        while let Some(t) = clock.advance(&mut now) {
            s.time.push(t);
            s.at.extend(now.iter().map(|&(i, k)| (i as u32, k as u32)));
            s.starts.push(s.at.len() as u32);
        }
        s
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Step `t`'s `(instrument, bar)` pairs.
    #[inline]
    pub fn at(&self, t: usize) -> &[(u32, u32)] {
        &self.at[self.starts[t] as usize..self.starts[t + 1] as usize]
    }

    /// Instrument `leg`'s bar at step `t`, if it has one then.
    pub fn bar_of(&self, t: usize, leg: usize) -> Option<usize> {
        self.at(t)
            .iter()
            .find(|&&(i, _)| i as usize == leg)
            .map(|&(_, k)| k as usize)
    }

    /// How many of instrument `leg`'s bars fall in the first `end` steps.
    pub fn bars_until(&self, leg: usize, end: usize) -> usize {
        (0..end.min(self.len()))
            .rev()
            .find_map(|t| self.bar_of(t, leg).map(|k| k + 1))
            .unwrap_or(0)
    }
}

/// What a portfolio's run reports as it goes: each step's value, open
/// positions and gross exposure, and each trade with its instrument (bars
/// in the instrument's own bars; the steps of its entry and exit fills).
pub trait Ledger {
    fn step(&mut self, t: usize, equity: f64, open: u32, gross: f64);
    fn trade(&mut self, leg: usize, trade: &Trade, entry_step: usize, exit_step: Option<usize>);
}

/// Runs `legs` from one account under `rules` over the first `end` steps
/// of `schedule` (the schedule of the legs' times), reporting to `ledger`.
/// A leg's signals must cover its bars in those steps.
pub fn simulate_portfolio<L: Ledger + ?Sized>(
    legs: &[Leg<'_>],
    rules: &PortfolioRules,
    schedule: &Schedule,
    end: usize,
    ledger: &mut L,
) {
    let n = legs.len();
    let mut held = vec![Holding::FLAT; n];
    // The step of each open position's entry.
    let mut entered_at = vec![0usize; n];
    // Each instrument's last close (its value while it has no bar).
    let mut last_close = vec![0.0; n];
    let mut cash = rules.initial_cash;
    let mut value = cash;
    let mut open = 0usize;
    let (mut exits, mut entries) = (Vec::new(), Vec::new());
    for t in 0..end.min(schedule.len()) {
        let now = schedule.at(t);
        // The orders due at this step: each instrument's signals of its
        // bar before, filled at this bar's open.
        exits.clear();
        entries.clear();
        for &(i, k) in now {
            let (i, k) = (i as usize, k as usize);
            let Some(d) = k.checked_sub(1) else { continue };
            let leg = &legs[i];
            let (entry, exit) = (leg.entries[d], leg.exits[d]);
            if exit && !entry && held[i].side != 0 {
                exits.push((i, k));
            } else if entry && !exit && held[i].side == 0 {
                let rank = leg.rank.map_or(0.0, |r| r[d]);
                entries.push((i, k, rank));
            }
        }
        if !exits.is_empty() {
            // The largest position first, as vectorbt orders its sells.
            let worth = |&(i, k): &(usize, usize)| held[i].units * legs[i].bars.open[k];
            exits.sort_by(|a, b| worth(b).total_cmp(&worth(a)));
            for &(i, k) in &exits {
                let out = exit(
                    &legs[i].costs,
                    &held[i],
                    legs[i].bars.open[k],
                    k,
                    ExitReason::Rule,
                );
                cash += out.cash_in;
                if let Some(trade) = out.trade {
                    ledger.trade(i, &trade, entered_at[i], Some(t));
                }
                held[i] = Holding::FLAT;
                open -= 1;
            }
        }
        if !entries.is_empty() {
            // Highest rank first, undefined last; a stable sort keeps the
            // instruments' order on a tie.
            entries.sort_by(|a, b| match (a.2.is_nan(), b.2.is_nan()) {
                (false, false) => b.2.total_cmp(&a.2),
                (x, y) => x.cmp(&y),
            });
            for &(i, k, _) in &entries {
                if rules.max_positions.is_some_and(|m| open >= m) {
                    continue;
                }
                let base = match rules.size_of {
                    SizeOf::Cash => cash,
                    SizeOf::Equity => value,
                };
                // What the entry commits, fee included, at most the cash free.
                let commit = (rules.size * base).min(cash);
                let leg = &legs[i];
                // Fewer units than vectorbt's smallest order (a rounding
                // scrap of cash) open nothing.
                let entered = enter(&leg.costs, 1, leg.bars.open[k], k, 1.0, commit)
                    .filter(|e| e.holding.units >= MIN_UNITS);
                if let Some(e) = entered {
                    cash -= e.cash_out;
                    held[i] = e.holding;
                    entered_at[i] = t;
                    open += 1;
                }
            }
        }
        for &(i, k) in now {
            last_close[i as usize] = legs[i as usize].bars.close[k as usize];
        }
        // Marked in instrument order, as vectorbt sums its group's value.
        value = cash;
        let mut gross = 0.0;
        if open > 0 {
            for (h, &c) in held.iter().zip(&last_close) {
                if h.side != 0 {
                    value += h.signed_units() * c;
                    gross += (h.signed_units() * c).abs();
                }
            }
        }
        ledger.step(t, value, open as u32, gross);
    }
    // Trades still open at the end, in instrument order, marked at their
    // instrument's last close.
    for (i, h) in held.iter().enumerate() {
        if let Some(mut trade) = h.trade {
            trade.mark(last_close[i]);
            ledger.trade(i, &trade, entered_at[i], None);
        }
    }
}

impl Ledger for PortfolioRun {
    fn step(&mut self, t: usize, equity: f64, open: u32, gross: f64) {
        self.equity.push(equity);
        self.positions.push(open);
        self.exposure.push(gross / equity);
        debug_assert_eq!(self.equity.len(), t + 1);
    }
    fn trade(&mut self, leg: usize, trade: &Trade, _: usize, _: Option<usize>) {
        self.trades.push((leg, *trade));
    }
}

/// Runs `legs` from one account under `rules`, keeping everything.
pub fn run_portfolio(legs: &[Leg<'_>], rules: &PortfolioRules) -> PortfolioRun {
    let schedule = Schedule::new(legs.iter().map(|l| l.bars.time.as_slice()).collect());
    let mut run = PortfolioRun {
        time: schedule.time.clone(),
        equity: Vec::new(),
        positions: Vec::new(),
        exposure: Vec::new(),
        trades: Vec::new(),
    };
    simulate_portfolio(legs, rules, &schedule, schedule.len(), &mut run);
    run
}

/// A [`Ledger`] that streams a portfolio to an engine [`Sink`] on the
/// schedule's steps: each step a bar (its position 1 while anything is
/// open), each trade with its bars turned into steps.
pub struct OnSteps<'s, S: ?Sized>(pub &'s mut S);

impl<S: Sink + ?Sized> Ledger for OnSteps<'_, S> {
    #[inline]
    fn step(&mut self, t: usize, equity: f64, open: u32, _gross: f64) {
        self.0.bar(t, equity, i8::from(open > 0));
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

/// One instrument of a target-weight portfolio: its bars, the weight it
/// wants after each bar's close (NaN: no order; filled at its next open)
/// and its costs.
#[derive(Debug, Clone, Copy)]
pub struct WeightLeg<'a> {
    pub bars: &'a Bars,
    pub weights: &'a [f64],
    pub costs: Costs,
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

/// A target-weight portfolio's run: its value at every time of the union
/// and every order.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsRun {
    pub time: Vec<i64>,
    pub equity: Vec<f64>,
    pub orders: Vec<Order>,
}

/// The smallest order filled, in units (vectorbt's `min_size`).
const MIN_UNITS: f64 = 1e-8;

/// Whether `a` ≤ `b` up to a relative 1e-9 (vectorbt's `is_close_or_less`).
fn close_or_less(a: f64, b: f64) -> bool {
    a <= b || (a - b).abs() <= (1e-9 * a.abs().max(b.abs())).max(1e-12)
}

/// Rebalances `legs` from one account (long only; weights ≥ 0), as
/// vectorbt's `from_orders(size_type="targetpercent", cash_sharing=True,
/// call_seq="auto", price=open, val_price=open or the last close)`: at
/// each time the portfolio's value V is taken at the opens (the last close
/// for an instrument without a bar), each order is `w·V / price − held`
/// units, the orders run from the largest sale to the largest purchase,
/// and a purchase the cash cannot pay is filled as far as it can.
pub fn run_weights(legs: &[WeightLeg<'_>], initial_cash: f64) -> WeightsRun {
    let mut clock = Clock::new(legs.iter().map(|l| l.bars.time.as_slice()).collect());
    let mut units = vec![0.0f64; legs.len()];
    let mut last_close = vec![f64::NAN; legs.len()];
    let mut cash = initial_cash;
    let mut run = WeightsRun {
        time: Vec::new(),
        equity: Vec::new(),
        orders: Vec::new(),
    };
    let (mut now, mut orders) = (Vec::new(), Vec::new());
    let mut price = vec![f64::NAN; legs.len()];
    while let Some(t) = clock.advance(&mut now) {
        // Valuation prices: the open where there is a bar, else the last close.
        price.clone_from(&last_close);
        for &(i, k) in &now {
            price[i] = legs[i].bars.open[k];
        }
        let mut value = cash;
        for (u, p) in units.iter().zip(&price) {
            if *u != 0.0 {
                value += u * p;
            }
        }
        orders.clear();
        for &(i, k) in &now {
            let Some(w) = k.checked_sub(1).map(|d| legs[i].weights[d]) else {
                continue;
            };
            if w.is_nan() {
                continue;
            }
            let p = price[i];
            let wanted = w * value / p - units[i];
            // What vectorbt sorts its orders by: their value.
            orders.push((w * value - units[i] * p, i, k, wanted));
        }
        orders.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(_, i, k, wanted) in &orders {
            let costs = &legs[i].costs;
            let open = legs[i].bars.open[k];
            if wanted > 0.0 {
                let paid = open * (1.0 + costs.slippage);
                let cost = wanted * paid;
                let (u, fee, left) = if close_or_less(cost + cost * costs.fee, cash) {
                    (wanted, cost * costs.fee, cash - (cost + cost * costs.fee))
                } else {
                    // As much as the cash pays, fee included.
                    let spend = cash / (1.0 + costs.fee);
                    (spend / paid, cash - spend, 0.0)
                };
                if u < MIN_UNITS {
                    continue;
                }
                cash = left;
                units[i] += u;
                run.orders.push(Order {
                    instrument: i,
                    bar: k,
                    units: u,
                    price: paid,
                    fee,
                });
            } else if wanted < 0.0 {
                let u = (-wanted).min(units[i]);
                if u < MIN_UNITS {
                    continue;
                }
                let got = open * (1.0 - costs.slippage);
                let fee = u * got * costs.fee;
                cash += u * got - fee;
                units[i] -= u;
                run.orders.push(Order {
                    instrument: i,
                    bar: k,
                    units: -u,
                    price: got,
                    fee,
                });
            }
        }
        for &(i, k) in &now {
            last_close[i] = legs[i].bars.close[k];
        }
        let mut value = cash;
        for (u, c) in units.iter().zip(&last_close) {
            if *u != 0.0 {
                value += u * c;
            }
        }
        run.time.push(t);
        run.equity.push(value);
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(time: &[i64], open: &[f64], close: &[f64]) -> Bars {
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
        }
    }

    const FREE: Costs = Costs {
        fee: 0.0,
        slippage: 0.0,
        lot_size: 0.0,
    };

    fn close_to(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Three instruments wanting in on one bar at half the cash each
    /// commit 500, 250 and 125 of 1,000, in instrument order.
    #[test]
    fn each_entry_takes_its_fraction_of_the_cash_left() {
        let b = bars(&[1, 2, 3], &[10.0, 10.0, 10.0], &[10.0, 10.0, 10.0]);
        let e = [true, false, false];
        let x = [false; 3];
        let leg = Leg {
            bars: &b,
            entries: &e,
            exits: &x,
            rank: None,
            costs: FREE,
        };
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 0.5,
            size_of: SizeOf::Cash,
            max_positions: None,
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
                entries: &ae,
                exits: &ax,
                rank: Some(&ranks_a),
                costs,
            },
            Leg {
                bars: &b,
                entries: &be,
                exits: &bx,
                rank: Some(&ranks_b),
                costs,
            },
            Leg {
                bars: &c,
                entries: &ce,
                exits: &cx,
                rank: Some(&ranks_c),
                costs,
            },
        ];
        let rules = PortfolioRules {
            initial_cash: 1000.0,
            size: 0.6,
            size_of: SizeOf::Cash,
            max_positions: Some(2),
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

    /// By hand, without costs: half and half, then all in B. At time 3 the
    /// value at the opens is 50·12 + 25·20 = 1,100; A's sale (−600) runs
    /// before B's purchase (+600), which the sale pays for exactly.
    #[test]
    fn target_weights_by_hand() {
        let a = bars(&[1, 2, 3], &[10.0, 10.0, 12.0], &[10.0, 11.0, 12.0]);
        let b = bars(&[1, 2, 3], &[20.0, 20.0, 20.0], &[20.0, 20.0, 21.0]);
        let (wa, wb) = ([0.5, 0.0, f64::NAN], [0.5, 1.0, f64::NAN]);
        let legs = [
            WeightLeg {
                bars: &a,
                weights: &wa,
                costs: FREE,
            },
            WeightLeg {
                bars: &b,
                weights: &wb,
                costs: FREE,
            },
        ];
        let run = run_weights(&legs, 1000.0);
        let orders: Vec<(usize, usize, f64, f64)> = run
            .orders
            .iter()
            .map(|o| (o.instrument, o.bar, o.units, o.price))
            .collect();
        assert_eq!(
            orders,
            vec![
                (0, 1, 50.0, 10.0),
                (1, 1, 25.0, 20.0),
                (0, 2, -50.0, 12.0),
                (1, 2, 30.0, 20.0)
            ]
        );
        assert_eq!(
            run.equity,
            vec![1000.0, 50.0 * 11.0 + 25.0 * 20.0, 55.0 * 21.0]
        );
    }
}
