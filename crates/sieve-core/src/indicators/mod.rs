//! Indicators, TA-Lib conventions. Each is a plain function from
//! slices to a `Vec<f64>` of the same length, NaN before its first value.
//!
//! An [`Indicator`] names one setting (kind + length). [`IndicatorSet`] holds
//! each distinct setting a run needs, computed once and read by every worker,
//! so memory is O(bars × distinct settings), never O(bars × combinations).

pub mod average;
pub mod channel;
pub mod composite;
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
    /// clamp((close − SMA(trend)) / (2·ATR(atr)), −1, 1), fields (trend, atr).
    TrendScore(usize, usize),
    /// (RSI(n) − 50) / 50.
    RsiScore(usize),
    /// Position of close in the n-bar high/low channel, in [−1, 1].
    ChannelPosition(usize),
}

impl Indicator {
    /// The indicators this one is computed from (composites only).
    pub fn inputs(self) -> Vec<Indicator> {
        match self {
            Indicator::TrendScore(trend, atr) => vec![Indicator::Sma(trend), Indicator::Atr(atr)],
            Indicator::RsiScore(n) => vec![Indicator::Rsi(n)],
            Indicator::ChannelPosition(n) => vec![Indicator::Highest(n), Indicator::Lowest(n)],
            _ => Vec::new(),
        }
    }

    /// Computes this indicator; `input` supplies each of [`Indicator::inputs`].
    pub fn compute_with<'a>(self, bars: &Bars, input: impl Fn(Indicator) -> &'a [f64]) -> Vec<f64> {
        match self {
            Indicator::Sma(n) => average::sma(&bars.close, n),
            Indicator::Ema(n) => average::ema(&bars.close, n),
            Indicator::Rsi(n) => momentum::rsi(&bars.close, n),
            Indicator::Atr(n) => volatility::atr(&bars.high, &bars.low, &bars.close, n),
            Indicator::Highest(n) => channel::highest(&bars.high, n),
            Indicator::Lowest(n) => channel::lowest(&bars.low, n),
            Indicator::TrendScore(trend, atr) => composite::trend_score(
                input(Indicator::Sma(trend)),
                input(Indicator::Atr(atr)),
                &bars.close,
            ),
            Indicator::RsiScore(n) => composite::rsi_score(input(Indicator::Rsi(n))),
            Indicator::ChannelPosition(n) => composite::channel_position(
                input(Indicator::Highest(n)),
                input(Indicator::Lowest(n)),
                &bars.close,
            ),
        }
    }

    /// Computes this indicator on its own (inputs included).
    pub fn compute(self, bars: &Bars) -> Vec<f64> {
        let inputs = IndicatorSet::build_sequential(bars, self.inputs());
        self.compute_with(bars, |k| inputs.get(k))
    }

    /// Index of the first defined value (bars counted from 0).
    pub fn first_valid(self) -> usize {
        match self {
            Indicator::Sma(n)
            | Indicator::Ema(n)
            | Indicator::Highest(n)
            | Indicator::Lowest(n) => n.saturating_sub(1),
            Indicator::Rsi(n) | Indicator::Atr(n) | Indicator::RsiScore(n) => n,
            Indicator::ChannelPosition(n) => n.saturating_sub(1),
            Indicator::TrendScore(trend, atr) => trend.saturating_sub(1).max(atr),
        }
    }
}

/// Every indicator setting a run needs, each computed once.
#[derive(Debug, Default, Clone)]
pub struct IndicatorSet {
    values: BTreeMap<Indicator, Vec<f64>>,
}

impl IndicatorSet {
    /// Computes each distinct setting in `wanted` once (in parallel), and
    /// the inputs of composites once too.
    pub fn build(bars: &Bars, wanted: impl IntoIterator<Item = Indicator>) -> Self {
        Self::build_with(bars, wanted, true)
    }

    /// Like [`IndicatorSet::build`] on the calling thread only.
    pub fn build_sequential(bars: &Bars, wanted: impl IntoIterator<Item = Indicator>) -> Self {
        Self::build_with(bars, wanted, false)
    }

    fn build_with(
        bars: &Bars,
        wanted: impl IntoIterator<Item = Indicator>,
        parallel: bool,
    ) -> Self {
        let mut keys: Vec<Indicator> = wanted.into_iter().collect();
        let inputs: Vec<Indicator> = keys.iter().flat_map(|k| k.inputs()).collect();
        keys.extend(inputs);
        keys.sort_unstable();
        keys.dedup();
        let (composite, base): (Vec<Indicator>, Vec<Indicator>) =
            keys.into_iter().partition(|k| !k.inputs().is_empty());
        let mut set = IndicatorSet::default();
        for stage in [base, composite] {
            let compute = |k: Indicator| (k, k.compute_with(bars, |i| set.get(i)));
            let done: Vec<(Indicator, Vec<f64>)> = if parallel {
                stage.into_par_iter().map(compute).collect()
            } else {
                stage.into_iter().map(compute).collect()
            };
            set.values.extend(done);
        }
        set
    }

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
}
