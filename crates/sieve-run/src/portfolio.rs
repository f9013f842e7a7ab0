//! What a portfolio's backtest (`[portfolio]`) says about its instruments:
//! each one's contribution, and how many positions were open and how much
//! was exposed at every time. `sieve backtest` prints these and the report
//! shows them.

use sieve_core::engine::Backtest;
use sieve_core::market::Book;

/// One instrument's part in a portfolio's backtest.
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    pub name: String,
    /// Trades, closed and still open.
    pub trades: usize,
    /// Closed trades with a profit.
    pub wins: usize,
    /// Profit after fees, open trades at the last close: together the
    /// portfolio's gain.
    pub pnl: f64,
    pub fees: f64,
    /// The share of the portfolio's times it was held.
    pub held: f64,
}

/// Each instrument's contribution to `bt`, the backtest of `book`'s
/// portfolio (its trades' bars are the portfolio's steps), in instrument
/// order.
pub fn contributions(book: &Book, bt: &Backtest) -> Vec<Contribution> {
    let steps = bt.equity.len().max(1);
    let mut out: Vec<Contribution> = book
        .members
        .iter()
        .map(|m| Contribution {
            name: m.name.clone(),
            trades: 0,
            wins: 0,
            pnl: 0.0,
            fees: 0.0,
            held: 0.0,
        })
        .collect();
    for (t, &i) in bt.trades.iter().zip(&bt.instruments) {
        let c = &mut out[i];
        c.trades += 1;
        c.wins += usize::from(t.is_closed() && t.pnl > 0.0);
        c.pnl += t.pnl;
        c.fees += t.fees;
        let exit = t.exit_bar.unwrap_or(steps);
        c.held += (exit - t.entry_bar) as f64 / steps as f64;
    }
    out
}

/// Open positions and gross exposure (the positions' value at the close
/// over the portfolio's) at every step of `bt`.
#[derive(Debug, Clone, PartialEq)]
pub struct Occupancy {
    pub positions: Vec<u32>,
    pub exposure: Vec<f64>,
}

/// [`Occupancy`] of `bt`, the backtest of `book`'s portfolio of `params`:
/// a trade is open from the step of its entry up to the step of its exit
/// (filled at that step's open). A target-weight portfolio's trades change
/// size as it rebalances: its engine's own record is read.
pub fn occupancy(book: &Book, bt: &Backtest, params: &[f64]) -> Occupancy {
    if let Some(run) = book.weights_run(params) {
        return Occupancy {
            positions: run.positions,
            exposure: run.exposure,
        };
    }
    let n = bt.equity.len();
    let mut positions = vec![0u32; n];
    let mut gross = vec![0.0f64; n];
    for (t, &i) in bt.trades.iter().zip(&bt.instruments) {
        let marks = book.schedule.marks(i);
        for s in t.entry_bar..t.exit_bar.unwrap_or(n).min(n) {
            positions[s] += 1;
            gross[s] += (t.units * marks[s]).abs();
        }
    }
    let exposure = gross.iter().zip(&bt.equity).map(|(g, e)| g / e).collect();
    Occupancy {
        positions,
        exposure,
    }
}

/// Mean and largest of `values` (NaN and 0 when empty).
pub fn mean_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut sum, mut n, mut max) = (0.0, 0usize, 0.0f64);
    for v in values {
        sum += v;
        n += 1;
        max = max.max(v);
    }
    (sum / n as f64, max)
}
