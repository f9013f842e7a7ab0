//! The lowest value of the last n bars, this one included (TA-Lib MIN, the
//! Donchian lower band); defined from bar n−1 on.

/// Lowest value over the last `n` bars including this one (TA-Lib MIN).
pub fn lowest(x: &[f64], n: usize) -> Vec<f64> {
    super::rolling_extreme(x, n, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_current_bar_and_drops_old_ones() {
        let v = lowest(&[4.0, 1.0, 3.0, 3.0, 5.0, 0.5], 3);
        assert!(v[0].is_nan() && v[1].is_nan());
        assert_eq!(&v[2..], &[1.0, 1.0, 3.0, 0.5]);
    }
}
