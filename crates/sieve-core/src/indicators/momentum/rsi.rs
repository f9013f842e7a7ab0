//! Wilder's Relative Strength Index (TA-Lib): 100·gain/(gain + loss) of the
//! Wilder-smoothed mean gain and loss of close-to-close changes; from bar n.

/// Wilder's RSI (TA-Lib). First value at index n from the mean gain and mean
/// loss of the first n close-to-close changes; then
/// avg = avg·(n−1)/n + this/n (the division folded into two constant
/// factors: the smoothing is a latency-bound chain, and this halves it; values
/// differ from a literal division by at most an ulp or two). RSI = 100·gain/(gain + loss): 100 when the mean
/// loss is 0, 50 when both are 0.
pub fn rsi(close: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; close.len()];
    if n == 0 || close.len() <= n {
        return out;
    }
    let (mut gain, mut loss) = (0.0, 0.0);
    for i in 1..=n {
        let d = close[i] - close[i - 1];
        if d > 0.0 {
            gain += d;
        } else {
            loss -= d;
        }
    }
    let nf = n as f64;
    gain /= nf;
    loss /= nf;
    let (keep, add) = ((nf - 1.0) / nf, 1.0 / nf);
    out[n] = rsi_value(gain, loss);
    for i in n + 1..close.len() {
        let d = close[i] - close[i - 1];
        gain = gain * keep + d.max(0.0) * add;
        loss = loss * keep + (-d).max(0.0) * add;
        out[i] = rsi_value(gain, loss);
    }
    out
}

fn rsi_value(gain: f64, loss: f64) -> f64 {
    if gain + loss == 0.0 {
        50.0
    } else {
        100.0 * gain / (gain + loss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilder_seeding_and_smoothing_by_hand() {
        // changes: +2, −1, +3, −2, +1 ; n = 3
        let close = [10.0, 12.0, 11.0, 14.0, 12.0, 13.0];
        let v = rsi(&close, 3);
        assert!(v[..3].iter().all(|x| x.is_nan()));
        // seed: gain = (2 + 3)/3 = 5/3, loss = 1/3 → RSI = 100·5/6
        assert!((v[3] - 500.0 / 6.0).abs() < 1e-12);
        // bar 4: gain = (5/3·2 + 0)/3 = 10/9, loss = (1/3·2 + 2)/3 = 8/9
        assert!((v[4] - 100.0 * 10.0 / 18.0).abs() < 1e-12);
        // bar 5: gain = (10/9·2 + 1)/3 = 29/27, loss = (8/9·2)/3 = 16/27
        assert!((v[5] - 100.0 * 29.0 / 45.0).abs() < 1e-12);
    }

    #[test]
    fn no_losses_is_100_and_flat_is_50() {
        assert_eq!(rsi(&[1.0, 2.0, 3.0, 4.0], 2)[2], 100.0);
        assert_eq!(rsi(&[5.0, 5.0, 5.0, 5.0], 2)[3], 50.0);
    }
}
