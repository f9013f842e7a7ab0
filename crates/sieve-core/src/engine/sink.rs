//! [`Sink`], where the engine streams each bar's equity and each trade,
//! and [`Tee`], which feeds one simulation to two sinks.

use super::Trade;
use crate::data::DetailCounts;

/// Receives the simulation as it happens.
pub trait Sink {
    /// Equity at bar `t`'s close and the position then held.
    fn bar(&mut self, t: usize, equity: f64, position: i8);
    /// A trade that closed on bar `trade.exit_bar`, or (once, at the end) the
    /// position still open.
    fn trade(&mut self, trade: &Trade);
    /// A portfolio's trade of instrument `instrument` (its bars are the
    /// portfolio's steps). Most sinks need no instrument.
    fn instrument_trade(&mut self, _instrument: usize, trade: &Trade) {
        self.trade(trade);
    }

    /// Once, at the end, with detail bars (`data.detail`): how many
    /// ambiguous bars were walked on them and how many kept the OHLC rule.
    fn detail(&mut self, _counts: DetailCounts) {}

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

    /// Bars `from..from + equity.len()` holding `position`, each bar's
    /// equity given. Must equal calling `bar` for each.
    #[inline]
    fn equities(&mut self, from: usize, equity: &[f64], position: i8) {
        for (k, &e) in equity.iter().enumerate() {
            self.bar(from + k, e, position);
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
    fn instrument_trade(&mut self, instrument: usize, trade: &Trade) {
        (**self).instrument_trade(instrument, trade);
    }
    fn detail(&mut self, counts: DetailCounts) {
        (**self).detail(counts);
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
    fn equities(&mut self, from: usize, equity: &[f64], position: i8) {
        (**self).equities(from, equity, position);
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
    fn instrument_trade(&mut self, instrument: usize, trade: &Trade) {
        self.0.instrument_trade(instrument, trade);
        self.1.instrument_trade(instrument, trade);
    }
    fn detail(&mut self, counts: DetailCounts) {
        self.0.detail(counts);
        self.1.detail(counts);
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
    fn equities(&mut self, from: usize, equity: &[f64], position: i8) {
        self.0.equities(from, equity, position);
        self.1.equities(from, equity, position);
    }
}
