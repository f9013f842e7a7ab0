use super::{len_param, Direction, ParamKind, ParamSpec, Strategy};
use crate::data::Bars;
use crate::indicators::{Indicator, IndicatorSet};

/// The composite "activation score" strategy of the original system
///: a weighted mean of trend, momentum and breakout in [−1, 1],
/// entered and left with hysteresis (`entry` / `exit`) and protected by an ATR
/// trailing stop on the highest close since the entry decision.
pub struct Activation;

const fn int(
    name: &'static str,
    default: f64,
    grid: (f64, f64, f64),
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int,
        default,
        min: 1.0,
        max: 100_000.0,
        grid,
        doc,
    }
}

const fn real(
    name: &'static str,
    default: f64,
    (min, max): (f64, f64),
    grid: (f64, f64, f64),
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Float,
        default,
        min,
        max,
        grid,
        doc,
    }
}

const PARAMS: &[ParamSpec] = &[
    int(
        "trend_len",
        50.0,
        (20.0, 200.0, 30.0),
        "SMA length of the trend term",
    ),
    int(
        "rsi_len",
        14.0,
        (7.0, 21.0, 7.0),
        "RSI length of the momentum term",
    ),
    int(
        "dc_len",
        20.0,
        (10.0, 50.0, 20.0),
        "channel length of the breakout term",
    ),
    int(
        "atr_len",
        14.0,
        (10.0, 20.0, 10.0),
        "ATR length (trend scale and stop)",
    ),
    real(
        "w_trend",
        1.0,
        (0.0, 1.0e6),
        (0.0, 1.0, 0.5),
        "weight of the trend term",
    ),
    real(
        "w_rsi",
        1.0,
        (0.0, 1.0e6),
        (0.0, 1.0, 0.5),
        "weight of the momentum term",
    ),
    real(
        "w_dc",
        1.0,
        (0.0, 1.0e6),
        (0.0, 1.0, 0.5),
        "weight of the breakout term",
    ),
    real(
        "entry",
        0.4,
        (-1.0, 1.0),
        (0.2, 0.6, 0.2),
        "enter long when score ≥ entry",
    ),
    real(
        "exit",
        0.0,
        (-1.0, 1.0),
        (-0.2, 0.2, 0.2),
        "exit long when score ≤ exit",
    ),
    real(
        "stop_atr",
        3.0,
        (0.0, 1.0e3),
        (0.0, 4.0, 2.0),
        "trailing stop in ATRs below the highest close (0 = off)",
    ),
];

/// Indices of the parameters above.
const TREND_LEN: usize = 0;
const RSI_LEN: usize = 1;
const DC_LEN: usize = 2;
const ATR_LEN: usize = 3;
const W_TREND: usize = 4;
const W_RSI: usize = 5;
const W_DC: usize = 6;
const ENTRY: usize = 7;
const EXIT: usize = 8;
const STOP_ATR: usize = 9;

fn keys(p: &[f64]) -> [Indicator; 4] {
    let atr = len_param(p[ATR_LEN]);
    [
        Indicator::TrendScore(len_param(p[TREND_LEN]), atr),
        Indicator::RsiScore(len_param(p[RSI_LEN])),
        Indicator::ChannelPosition(len_param(p[DC_LEN])),
        Indicator::Atr(atr),
    ]
}

impl Strategy for Activation {
    fn name(&self) -> &'static str {
        "activation"
    }
    fn summary(&self) -> &'static str {
        "weighted trend/momentum/breakout score with hysteresis and an ATR trailing stop"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        out.extend(keys(p));
    }
    fn positions(&self, bars: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let k = keys(p);
        let start = super::warmup(&k).min(out.len());
        let n = out.len();
        // Sliced to one length so the loop runs without bounds checks.
        let [trend, momentum, breakout, atr] = k.map(|key| &ind.get(key)[..n]);
        let close = &bars.close[..n];
        let (w_trend, w_rsi, w_dc) = (p[W_TREND], p[W_RSI], p[W_DC]);
        let w_sum = w_trend + w_rsi + w_dc;
        // score = weighted / Σw is compared as weighted against thresholds
        // scaled by Σw (> 0: weights are ≥ 0): no division per bar.
        let (entry, exit) = if w_sum == 0.0 {
            (p[ENTRY], p[EXIT])
        } else {
            (p[ENTRY] * w_sum, p[EXIT] * w_sum)
        };
        let stop_atr = p[STOP_ATR];
        let shorts = d == Direction::LongShort;

        out[..start].fill(0);
        let mut position = 0i8;
        // Highest close since a long entry decision / lowest since a short one.
        let mut extreme = 0.0_f64;
        for t in start..n {
            let c = close[t];
            // With Σw = 0 every term is weighted 0, so the score is 0 as defined.
            let score = w_trend * trend[t] + w_rsi * momentum[t] + w_dc * breakout[t];
            // At most one transition per bar, from the state at its start.
            match position {
                1 => {
                    extreme = extreme.max(c);
                    if shorts && score <= -entry {
                        position = -1;
                        extreme = c;
                    } else if score <= exit || (stop_atr > 0.0 && c < extreme - stop_atr * atr[t]) {
                        position = 0;
                    }
                }
                -1 => {
                    extreme = extreme.min(c);
                    if score >= entry {
                        position = 1;
                        extreme = c;
                    } else if score >= -exit || (stop_atr > 0.0 && c > extreme + stop_atr * atr[t])
                    {
                        position = 0;
                    }
                }
                _ => {
                    if score >= entry {
                        position = 1;
                        extreme = c;
                    } else if shorts && score <= -entry {
                        position = -1;
                        extreme = c;
                    }
                }
            }
            out[t] = position;
        }
    }
}
