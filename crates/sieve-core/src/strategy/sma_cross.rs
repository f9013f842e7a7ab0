//! The `sma_cross` strategy: long while SMA(fast) is above SMA(slow),
//! entered and left on crossings (an [`AverageCross`] of SMAs).

use std::borrow::Cow;

use super::average_cross::AverageCross;
use super::{ParamKind, ParamSpec};
use crate::indicators::Indicator;

/// Long while SMA(fast) is above SMA(slow), entered and left on crossings.
pub static SMA_CROSS: AverageCross = AverageCross {
    name: "sma_cross",
    summary: "enter long when SMA(fast) crosses above SMA(slow), exit when it crosses below",
    params: PARAMS,
    average: Indicator::Sma,
};

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: Cow::Borrowed("fast"),
        kind: ParamKind::Int,
        default: 20.0,
        min: 1.0,
        max: 100_000.0,
        grid: (2.0, 100.0, 1.0),
        doc: "fast SMA length (bars)",
    },
    ParamSpec {
        name: Cow::Borrowed("slow"),
        kind: ParamKind::Int,
        default: 100.0,
        min: 1.0,
        max: 100_000.0,
        grid: (5.0, 300.0, 5.0),
        doc: "slow SMA length (bars)",
    },
];
