//! Target-weight portfolios (`portfolio.weight`, Python's
//! `backtest_weights`): at each rebalance every instrument is bought or
//! sold to a fraction of the portfolio's value, as vectorbt's
//! `from_orders(size_type="targetpercent", cash_sharing=True,
//! call_seq="auto")` orders it, on the portfolio's [`Schedule`] and
//! streamed to a [`Ledger`] like [`super::simulate_portfolio`].
//!
//! Long only: a weight below 0 sells what is held, as 0 does. An
//! instrument's trade is a round trip: from the order that buys it from
//! nothing to the sale that leaves nothing, every order between adding to
//! it or taking from it.

use super::portfolio::{Ledger, Order, PortfolioRules, Schedule, MIN_UNITS};
use super::{Costs, ExitReason, Side, Trade};
use crate::data::Bars;

/// One instrument of a target-weight portfolio: its bars, the weight it
/// wants after each bar's close (NaN or infinite: no order; filled at its
/// next open, or at that close) and its costs.
#[derive(Debug, Clone, Copy)]
pub struct WeightLeg<'a> {
    pub bars: &'a Bars,
    pub weights: &'a [f64],
    pub costs: Costs,
}

impl<'a> WeightLeg<'a> {
    /// One leg per instrument (its bars and engine settings, in order),
    /// each with its weights.
    pub fn each(
        instruments: impl IntoIterator<Item = (&'a Bars, &'a super::EngineConfig)>,
        weights: &'a [Vec<f64>],
    ) -> Vec<WeightLeg<'a>> {
        instruments
            .into_iter()
            .zip(weights)
            .map(|((bars, engine), weights)| WeightLeg {
                bars,
                weights,
                costs: Costs::of(engine),
            })
            .collect()
    }
}

/// A target-weight portfolio's run: its value at every time of the union,
/// every order and every trade (round trip) with its instrument (bars in
/// the instrument's own bars).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WeightsRun {
    pub time: Vec<i64>,
    pub equity: Vec<f64>,
    pub orders: Vec<Order>,
    pub trades: Vec<(usize, Trade)>,
    /// Positions open, and their value at the close over the portfolio's,
    /// at every time.
    pub positions: Vec<u32>,
    pub exposure: Vec<f64>,
}

impl Ledger for WeightsRun {
    fn steps(&mut self, from: usize, to: usize, cash: f64, held: &[(usize, f64)], on: &Schedule) {
        for t in from..to {
            let value = on.value(cash, held, t);
            let gross: f64 = held.iter().map(|&(i, u)| (u * on.marks(i)[t]).abs()).sum();
            self.equity.push(value);
            self.positions.push(held.len() as u32);
            self.exposure.push(gross / value);
        }
    }
    fn trade(&mut self, leg: usize, trade: &Trade, _: usize, _: Option<usize>) {
        self.trades.push((leg, *trade));
    }
    fn order(&mut self, order: &Order) {
        self.orders.push(*order);
    }
}

/// Whether `a` ≤ `b` up to a relative 1e-9 (vectorbt's `is_close_or_less`).
fn close_or_less(a: f64, b: f64) -> bool {
    a <= b || (a - b).abs() <= (1e-9 * a.abs().max(b.abs())).max(1e-12)
}

/// An instrument's open round trip.
#[derive(Debug, Clone, Copy, Default)]
struct Round {
    entry_step: usize,
    entry_bar: usize,
    bought_units: f64,
    bought_value: f64,
    buy_fees: f64,
    sold_units: f64,
    sold_value: f64,
    fees: f64,
}

impl Round {
    /// The trade, its remaining `units` valued at `price` (an exit, or the
    /// last close at the end).
    fn trade(&self, units: f64, price: f64, exit_bar: Option<usize>) -> Trade {
        let got = self.sold_value + units * price;
        let pnl = got - self.bought_value - self.fees;
        Trade {
            side: Side::Long,
            entry_bar: self.entry_bar,
            entry_price: self.bought_value / self.bought_units,
            exit_bar,
            exit_price: got / (self.sold_units + units),
            units: self.bought_units,
            fees: self.fees,
            pnl,
            ret: pnl / (self.bought_value + self.buy_fees),
            exit_reason: match exit_bar {
                Some(_) => ExitReason::Rule,
                None => ExitReason::End,
            },
            entry_reason: super::EntryReason::Signal,
        }
    }
}

