//! Where the close sits in its channel, 2·(close − LL)/(HH − LL) − 1: −1 at
//! the lowest low, +1 at the highest high, 0 when the channel is flat.

/// 2·(close − LL)/(HH − LL) − 1 over the channel (this bar included): −1 at
/// the low, +1 at the high; 0 when HH = LL.
pub fn channel_position(highest: &[f64], lowest: &[f64], close: &[f64]) -> Vec<f64> {
    highest
        .iter()
        .zip(lowest)
        .zip(close)
        .map(|((&h, &l), &c)| {
            let range = h - l;
            if range == 0.0 {
                0.0
            } else {
                2.0 * (c - l) / range - 1.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn position_in_channel() {
        let v = super::channel_position(
            &[10.0, 10.0, 10.0, 5.0, f64::NAN],
            &[0.0, 0.0, 0.0, 5.0, 1.0],
            &[0.0, 10.0, 7.5, 5.0, 2.0],
        );
        assert_eq!(&v[..4], &[-1.0, 1.0, 0.5, 0.0]);
        assert!(v[4].is_nan());
    }
}
