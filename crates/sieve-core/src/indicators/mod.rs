//! Indicators, TA-Lib conventions. Each is a plain function from
//! slices to a `Vec<f64>` of the same length, NaN before its first value.
//!
//! An [`Indicator`] names one setting (kind + length). [`IndicatorSet`] holds
//! each distinct setting a run needs, computed once and read by every worker,
//! so memory is O(bars × distinct settings), never O(bars × combinations).

pub mod average;
pub mod calendar;
pub mod channel;
mod codes;
pub mod composite;
pub mod event_bars;
pub mod events;
pub mod momentum;
pub mod trend;
pub mod volatility;
pub mod volume;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use rayon::prelude::*;

use crate::data::Bars;
pub use codes::{CodeScale, Codes, PAST_END};

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
    /// A series of a rule strategy, computed by that strategy (see
    /// [`SeriesSource`]); on its own it is undefined.
    Rule(RuleSeries),
}

/// The most parameters a shared rule series can be keyed by; a series
/// reading more is computed per combination instead.
pub const RULE_SETTING_LEN: usize = 6;

/// One node of a rule strategy's plan at one setting of the parameters it
/// reads (in the plan's order, each value's f64 bits; unused places 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleSeries {
    pub node: u32,
    pub setting: [u64; RULE_SETTING_LEN],
}

/// Knows how to compute the series a strategy reads: the built-in
/// indicators by default; a rule strategy adds its own nodes.
pub trait SeriesSource: Sync {
    /// The series `key` is computed from.
    fn inputs(&self, key: Indicator) -> Vec<Indicator> {
        key.inputs()
    }

    /// Computes `key`; `input` supplies each of [`SeriesSource::inputs`].
    fn compute<'a>(
        &self,
        bars: &Bars,
        key: Indicator,
        input: &dyn Fn(Indicator) -> &'a [f64],
    ) -> Vec<f64> {
        key.compute_with(bars, input)
    }
}

/// The built-in indicators alone.
pub struct Builtin;

impl SeriesSource for Builtin {}

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
            Indicator::Rule(_) => vec![f64::NAN; bars.len()],
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
            // Known to its strategy only (its `warmup`).
            Indicator::Rule(_) => 0,
        }
    }
}

/// Every indicator setting a run needs, each computed once.
#[derive(Debug, Default, Clone)]
pub struct IndicatorSet {
    /// A fast hash: every screened combination looks its series up here.
    values: FxHashMap<Indicator, Series>,
    /// The codes' scale, made from every series of the set when a scan
    /// first asks for codes (one scale, so that they compare).
    scale: OnceLock<CodeScale>,
    /// Where rules' crossings hold, per setting, found on first use.
    event_bars: event_bars::EventBars,
}

/// One computed series, and (once a scan asks) its codes.
#[derive(Debug, Clone)]
struct Series {
    values: Vec<f64>,
    /// A quarter of the bytes for scans that compare series (the crossing
    /// scan): `code(a) < code(b)` implies `a < b`; only equal codes need
    /// the f64 values. Made on first use, so strategies that never read
    /// them pay nothing.
    codes: OnceLock<Codes>,
}

impl Series {
    fn new(values: Vec<f64>) -> Self {
        Series {
            values,
            codes: OnceLock::new(),
        }
    }
}

impl IndicatorSet {
    /// Computes each distinct built-in setting in `wanted` once (in
    /// parallel), and the inputs of composites once too.
    pub fn build(bars: &Bars, wanted: impl IntoIterator<Item = Indicator>) -> Self {
        Self::build_from(bars, &Builtin, wanted, true)
    }

    /// Like [`IndicatorSet::build`] on the calling thread only.
    pub fn build_sequential(bars: &Bars, wanted: impl IntoIterator<Item = Indicator>) -> Self {
        Self::build_from(bars, &Builtin, wanted, false)
    }

    /// Computes every series in `wanted` and everything they are computed
    /// from, as `source` defines them: each once, in dependency levels,
    /// each level in parallel.
    pub fn build_for(
        bars: &Bars,
        source: &dyn SeriesSource,
        wanted: impl IntoIterator<Item = Indicator>,
    ) -> Self {
        Self::build_from(bars, source, wanted, true)
    }

    fn build_from(
        bars: &Bars,
        source: &dyn SeriesSource,
        wanted: impl IntoIterator<Item = Indicator>,
        parallel: bool,
    ) -> Self {
        // Every key with its depth (0: reads no other series).
        let mut depth: BTreeMap<Indicator, usize> = BTreeMap::new();
        let mut stack: Vec<Indicator> = wanted.into_iter().collect();
        while let Some(k) = stack.pop() {
            if depth.contains_key(&k) {
                continue;
            }
            let inputs = source.inputs(k);
            let pending: Vec<Indicator> = inputs
                .iter()
                .copied()
                .filter(|i| !depth.contains_key(i))
                .collect();
            if pending.is_empty() {
                let d = inputs.iter().map(|i| depth[i] + 1).max().unwrap_or(0);
                depth.insert(k, d);
            } else {
                stack.push(k);
                stack.extend(pending);
            }
        }
        let levels = depth.values().copied().max().map_or(0, |d| d + 1);
        let mut set = IndicatorSet::default();
        for level in 0..levels {
            let stage: Vec<Indicator> = depth
                .iter()
                .filter(|(_, &d)| d == level)
                .map(|(k, _)| *k)
                .collect();
            let compute = |k: Indicator| (k, Series::new(source.compute(bars, k, &|i| set.get(i))));
            let done: Vec<(Indicator, Series)> = if parallel {
                stage.into_par_iter().map(compute).collect()
            } else {
                stage.into_iter().map(compute).collect()
            };
            set.values.extend(done);
        }
        set
    }

    pub fn get(&self, key: Indicator) -> &[f64] {
        &self.series(key).values
    }

    /// Where rules' crossings hold on these bars, per setting.
    pub fn event_bars(&self) -> &event_bars::EventBars {
        &self.event_bars
    }

    /// The series of `key` and its codes ([`CodeScale::codes`], each bar
    /// scaled to the span of the set's values there), the codes made on
    /// the first call for that key.
    pub fn with_codes(&self, key: Indicator) -> (&[f64], &Codes) {
        let s = self.series(key);
        let codes = s.codes.get_or_init(|| {
            let scale = self.scale.get_or_init(|| {
                let all = || self.values.values().map(|s| s.values.as_slice());
                let len = all().map(<[f64]>::len).max().unwrap_or(0);
                CodeScale::spanning_each_bar(len, all())
            });
            scale.codes(&s.values)
        });
        (&s.values, codes)
    }

    fn series(&self, key: Indicator) -> &Series {
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
