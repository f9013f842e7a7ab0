//! Trades as Python takes them: every field of every trade of one or many
//! backtests in a flat buffer, so that Python builds one table with a few
//! array copies instead of parsing text or a list per backtest.

use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use sieve_core::data::Bars;
use sieve_core::engine::{Backtest, EntryReason, ExitReason, Side, Trade};

/// The trades of several backtests, field by field.
#[derive(Default)]
pub struct TradeRecords {
    /// Trades per backtest, in the order they were pushed.
    counts: Vec<u64>,
    /// Entry and exit bar times in ms (exit −1 while open).
    entry_time: Vec<i64>,
    exit_time: Vec<i64>,
    /// entry_price, exit_price, units, fees, pnl, return, mae, mfe.
    numbers: [Vec<f64>; 8],
    short: Vec<u8>,
    open: Vec<u8>,
    /// `ExitReason as u8` (an index into [`ExitReason::ALL`]).
    reason: Vec<u8>,
    /// `EntryReason as u8` (an index into [`EntryReason::ALL`]).
    entry: Vec<u8>,
}

/// [`TradeRecords`] for Python: the counts per backtest; the entry then
/// exit times (i64, little-endian); the eight numbers field after field
/// (f64); the short, open, exit and entry reason bytes, field after
/// field; the exit and the entry reasons' names.
pub type RecordsOut<'py> = (
    Vec<u64>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Bound<'py, PyByteArray>,
    Vec<&'static str>,
    Vec<&'static str>,
);

impl TradeRecords {
    /// Adds one backtest's trades (`bars`: its instrument's).
    pub fn push(&mut self, bars: &Bars, bt: &Backtest) {
        self.group(bt.trades.iter().map(|t| (bars, t)));
    }

    /// Adds one group of trades, each with its instrument's bars (a
    /// portfolio's, whose trades are of several instruments).
    pub fn group<'a>(&mut self, trades: impl Iterator<Item = (&'a Bars, &'a Trade)>) {
        let before = self.entry_time.len();
        for (bars, t) in trades {
            let (mae, mfe) = t.excursions(bars);
            self.entry_time.push(bars.time[t.entry_bar]);
            self.exit_time.push(t.exit_bar.map_or(-1, |b| bars.time[b]));
            let values = [
                t.entry_price,
                t.exit_price,
                t.units,
                t.fees,
                t.pnl,
                t.ret,
                mae,
                mfe,
            ];
            for (field, v) in self.numbers.iter_mut().zip(values) {
                field.push(v);
            }
            self.short.push(u8::from(t.side == Side::Short));
            self.open.push(u8::from(t.exit_bar.is_none()));
            self.reason.push(t.exit_reason as u8);
            self.entry.push(t.entry_reason as u8);
        }
        self.counts.push((self.entry_time.len() - before) as u64);
    }

    pub fn into_py(self, py: Python<'_>) -> PyResult<RecordsOut<'_>> {
        let n = self.entry_time.len();
        let times = self.entry_time.iter().chain(&self.exit_time);
        let times = bytes_of(py, 2 * n, times.map(|t| t.to_le_bytes()))?;
        let numbers = self.numbers.iter().flatten().map(|v| v.to_le_bytes());
        let numbers = bytes_of(py, 8 * n, numbers)?;
        let codes = [
            &self.short[..],
            &self.open[..],
            &self.reason[..],
            &self.entry[..],
        ];
        let codes = PyByteArray::new(py, &codes.concat());
        let names = ExitReason::ALL.iter().map(|r| r.as_str()).collect();
        let entries = EntryReason::ALL.iter().map(|r| r.as_str()).collect();
        Ok((self.counts, times, numbers, codes, names, entries))
    }
}

/// One bytearray of `len` 8-byte values, written in place.
fn bytes_of<'py>(
    py: Python<'py>,
    len: usize,
    values: impl Iterator<Item = [u8; 8]>,
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, len * 8, |buf| {
        for (out, v) in buf.chunks_exact_mut(8).zip(values) {
            out.copy_from_slice(&v);
        }
        Ok(())
    })
}
