//! The simple moving average: the mean of the last n values (defined from
//! bar n−1 on), kept as a running sum so each value costs O(1).

/// Simple moving average; first value at index n−1 (TA-Lib). A running sum,
/// as TA-Lib does, so each value costs O(1).
pub fn sma(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 || x.len() < n {
        return out;
    }
    if n == 1 {
        // Exactly x (a running sum would leave rounding residue).
        return x.to_vec();
    }
    let mut sum: f64 = x[..n].iter().sum();
    out[n - 1] = sum / n as f64;
    for i in n..x.len() {
        sum += x[i] - x[i - n];
        out[i] = sum / n as f64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        let v = sma(&[1.0, 2.0, 3.0, 4.0, 10.0], 3);
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[2.0, 3.0, 17.0 / 3.0]);
        assert_eq!(sma(&[5.0, 7.0], 1), vec![5.0, 7.0]);
        assert!(sma(&[1.0, 2.0], 3).iter().all(|x| x.is_nan()));
    }
}
