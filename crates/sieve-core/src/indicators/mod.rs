//! Indicators, TA-Lib conventions (DESIGN §3). Each is a plain function from
//! slices to a `Vec<f64>` of the same length, NaN before its first value.
//!
//! An [`Indicator`] names one setting (kind + length). [`IndicatorSet`] holds
//! each distinct setting a run needs, computed once and read by every worker,
//! so memory is O(bars × distinct settings), never O(bars × combinations).

pub mod average;
pub mod channel;
pub mod momentum;
pub mod volatility;

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::data::Bars;

/// One indicator setting. Lengths are in bars and at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Indicator {
    /// SMA of close.
    Sma(usize),
    /// EMA of close, seeded with the SMA of the first n closes.
    Ema(usize),
    /// Wilder RSI of close.
    Rsi(usize),
    /// Wilder ATR.
    Atr(usize),
    /// Highest high over the last n bars, this one included.
    Highest(usize),
    /// Lowest low over the last n bars, this one included.
    Lowest(usize),
}

impl Indicator {
    pub fn compute(self, bars: &Bars) -> Vec<f64> {
        match self {
            Indicator::Sma(n) => average::sma(&bars.close, n),
            Indicator::Ema(n) => average::ema(&bars.close, n),
            Indicator::Rsi(n) => momentum::rsi(&bars.close, n),
            Indicator::Atr(n) => volatility::atr(&bars.high, &bars.low, &bars.close, n),
            Indicator::Highest(n) => channel::highest(&bars.high, n),
            Indicator::Lowest(n) => channel::lowest(&bars.low, n),
        }
    }

    /// Index of the first defined value (bars counted from 0).
    pub fn first_valid(self) -> usize {
        match self {
            Indicator::Sma(n) | Indicator::Ema(n) | Indicator::Highest(n) | Indicator::Lowest(n) => {
                n.saturating_sub(1)
            }
            Indicator::Rsi(n) | Indicator::Atr(n) => n,
        }
    }
}

/// Every indicator setting a run needs, each computed once.
#[derive(Debug, Default, Clone)]
pub struct IndicatorSet {
    values: BTreeMap<Indicator, Vec<f64>>,
}

impl IndicatorSet {
    /// Computes each distinct setting in `wanted` once (in parallel).
    pub fn build(bars: &Bars, wanted: impl IntoIterator<Item = Indicator>) -> Self {
        let mut keys: Vec<Indicator> = wanted.into_iter().collect();
        keys.sort_unstable();
        keys.dedup();
        let values = keys
            .into_par_iter()
            .map(|k| (k, k.compute(bars)))
            .collect();
        IndicatorSet { values }
    }

    /// The values of `key`.
    ///
    /// # Panics
    /// When `key` was not built: that is a bug in the strategy's
    /// `indicators()` list, not a user error.
    pub fn get(&self, key: Indicator) -> &[f64] {
        match self.values.get(&key) {
            Some(v) => v,
            None => panic!("indicator {key:?} was not computed; the strategy must list it"),
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Bytes held by the indicator values.
    pub fn memory_bytes(&self) -> usize {
        self.values.values().map(|v| v.len() * 8).sum()
    }
}
