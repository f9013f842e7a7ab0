//! TA-Lib's Williams %R: where the close sits in the n-bar high–low range,
//! from −100 at the low to 0 at the high; defined from bar n−1 on.

/// TA-Lib's Williams %R over `n` bars: with the highest high H and lowest
/// low L of the last `n` bars (this one included), (H − close) / ((H − L) /
/// −100), from −100 (at the low) to 0 (at the high); 0 where H = L.
/// Defined from bar n − 1.
pub fn willr(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Vec<f64> {
    let len = close.len();
    let mut out = vec![f64::NAN; len];
    if n == 0 || len < n {
        return out;
    }
    let highest = crate::indicators::channel::highest(high, n);
    let lowest = crate::indicators::channel::lowest(low, n);
    for t in n - 1..len {
        let diff = (highest[t] - lowest[t]) / -100.0;
        out[t] = if diff != 0.0 {
            (highest[t] - close[t]) / diff
        } else {
            0.0
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_and_flat() {
        // Highs 10, 12; lows 8, 9; close 11: H 12, L 8 → (12 − 11) / −0.04 = −25.
        let w = willr(&[10.0, 12.0], &[8.0, 9.0], &[9.0, 11.0], 2);
        assert!(w[0].is_nan());
        assert!((w[1] + 25.0).abs() < 1e-12, "{w:?}");
        let flat = [3.0; 3];
        assert_eq!(willr(&flat, &flat, &flat, 2)[1..], [0.0, 0.0]);
    }
}
