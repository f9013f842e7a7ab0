//! TA-Lib's Commodity Channel Index: the typical price's distance from its
//! n-bar mean over 0.015 × its mean absolute deviation; from bar n−1 on.

/// TA-Lib's Commodity Channel Index over `n` bars: with the typical price
/// tp = (high + low + close) / 3, its mean m and mean absolute deviation d
/// over the last `n` bars, (tp − m) / (0.015 · d); 0 where tp − m or the
/// summed deviation is within 1e-8 of zero (TA-Lib's `TA_IS_ZERO`).
/// Defined from bar n − 1. The sums run in TA-Lib's order (its circular
/// buffer's slots, bar t in slot t mod n), so the last bits agree too.
pub fn cci(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Vec<f64> {
    let len = close.len();
    let mut out = vec![f64::NAN; len];
    if n == 0 || len < n {
        return out;
    }
    let tp: Vec<f64> = (0..len)
        .map(|t| (high[t] + low[t] + close[t]) / 3.0)
        .collect();
    let zero = |x: f64| -1e-8 < x && x < 1e-8;
    for t in n - 1..len {
        // Slot j holds the window's bar congruent to j mod n.
        let bar = |j: usize| t - (t + n - j) % n;
        let mean = (0..n).map(|j| tp[bar(j)]).sum::<f64>() / n as f64;
        let deviation: f64 = (0..n).map(|j| (tp[bar(j)] - mean).abs()).sum();
        let above = tp[t] - mean;
        out[t] = if zero(above) || zero(deviation) {
            0.0
        } else {
            above / (0.015 * (deviation / n as f64))
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_and_flat() {
        // tp = 1, 2, 6 (high = low = close): mean 3, deviations 2, 1, 3
        // (mean 2): (6 − 3) / (0.015 · 2) = 100.
        let x = [1.0, 2.0, 6.0];
        let c = cci(&x, &x, &x, 3);
        assert!(c[0].is_nan() && c[1].is_nan());
        assert!((c[2] - 100.0).abs() < 1e-9, "{c:?}");
        let flat = [5.0; 4];
        assert_eq!(cci(&flat, &flat, &flat, 2)[1..], [0.0, 0.0, 0.0]);
    }
}
