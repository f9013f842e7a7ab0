//! The loop over bars for a target position per bar ([`simulate`]) and
//! the whole record it produces ([`Backtest`], [`backtest`]).

use super::{Account, EngineConfig, Sink, Trade};
use crate::data::{Bars, DetailCounts};

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
    /// Closed trades in order, then the open one (if any); a portfolio's
    /// trades in the order they closed, then those still open.
    pub trades: Vec<Trade>,
    /// A portfolio's: each trade's instrument (empty for one instrument).
    pub instruments: Vec<usize>,
    /// With detail bars: the ambiguous bars walked on them and those left
    /// to the OHLC rule.
    pub detail: Option<DetailCounts>,
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
    fn instrument_trade(&mut self, instrument: usize, trade: &Trade) {
        self.trades.push(*trade);
        self.instruments.push(instrument);
    }
    fn detail(&mut self, counts: DetailCounts) {
        self.detail = Some(counts);
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
        instruments: Vec::new(),
        detail: None,
    };
    simulate(bars, positions, cfg, bars.len(), &mut out);
    out
}
