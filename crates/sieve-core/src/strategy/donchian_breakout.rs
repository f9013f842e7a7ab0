//! The `donchian_breakout` strategy: long when the close breaks above the
//! highest high of the previous `entry` bars, flat when it breaks below the
//! lowest low of the previous `exit` bars (this bar excluded from both).

use std::borrow::Cow;

use super::{len_param, Direction, ParamKind, ParamSpec, Strategy};
use crate::data::Bars;
use crate::indicators::{Indicator, IndicatorSet};

/// Channel breakout: long when close breaks above the highest high of the
/// previous `entry` bars, flat when it breaks below the lowest low of the
/// previous `exit` bars. "Previous" excludes this bar, so the channel at t is
/// the rolling extreme ending at t−1.
pub struct DonchianBreakout;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: Cow::Borrowed("entry"),
        kind: ParamKind::Int,
        default: 20.0,
        min: 1.0,
        max: 100_000.0,
        grid: (5.0, 100.0, 5.0),
        doc: "breakout channel length (bars)",
    },
    ParamSpec {
        name: Cow::Borrowed("exit"),
        kind: ParamKind::Int,
        default: 10.0,
        min: 1.0,
        max: 100_000.0,
        grid: (5.0, 50.0, 5.0),
        doc: "exit channel length (bars)",
    },
];

impl Strategy for DonchianBreakout {
    fn name(&self) -> &'static str {
        "donchian_breakout"
    }
    fn summary(&self) -> &'static str {
        "long when close > highest high of the previous `entry` bars; flat when close < lowest low of the previous `exit` bars"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        out.push(Indicator::Highest(len_param(p[0])));
        out.push(Indicator::Lowest(len_param(p[1])));
    }
    fn positions(&self, bars: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let (hk, lk) = (
            Indicator::Highest(len_param(p[0])),
            Indicator::Lowest(len_param(p[1])),
        );
        let (hh, ll) = (ind.get(hk), ind.get(lk));
        // The channel at t ends at t − 1, so the first usable bar is one later.
        let start = (hk.first_valid().max(lk.first_valid()) + 1).min(out.len());
        out[..start].fill(0);
        let close = &bars.close;
        let mut position = 0;
        for t in start..out.len() {
            position = d.step(position, close[t] > hh[t - 1], close[t] < ll[t - 1]);
            out[t] = position;
        }
    }
}