/// What [`simulate_weights`] reuses from one run to the next.
#[derive(Debug, Default)]
pub struct WeightsScratch {
    /// (step, instrument, bar, weight) of every order due.
    due: Vec<(usize, usize, usize, f64)>,
    /// A step's orders: (value, instrument, bar, units wanted).
    orders: Vec<(f64, usize, usize, f64)>,
    units: Vec<f64>,
    held: Vec<(usize, f64)>,
    rounds: Vec<Round>,
}

/// Rebalances `legs` from one account over the first `end` steps of
/// `schedule` (the schedule of the legs' bars), reporting to `ledger`.
/// Of `rules`, only the initial cash, `max_exposure` and `at_close` apply.
///
/// At each step with orders the portfolio's value V is taken at the
/// fills' prices: the open of each instrument with a bar then (its close,
/// `at_close`), else its last close. Each order is `w·V / price − held`
/// units; the orders run from the largest sale to the largest purchase
/// (ties in instrument order), and a purchase the cash cannot pay is
/// filled as far as it can. With `max_exposure`, a step's weights whose
/// sum with the positions not rebalanced then passes it are scaled down to
/// fit.
pub fn simulate_weights<L: Ledger + ?Sized>(
    legs: &[WeightLeg<'_>],
    rules: &PortfolioRules,
    schedule: &Schedule,
    end: usize,
    scratch: &mut WeightsScratch,
    ledger: &mut L,
) {
    let end = end.min(schedule.len());
    let WeightsScratch {
        due,
        orders,
        units,
        held,
        rounds,
    } = scratch;
    due.clear();
    held.clear();
    units.clear();
    units.resize(legs.len(), 0.0);
    rounds.clear();
    rounds.resize(legs.len(), Round::default());
    for (leg, l) in legs.iter().enumerate() {
        for (k, &w) in l.weights.iter().enumerate() {
            // Undefined or infinite: no order.
            if !w.is_finite() {
                continue;
            }
            let bar = k + usize::from(!rules.at_close);
            if bar >= l.bars.len() {
                break;
            }
            let step = schedule.step_of(leg, bar);
            if step >= end {
                break;
            }
            due.push((step, leg, bar, w));
        }
    }
    // One order per instrument and step: by step, then instrument.
    due.sort_unstable_by_key(|d| (d.0, d.1));
    // The price an instrument is valued and filled at on `step`.
    let price_at = |i: usize, step: usize| match (rules.at_close, schedule.bar_of(step, i)) {
        (false, Some(k)) => legs[i].bars.open[k],
        _ => schedule.marks(i)[step],
    };
    let mut cash = rules.initial_cash;
    let mut from = 0;
    let mut at = 0;
    while at < due.len() {
        let step = due[at].0;
        let mut until = at;
        while until < due.len() && due[until].0 == step {
            until += 1;
        }
        ledger.steps(from, step, cash, held, schedule);
        from = step;
        let group = &due[at..until];
        at = until;
        let mut value = cash;
        for &(i, u) in held.iter() {
            value += u * price_at(i, step);
        }
        // The cap: the positions not rebalanced now keep their share.
        let mut scale = 1.0;
        if let Some(max) = rules.max_exposure {
            let wanted: f64 = group.iter().map(|d| d.3.max(0.0)).sum();
            let kept: f64 = held
                .iter()
                .filter(|(i, _)| group.binary_search_by_key(i, |d| d.1).is_err())
                .map(|&(i, u)| (u * price_at(i, step)).abs())
                .sum::<f64>()
                / value;
            if wanted > 0.0 && wanted + kept > max {
                scale = (max - kept).max(0.0) / wanted;
            }
        }
        orders.clear();
        for &(_, i, k, w) in group {
            let w = w * scale;
            let p = price_at(i, step);
            let wanted = w * value / p - units[i];
            // What vectorbt sorts its orders by: their value.
            orders.push((w * value - units[i] * p, i, k, wanted));
        }
        orders.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(_, i, k, wanted) in orders.iter() {
            let costs = &legs[i].costs;
            let price = match rules.at_close {
                false => legs[i].bars.open[k],
                true => legs[i].bars.close[k],
            };
            let round = &mut rounds[i];
            if wanted > 0.0 {
                let paid = price * (1.0 + costs.slippage);
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
                if units[i] == 0.0 {
                    *round = Round {
                        entry_step: step,
                        entry_bar: k,
                        ..Round::default()
                    };
                }
                units[i] += u;
                round.bought_units += u;
                round.bought_value += u * paid;
                round.buy_fees += fee;
                round.fees += fee;
                ledger.order(&Order {
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
                let got = price * (1.0 - costs.slippage);
                let fee = u * got * costs.fee;
                cash += u * got - fee;
                units[i] -= u;
                round.sold_units += u;
                round.sold_value += u * got;
                round.fees += fee;
                ledger.order(&Order {
                    instrument: i,
                    bar: k,
                    units: -u,
                    price: got,
                    fee,
                });
                if units[i] == 0.0 {
                    let trade = round.trade(0.0, got, Some(k));
                    ledger.trade(i, &trade, round.entry_step, Some(step));
                }
            }
            // The positions, in instrument order.
            match (held.binary_search_by_key(&i, |h| h.0), units[i] != 0.0) {
                (Ok(p), true) => held[p].1 = units[i],
                (Ok(p), false) => {
                    held.remove(p);
                }
                (Err(p), true) => held.insert(p, (i, units[i])),
                (Err(_), false) => {}
            }
        }
    }
    ledger.steps(from, end, cash, held, schedule);
    // Trades still open at the end, in instrument order, marked at their
    // instrument's last close.
    if let Some(last) = end.checked_sub(1) {
        for &(i, u) in held.iter() {
            let round = &rounds[i];
            let trade = round.trade(u, schedule.marks(i)[last], None);
            ledger.trade(i, &trade, round.entry_step, None);
        }
    }
}

/// Runs `legs` from one account under `rules` (see [`simulate_weights`]),
/// keeping everything (Python's `backtest_weights`).
pub fn run_weights(legs: &[WeightLeg<'_>], rules: &PortfolioRules) -> WeightsRun {
    let bars: Vec<&Bars> = legs.iter().map(|l| l.bars).collect();
    let schedule = Schedule::new(&bars);
    let mut run = WeightsRun {
        time: schedule.time.clone(),
        ..WeightsRun::default()
    };
    simulate_weights(
        legs,
        rules,
        &schedule,
        schedule.len(),
        &mut WeightsScratch::default(),
        &mut run,
    );
    run
}

#[cfg(test)]
mod tests {
    use super::super::portfolio::tests::{bars, FREE};
    use super::*;

    /// By hand, without costs: half and half, then all in B. At time 3 the
    /// value at the opens is 50·12 + 25·20 = 1,100; A's sale (−600) runs
    /// before B's purchase (+600), which the sale pays for exactly. A's
    /// round trip: 50 bought at 10, sold at 12 (+100); B's is still open,
    /// 55 held, bought for 1,100, worth 55 · 21 at the last close (+55): the two add to the gain.
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
        let rules = PortfolioRules::rebalancing(1000.0, None, false);
        let run = run_weights(&legs, &rules);
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
        let trades: Vec<(usize, usize, Option<usize>, f64, f64)> = run
            .trades
            .iter()
            .map(|(i, t)| (*i, t.entry_bar, t.exit_bar, t.units, t.pnl))
            .collect();
        assert_eq!(
            trades,
            vec![(0, 1, Some(2), 50.0, 100.0), (1, 1, None, 55.0, 55.0)]
        );
        // B's average price: 25 at 20 and 30 at 20.
        assert_eq!(run.trades[1].1.entry_price, 20.0);
    }

    /// Weights of 0.8 and 0.8 under `max_exposure = 1` are scaled to 0.5
    /// each; the next step's 0.9 for A alone, with B's 0.5 kept, is cut to
    /// what B leaves: 1 − B's share at the opens.
    #[test]
    fn weights_above_the_cap_are_scaled_down() {
        let a = bars(&[1, 2, 3], &[10.0, 10.0, 10.0], &[10.0, 10.0, 10.0]);
        let b = bars(&[1, 2, 3], &[20.0, 20.0, 30.0], &[20.0, 20.0, 30.0]);
        let (wa, wb) = ([0.8, 0.9, f64::NAN], [0.8, f64::NAN, f64::NAN]);
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
        let rules = PortfolioRules::rebalancing(1000.0, Some(1.0), false);
        let run = run_weights(&legs, &rules);
        let units: Vec<f64> = run.orders.iter().map(|o| o.units).collect();
        // Time 2: 500 in A (50), 500 in B (25). Time 3 at the opens: V =
        // 50·10 + 25·30 = 1,250, B is 0.6 of it, so A may have 0.4: 50
        // units, none to buy.
        assert_eq!(units, vec![50.0, 25.0]);
        assert_eq!(run.equity, vec![1000.0, 1000.0, 1250.0]);
        assert_eq!(run.positions, vec![0, 2, 2]);
        assert_eq!(run.exposure, vec![0.0, 1.0, 1.0]);
    }
}
