//! The weighted moving average (TA-Lib WMA): weights 1..n from the oldest
//! value to this one, over n(n+1)/2; defined from bar n−1 on.

/// Weighted moving average (TA-Lib WMA): weights 1, 2, …, n from the oldest
/// to this bar, over n(n+1)/2; first value at index n−1. TA-Lib's running
/// form: the weighted sum gains n·x_t and loses the plain sum of the window
/// each bar.
pub fn wma(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 || x.len() < n {
        return out;
    }
    let nf = n as f64;
    let divider = nf * (nf + 1.0) / 2.0;
    let (mut plain, mut weighted) = (0.0, 0.0);
    for (i, &v) in x[..n - 1].iter().enumerate() {
        plain += v;
        weighted += v * (i + 1) as f64;
    }
    let mut trailing = 0.0;
    for i in n - 1..x.len() {
        plain += x[i];
        plain -= trailing;
        weighted += x[i] * nf;
        trailing = x[i + 1 - n];
        out[i] = weighted / divider;
        weighted -= plain;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_one_to_n() {
        // n = 3: (1·1 + 2·2 + 3·6)/6 = 23/6; (1·2 + 2·6 + 3·0)/6 = 14/6;
        // (1·6 + 2·0 + 3·12)/6 = 7.
        let v = wma(&[1.0, 2.0, 6.0, 0.0, 12.0], 3);
        assert!(v[0].is_nan() && v[1].is_nan());
        let want = [23.0 / 6.0, 14.0 / 6.0, 7.0];
        for (a, b) in v[2..].iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{v:?}");
        }
        assert_eq!(wma(&[5.0, 7.0], 1), vec![5.0, 7.0]);
    }

    /// The running form equals the direct weighted sum.
    #[test]
    fn running_equals_direct() {
        let b = crate::data::synth(400, 9);
        for n in [2, 7, 30] {
            let v = wma(&b.close, n);
            for (t, window) in b.close.windows(n).enumerate() {
                let direct: f64 = window
                    .iter()
                    .enumerate()
                    .map(|(k, x)| (k + 1) as f64 * x)
                    .sum::<f64>()
                    / (n * (n + 1) / 2) as f64;
                let got = v[t + n - 1];
                assert!((got - direct).abs() <= 1e-9 * direct.abs(), "n {n} t {t}");
            }
        }
    }
}
