//! The `ema_cross` strategy: long while EMA(fast) is above EMA(slow),
//! entered and left on crossings (an [`AverageCross`] of EMAs).

use std::borrow::Cow;

use super::average_cross::AverageCross;
use super::{ParamKind, ParamSpec};
use crate::indicators::Indicator;

/// Long while EMA(fast) is above EMA(slow), entered and left on crossings.
pub static EMA_CROSS: AverageCross = AverageCross {
    name: "ema_cross",
    summary: "enter long when EMA(fast) crosses above EMA(slow), exit when it crosses below",
    params: PARAMS,
    average: Indicator::Ema,
};

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: Cow::Borrowed("fast"),
        kind: ParamKind::Int,
        default: 20.0,
        min: 1.0,
        max: 100_000.0,
        grid: (2.0, 100.0, 1.0),
        doc: "fast EMA length (bars)",
    },
    ParamSpec {
        name: Cow::Borrowed("slow"),
        kind: ParamKind::Int,
        default: 100.0,
        min: 1.0,
        max: 100_000.0,
        grid: (5.0, 300.0, 5.0),
        doc: "slow EMA length (bars)",
    },
];
