//! Wilder's moving average (the smoothing inside RSI and ATR): seeded at bar
//! n−1 with the mean of the first n values, then (avg·(n−1) + x)/n.

/// Wilder's moving average (TA-Lib's smoothing inside RSI and ATR): seeded
/// at index n−1 with the mean of the first n values, then
/// avg_t = (avg_{t−1}·(n−1) + x_t)/n, evaluated as
/// avg_{t−1}·((n−1)/n) + x_t·(1/n), as `atr` does, so that `rma` of the true
/// range is `atr` bit for bit.
pub fn rma(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 || x.len() < n {
        return out;
    }
    let nf = n as f64;
    let (keep, add) = ((nf - 1.0) / nf, 1.0 / nf);
    let mut prev = x[..n].iter().sum::<f64>() / nf;
    out[n - 1] = prev;
    for i in n..x.len() {
        prev = prev * keep + x[i] * add;
        out[i] = prev;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_with_the_mean_then_wilder() {
        // n = 2: seed (2 + 4)/2 = 3; then 3·½ + 8·½ = 5.5; then 5.5·½ + 0 = 2.75.
        let v = rma(&[2.0, 4.0, 8.0, 0.0], 2);
        assert!(v[0].is_nan());
        assert_eq!(&v[1..], &[3.0, 5.5, 2.75]);
        assert_eq!(rma(&[5.0, 7.0], 1), vec![5.0, 7.0]);
    }

    /// Equal, up to rounding, to Wilder's recurrence as written:
    /// (avg·(n−1) + x)/n.
    #[test]
    fn wilder_as_written() {
        let b = crate::data::synth(300, 4);
        for n in [1, 2, 14, 50] {
            let v = rma(&b.close, n);
            let mut avg = b.close[..n].iter().sum::<f64>() / n as f64;
            for (t, (&x, &got)) in b.close.iter().zip(&v).enumerate().skip(n) {
                avg = (avg * (n as f64 - 1.0) + x) / n as f64;
                assert!((got - avg).abs() <= 1e-12 * avg.abs(), "n {n} t {t}");
            }
        }
    }
}
