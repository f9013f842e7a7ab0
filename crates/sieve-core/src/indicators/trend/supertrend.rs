//! Supertrend: bands `mult` ATRs around the bar's midpoint that ratchet
//! toward price, the trend flipping when the close crosses one; from bar n.

use crate::indicators::volatility::atr;

/// Supertrend over TA-Lib's ATR(n) with bands `mult` ATRs around the
/// bar's midpoint (high + low) / 2, as the value and the direction (+1
/// up, −1 down). From the first bar with an ATR (bar n), with t−1 the bar
/// before:
///
/// - basic bands: upper = mid + mult·ATR, lower = mid − mult·ATR;
/// - final upper = basic upper if it is below the final upper of t−1 or
///   the close of t−1 was above that, else the final upper of t−1 (the
///   band only ratchets down while the trend is down); final lower the
///   mirror image;
/// - direction: up on the first bar; an up trend turns down on a close
///   below the final lower band, a down trend up on a close above the
///   final upper band;
/// - the value is the final lower band in an up trend, the final upper
///   band in a down trend.
pub fn supertrend(
    high: &[f64],
    low: &[f64],
    close: &[f64],
    n: usize,
    mult: f64,
) -> (Vec<f64>, Vec<f64>) {
    let len = close.len();
    let (mut value, mut direction) = (vec![f64::NAN; len], vec![f64::NAN; len]);
    let range = atr(high, low, close, n);
    let Some(first) = range.iter().position(|v| !v.is_nan()) else {
        return (value, direction);
    };
    let (mut upper, mut lower, mut up) = (f64::NAN, f64::NAN, true);
    for t in first..len {
        let mid = (high[t] + low[t]) / 2.0;
        let (basic_upper, basic_lower) = (mid + mult * range[t], mid - mult * range[t]);
        if t == first {
            (upper, lower) = (basic_upper, basic_lower);
        } else {
            let prev_close = close[t - 1];
            if basic_upper < upper || prev_close > upper {
                upper = basic_upper;
            }
            if basic_lower > lower || prev_close < lower {
                lower = basic_lower;
            }
            if up && close[t] < lower {
                up = false;
            } else if !up && close[t] > upper {
                up = true;
            }
        }
        value[t] = if up { lower } else { upper };
        direction[t] = if up { 1.0 } else { -1.0 };
    }
    (value, direction)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ATR(1) is the true range; with mult 1 the bands are mid ± TR.
    #[test]
    fn by_hand() {
        let high = [10.0, 11.0, 12.0, 9.0, 9.0];
        let low = [9.0, 10.0, 11.0, 7.0, 8.0];
        let close = [9.5, 10.5, 11.5, 7.5, 8.5];
        let (value, dir) = supertrend(&high, &low, &close, 1, 1.0);
        assert!(value[0].is_nan() && dir[0].is_nan());
        // Bar 1: TR = max(1, |11 − 9.5|, |10 − 9.5|) = 1.5; mid 10.5:
        // bands 12 / 9; up → value 9.
        assert_eq!((value[1], dir[1]), (9.0, 1.0));
        // Bar 2: TR 1.5, mid 11.5: basic 13 / 10; upper stays 12 (13 is
        // not below and close 10.5 not above); lower rises to 10.
        assert_eq!((value[2], dir[2]), (10.0, 1.0));
        // Bar 3: TR = max(2, |9 − 11.5|, |7 − 11.5|) = 4.5, mid 8: basic
        // 12.5 / 3.5; close 7.5 < lower 10 → down; upper stays 12.
        assert_eq!((value[3], dir[3]), (12.0, -1.0));
        // Bar 4: TR = max(1, 1.5, 0.5) = 1.5, mid 8.5: basic upper 10 < 12
        // → 10; close 8.5 ≤ 10: still down.
        assert_eq!((value[4], dir[4]), (10.0, -1.0));
    }
}
