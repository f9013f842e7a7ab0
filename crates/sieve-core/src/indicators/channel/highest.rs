//! The highest value of the last n bars, this one included (TA-Lib MAX, the
//! Donchian upper band); defined from bar n−1 on.

/// Highest value over the last `n` bars including this one (TA-Lib MAX).
pub fn highest(x: &[f64], n: usize) -> Vec<f64> {
    super::rolling_extreme(x, n, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_current_bar_and_drops_old_ones() {
        let v = highest(&[1.0, 5.0, 2.0, 2.0, 1.0, 7.0], 3);
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[5.0, 5.0, 2.0, 7.0]);
    }
}
