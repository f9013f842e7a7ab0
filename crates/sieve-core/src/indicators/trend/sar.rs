//! TA-Lib's Parabolic SAR: a stop that closes in on the extreme point by an
//! accelerating factor and flips side when price touches it; from bar 1 on.

/// TA-Lib's Parabolic SAR (`TA_SAR`), `step` both the starting and the
/// increment acceleration, capped at `max` (a step above `max` is `max`).
/// The first direction is short when the first bar's minus-DM is positive
/// (the low fell more than the high rose), else long. Defined from bar 1;
/// undefined for a negative step or max.
pub fn sar(high: &[f64], low: &[f64], step: f64, max: f64) -> Vec<f64> {
    let len = high.len().min(low.len());
    let mut out = vec![f64::NAN; len];
    if len < 2 || !(step >= 0.0 && max >= 0.0) {
        return out;
    }
    let step = step.min(max);
    let mut af = step;
    // TA-Lib's one-bar minus-DM at bar 1.
    let (up, down) = (high[1] - high[0], low[0] - low[1]);
    let mut long = !(down > 0.0 && up < down);
    let (mut ep, mut sar) = if long {
        (high[1], low[0])
    } else {
        (low[1], high[0])
    };
    let (mut new_low, mut new_high) = (low[1], high[1]);
    for t in 1..len {
        let (prev_low, prev_high) = (new_low, new_high);
        new_low = low[t];
        new_high = high[t];
        if long {
            if new_low <= sar {
                // Switch to short: the SAR becomes the extreme point.
                long = false;
                sar = ep.max(prev_high).max(new_high);
                out[t] = sar;
                af = step;
                ep = new_low;
                sar = (sar + af * (ep - sar)).max(prev_high).max(new_high);
            } else {
                out[t] = sar;
                if new_high > ep {
                    ep = new_high;
                    af = (af + step).min(max);
                }
                sar = (sar + af * (ep - sar)).min(prev_low).min(new_low);
            }
        } else if new_high >= sar {
            long = true;
            sar = ep.min(prev_low).min(new_low);
            out[t] = sar;
            af = step;
            ep = new_high;
            sar = (sar + af * (ep - sar)).min(prev_low).min(new_low);
        } else {
            out[t] = sar;
            if new_low < ep {
                ep = new_low;
                af = (af + step).min(max);
            }
            sar = (sar + af * (ep - sar)).max(prev_high).max(new_high);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rising bars: long from the start, the SAR the first low, then
    /// moving toward the extreme point by the accelerating factor.
    #[test]
    fn by_hand_rising() {
        let high = [10.0, 11.0, 12.0, 13.0];
        let low = [9.0, 10.0, 11.0, 12.0];
        let s = sar(&high, &low, 0.02, 0.2);
        assert!(s[0].is_nan());
        // Bar 1: SAR 9 (bar 0's low); ep 11; next 9 + 0.02·(11 − 9) = 9.04.
        assert_eq!(s[1], 9.0);
        assert!((s[2] - 9.04).abs() < 1e-12);
        // Bar 2: new high 12 → ep 12, af 0.04: 9.04 + 0.04·2.96 = 9.1584.
        assert!((s[3] - 9.1584).abs() < 1e-12, "{s:?}");
    }

    /// A low through the SAR reverses to short at the extreme point.
    #[test]
    fn reverses() {
        let high = [10.0, 11.0, 12.0, 9.0];
        let low = [9.0, 10.0, 11.0, 8.0];
        let s = sar(&high, &low, 0.02, 0.2);
        // Bar 3's low 8 ≤ SAR 9.04+…: short, SAR = ep 12 (≥ both highs).
        assert_eq!(s[3], 12.0);
    }
}
