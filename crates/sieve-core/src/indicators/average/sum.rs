//! Running sums: the sum of the last n values (TA-Lib SUM, defined from bar
//! n−1 on) and the cumulative sum from bar 0.

/// The sum of the last n values (TA-Lib SUM); first value at index n−1. A
/// running total in TA-Lib's order: add this bar, write, drop the oldest.
pub fn sum(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 || x.len() < n {
        return out;
    }
    let mut total: f64 = x[..n - 1].iter().sum();
    for i in n - 1..x.len() {
        total += x[i];
        out[i] = total;
        total -= x[i + 1 - n];
    }
    out
}

/// The running total of `x` from its first value (defined from bar 0).
pub fn cumsum(x: &[f64]) -> Vec<f64> {
    let mut total = 0.0;
    x.iter()
        .map(|v| {
            total += v;
            total
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        let v = sum(&[1.0, 2.0, 3.0, 4.0, 10.0], 3);
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[6.0, 9.0, 17.0]);
        assert_eq!(sum(&[5.0, 7.0], 1), vec![5.0, 7.0]);
        assert!(sum(&[1.0, 2.0], 3).iter().all(|x| x.is_nan()));
    }
}
