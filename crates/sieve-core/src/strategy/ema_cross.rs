use super::cross::{cross_positions, crossing_lane_changes};
use super::{len_param, Changes, Direction, ParamKind, ParamSpec, Strategy};
use crate::data::Bars;
use crate::indicators::{Indicator, IndicatorSet};

/// Long while EMA(fast) is above EMA(slow), entered and left on crossings.
pub struct EmaCross;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "fast",
        kind: ParamKind::Int,
        default: 20.0,
        min: 1.0,
        max: 100_000.0,
        grid: (2.0, 100.0, 1.0),
        doc: "fast EMA length (bars)",
    },
    ParamSpec {
        name: "slow",
        kind: ParamKind::Int,
        default: 100.0,
        min: 1.0,
        max: 100_000.0,
        grid: (5.0, 300.0, 5.0),
        doc: "slow EMA length (bars)",
    },
];

impl Strategy for EmaCross {
    fn name(&self) -> &'static str {
        "ema_cross"
    }
    fn summary(&self) -> &'static str {
        "enter long when EMA(fast) crosses above EMA(slow), exit when it crosses below"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn default_constraints(&self) -> &'static [&'static str] {
        &["fast < slow"]
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        out.push(Indicator::Ema(len_param(p[0])));
        out.push(Indicator::Ema(len_param(p[1])));
    }
    fn positions(&self, _: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let (fast, slow) = pair(p);
        let start = fast.first_valid().max(slow.first_valid());
        cross_positions(ind.get(fast), ind.get(slow), start, d, out);
    }
    fn lanes_pay(&self) -> bool {
        true
    }
    fn lane_changes(
        &self,
        bars: &Bars,
        ind: &IndicatorSet,
        params: &[&[f64]],
        d: Direction,
        end: usize,
        _scratch: &mut Vec<i8>,
        out: &mut [Changes],
    ) {
        crossing_lane_changes(pair, bars, ind, params, d, end, out);
    }
}

/// The fast and the slow average.
fn pair(p: &[f64]) -> (Indicator, Indicator) {
    (
        Indicator::Ema(len_param(p[0])),
        Indicator::Ema(len_param(p[1])),
    )
}
