//! The rolling population standard deviation (TA-Lib STDDEV), from running
//! sums about a moving origin so prices far from zero keep their precision.

/// Population standard deviation over the last `n` values, this one
/// included (TA-Lib STDDEV with one deviation); first value at index n−1.
///
/// Running sums of x − x₀ rather than of x: prices far from zero with a
/// small spread would otherwise cancel catastrophically in Σx²/n − (Σx/n)².
/// Every n bars the sums are recomputed exactly with x₀ moved to the
/// current value, so rounding cannot build up as prices wander (a flat
/// window then reads exactly 0). A variance rounded below zero reads as 0.
pub fn stdev(x: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 || x.len() < n {
        return out;
    }
    let nf = n as f64;
    // Sums of the window ending at `end` measured from its last value.
    let exact = |end: usize| {
        let origin = x[end];
        x[end + 1 - n..=end]
            .iter()
            .fold((origin, 0.0, 0.0), |(o, s, q), &v| {
                let d = v - o;
                (o, s + d, q + d * d)
            })
    };
    let (mut origin, mut sum, mut sum_sq) = exact(n - 1);
    let value = |sum: f64, sum_sq: f64| {
        let mean = sum / nf;
        (sum_sq / nf - mean * mean).max(0.0).sqrt()
    };
    out[n - 1] = value(sum, sum_sq);
    for i in n..x.len() {
        if (i + 1 - n).is_multiple_of(n) {
            (origin, sum, sum_sq) = exact(i);
        } else {
            let (new, old) = (x[i] - origin, x[i - n] - origin);
            sum += new - old;
            sum_sq += new * new - old * old;
        }
        out[i] = value(sum, sum_sq);
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    #[test]
    fn hand_computed() {
        // {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, population variance 4 → 2.
        let v = super::stdev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], 8);
        assert!(v[..7].iter().all(|x| x.is_nan()));
        assert!((v[7] - 2.0).abs() < 1e-12);
        assert_eq!(super::stdev(&[3.0, 3.0, 3.0], 2)[2], 0.0);
    }

    #[test]
    fn a_flat_stretch_after_a_long_walk_is_zero() {
        // 3,000 bars wandering from 10 to ~1,200, then 20 equal closes: the
        // last windows of 5 are flat, so their deviation is exactly 0.
        let mut x: Vec<f64> = (0..3000)
            .map(|i| 10.0 + i as f64 * 0.4 + (i as f64 * 0.7).sin())
            .collect();
        x.extend(std::iter::repeat_n(1234.5, 20));
        let v = super::stdev(&x, 5);
        assert!(
            v[x.len() - 10..].iter().all(|&s| s == 0.0),
            "{:?}",
            &v[x.len() - 10..]
        );
    }

    proptest! {
        #[test]
        fn matches_two_pass(x in prop::collection::vec(1000.0f64..1010.0, 1..120), n in 1usize..30) {
            let v = super::stdev(&x, n);
            for i in n - 1..x.len() {
                let w = &x[i + 1 - n..=i];
                let mean = w.iter().sum::<f64>() / n as f64;
                let var = w.iter().map(|a| (a - mean) * (a - mean)).sum::<f64>() / n as f64;
                prop_assert!((v[i] - var.sqrt()).abs() < 1e-6, "{} vs {}", v[i], var.sqrt());
            }
        }
    }
}
