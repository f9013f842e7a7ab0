//! TA-Lib's stochastic oscillator (STOCH with SMAs): the close's place in
//! the n-bar high–low range, smoothed into %K, and %D, the SMA of %K.

use crate::indicators::average::sma;
use crate::indicators::channel::{highest, lowest};

/// TA-Lib's STOCH with simple moving averages: the fast %K over `n` bars
/// is 100 · (close − lowest low) / (highest high − lowest low), 0 where
/// the range is 0; %K ("slow K") is its `smooth`-bar SMA, %D the `d`-bar
/// SMA of %K. Returns (%K, %D); %K is defined from bar n + smooth − 2, %D
/// from bar n + smooth + d − 3 (TA-Lib starts both there).
pub fn stoch(
    high: &[f64],
    low: &[f64],
    close: &[f64],
    n: usize,
    smooth: usize,
    d: usize,
) -> (Vec<f64>, Vec<f64>) {
    let len = close.len();
    if n == 0 || smooth == 0 || d == 0 || len < n {
        return (vec![f64::NAN; len], vec![f64::NAN; len]);
    }
    let (top, bottom) = (highest(high, n), lowest(low, n));
    let fast: Vec<f64> = (n - 1..len)
        .map(|t| {
            let diff = (top[t] - bottom[t]) / 100.0;
            if diff != 0.0 {
                (close[t] - bottom[t]) / diff
            } else {
                0.0
            }
        })
        .collect();
    let slow = sma(&fast, smooth);
    let signal = sma(&slow[(smooth - 1).min(slow.len())..], d);
    let pad = |x: Vec<f64>| {
        let mut out = vec![f64::NAN; len - x.len()];
        out.extend(x);
        out
    };
    (pad(slow), pad(signal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_and_flat() {
        // n = 2: fast %K at bars 1..: (11 − 9)/(12 − 9) = 66.67,
        // (10 − 10)/(13 − 10) = 0, (13 − 10)/(14 − 10) = 75.
        let high = [10.0, 12.0, 13.0, 14.0];
        let low = [9.0, 10.0, 10.0, 12.0];
        let close = [9.5, 11.0, 10.0, 13.0];
        let (k, d) = stoch(&high, &low, &close, 2, 2, 2);
        assert!(k[..2].iter().all(|x| x.is_nan()));
        assert!((k[2] - (200.0 / 3.0) / 2.0).abs() < 1e-12, "{k:?}");
        assert!((k[3] - 37.5).abs() < 1e-12);
        assert!(d[..3].iter().all(|x| x.is_nan()));
        assert!((d[3] - (100.0 / 3.0 + 37.5) / 2.0).abs() < 1e-12, "{d:?}");
        let flat = [3.0; 4];
        assert_eq!(stoch(&flat, &flat, &flat, 2, 1, 1).0[1..], [0.0; 3]);
    }
}
