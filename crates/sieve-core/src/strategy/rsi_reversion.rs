//! The `rsi_reversion` strategy: mean reversion on the RSI, long when it
//! falls below `lower`, flat when it rises above `upper`.

use std::borrow::Cow;

use super::{len_param, Direction, ParamKind, ParamSpec, Strategy};
use crate::data::Bars;
use crate::indicators::{Indicator, IndicatorSet};

/// Mean reversion on RSI: long when RSI < lower, flat when RSI > upper.
pub struct RsiReversion;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: Cow::Borrowed("period"),
        kind: ParamKind::Int,
        default: 14.0,
        min: 1.0,
        max: 100_000.0,
        grid: (2.0, 30.0, 2.0),
        doc: "RSI length (bars)",
    },
    ParamSpec {
        name: Cow::Borrowed("lower"),
        kind: ParamKind::Float,
        default: 30.0,
        min: 0.0,
        max: 100.0,
        grid: (10.0, 40.0, 5.0),
        doc: "enter long below this RSI",
    },
    ParamSpec {
        name: Cow::Borrowed("upper"),
        kind: ParamKind::Float,
        default: 70.0,
        min: 0.0,
        max: 100.0,
        grid: (50.0, 90.0, 5.0),
        doc: "exit above this RSI",
    },
];

impl Strategy for RsiReversion {
    fn name(&self) -> &'static str {
        "rsi_reversion"
    }
    fn summary(&self) -> &'static str {
        "long when RSI(period) < lower, flat when RSI > upper"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        out.push(Indicator::Rsi(len_param(p[0])));
    }
    fn positions(&self, _: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let key = Indicator::Rsi(len_param(p[0]));
        let (lower, upper) = (p[1], p[2]);
        let rsi = ind.get(key);
        let start = key.first_valid().min(out.len());
        out[..start].fill(0);
        let mut position = 0;
        for t in start..out.len() {
            position = d.step(position, rsi[t] < lower, rsi[t] > upper);
            out[t] = position;
        }
    }
}
