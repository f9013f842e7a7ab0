//! The RSI as a momentum term in [−1, 1]: (RSI − 50) / 50.

/// (RSI − 50) / 50: momentum in [−1, 1].
pub fn rsi_score(rsi: &[f64]) -> Vec<f64> {
    rsi.iter().map(|&r| (r - 50.0) / 50.0).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn maps_0_50_100_to_minus1_0_1() {
        assert_eq!(
            super::rsi_score(&[0.0, 50.0, 100.0, 75.0]),
            vec![-1.0, 0.0, 1.0, 0.5]
        );
    }
}
