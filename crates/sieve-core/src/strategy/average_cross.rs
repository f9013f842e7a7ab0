//! The built-in crosses of two moving averages of one kind (`sma_cross`,
//! `ema_cross`), on the crossing scan of [`super::crossing`].

use super::crossing::{cross_positions, CrossJob};
use super::{len_param, Changes, Direction, LaneBuffers, ParamSpec, Strategy};
use crate::data::Bars;
use crate::grid::ParamSpace;
use crate::indicators::{Indicator, IndicatorSet};
use crate::simd::Level;

/// A strategy that holds the crossing of a fast and a slow moving average of
/// one kind (`sma_cross`, `ema_cross`): parameters `fast`, `slow`.
pub struct AverageCross {
    pub(crate) name: &'static str,
    pub(crate) summary: &'static str,
    pub(crate) params: &'static [ParamSpec],
    /// The average of a length.
    pub(crate) average: fn(usize) -> Indicator,
}

/// The fast and the slow average of `p`.
fn averages(average: fn(usize) -> Indicator, p: &[f64]) -> (Indicator, Indicator) {
    (average(len_param(p[0])), average(len_param(p[1])))
}

impl Strategy for AverageCross {
    fn name(&self) -> &'static str {
        self.name
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }
    fn default_constraints(&self) -> &'static [&'static str] {
        &["fast < slow"]
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        let (fast, slow) = averages(self.average, p);
        out.extend([fast, slow]);
    }
    fn positions(&self, _: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let (fast, slow) = averages(self.average, p);
        let start = fast.first_valid().max(slow.first_valid());
        cross_positions(ind.get(fast), ind.get(slow), start, d, out);
    }
    /// Each average reads one parameter, so the grid's averages are those
    /// of each axis's values: what the default finds by walking every
    /// (fast, slow) pair (250,000 calls for 2..500 × 2..500), in 1,000.
    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        let mut keys = Vec::new();
        // The two parameters `averages` reads.
        for p in [0, 1] {
            space.for_each_setting(&[p], |v| keys.push((self.average)(len_param(v[p]))));
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }
    /// The crossing scan compares the 16-bit codes first.
    fn coded_series(&self) -> bool {
        true
    }
    fn lanes_pay(&self, _params: &[&[f64]]) -> bool {
        true
    }

    fn screen_path(&self) -> String {
        "lanes: the crossings' scan of shared averages".into()
    }
    /// Straight to changes, with no target per bar (quiet stretches cost
    /// nothing).
    fn lane_changes(
        &self,
        bars: &Bars,
        ind: &IndicatorSet,
        params: &[&[f64]],
        d: Direction,
        end: usize,
        level: Level,
        _buffers: &mut LaneBuffers,
        out: &mut [Changes],
    ) {
        // The batch's pairs of averages (a lane batch: no allocation).
        debug_assert!(params.len() <= crate::simd::LANES);
        let mut pairs = [(Indicator::Sma(1), Indicator::Sma(1)); crate::simd::LANES];
        for (pair, p) in pairs.iter_mut().zip(params) {
            *pair = averages(self.average, p);
        }
        let job = CrossJob {
            bars,
            indicators: ind,
            pairs: &pairs[..params.len().min(pairs.len())],
            direction: d,
            end,
        };
        job.changes(level, out);
    }
}
