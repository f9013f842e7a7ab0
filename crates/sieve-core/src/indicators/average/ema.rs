//! The exponential moving average: α = 2/(n+1), seeded at bar n−1 with the
//! SMA of the first n values (TA-Lib's default seeding).

/// Exponential moving average, α = 2/(n+1), seeded at index n−1 with the SMA
/// of the first n values (TA-Lib's default seeding).
pub fn ema(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 || x.len() < n {
        return out;
    }
    let alpha = 2.0 / (n as f64 + 1.0);
    let mut prev = x[..n].iter().sum::<f64>() / n as f64;
    out[n - 1] = prev;
    for i in n..x.len() {
        prev += alpha * (x[i] - prev);
        out[i] = prev;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_with_sma_then_alpha() {
        // n = 3: α = 0.5, seed = (2 + 4 + 6)/3 = 4; then 4 + 0.5·(8 − 4) = 6;
        // then 6 + 0.5·(0 − 6) = 3.
        let v = ema(&[2.0, 4.0, 6.0, 8.0, 0.0], 3);
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[4.0, 6.0, 3.0]);
    }
}
