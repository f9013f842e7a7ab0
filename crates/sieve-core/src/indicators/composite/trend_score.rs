//! The close's distance from its SMA in units of 2·ATR, clamped to [−1, 1]
//! (0 when the ATR is 0): the trend term of composite scores.

/// clamp((close − SMA(close, trend_len)) / (2·ATR(atr_len)), −1, 1); 0 when
/// ATR is 0. First value where both are defined.
pub fn trend_score(sma: &[f64], atr: &[f64], close: &[f64]) -> Vec<f64> {
    sma.iter()
        .zip(atr)
        .zip(close)
        .map(|((&s, &a), &c)| {
            // NaN (not yet defined) passes through the division and clamp.
            if a == 0.0 {
                0.0
            } else {
                ((c - s) / (2.0 * a)).clamp(-1.0, 1.0)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_scaled_distance() {
        let v = trend_score(
            &[f64::NAN, 10.0, 10.0, 10.0],
            &[1.0, 1.0, 0.5, 0.0],
            &[9.0, 11.0, 9.0, 12.0],
        );
        assert!(v[0].is_nan());
        // (11 − 10)/(2·1) = 0.5; (9 − 10)/(2·0.5) = −1; ATR 0 → 0
        assert_eq!(&v[1..], &[0.5, -1.0, 0.0]);
    }
}
