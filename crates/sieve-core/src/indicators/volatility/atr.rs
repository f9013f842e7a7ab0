//! The true range and Wilder's Average True Range (TA-Lib): the RMA of the
//! true range, which starts at bar 1, so the ATR is defined from bar n on.

/// True range from bar 1 on: max(high, prev close) − min(low, prev close).
/// Bar 0 has none (NaN), as in TA-Lib.
pub fn true_range(high: &[f64], low: &[f64], close: &[f64]) -> Vec<f64> {
    let mut tr = vec![f64::NAN; close.len()];
    for i in 1..close.len() {
        tr[i] = high[i].max(close[i - 1]) - low[i].min(close[i - 1]);
    }
    tr
}

/// Wilder's ATR (TA-Lib): first value at bar n = mean of TR over bars 1..=n;
/// then ATR_t = (ATR_{t−1}·(n−1) + TR_t)/n: Wilder's average
/// ([`rma`](crate::indicators::average::rma)) of the true range, which
/// starts at bar 1.
pub fn atr(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Vec<f64> {
    if n == 0 || close.len() <= n {
        return vec![f64::NAN; close.len()];
    }
    let tr = true_range(high, low, close);
    let mut out = vec![f64::NAN];
    out.extend(crate::indicators::average::rma(&tr[1..], n));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bar_has_no_true_range_and_gaps_count() {
        let high = [10.0, 11.0, 15.0, 12.0];
        let low = [9.0, 10.0, 13.0, 8.0];
        let close = [9.5, 10.5, 14.0, 9.0];
        let tr = true_range(&high, &low, &close);
        assert!(tr[0].is_nan());
        // bar 1: max(11, 9.5) − min(10, 9.5) = 1.5
        // bar 2: gap up: max(15, 10.5) − min(13, 10.5) = 4.5
        // bar 3: max(12, 14) − min(8, 14) = 6
        assert_eq!(&tr[1..], &[1.5, 4.5, 6.0]);
        let a = atr(&high, &low, &close, 2);
        assert!(a[0].is_nan() && a[1].is_nan());
        // seed at bar 2 = (1.5 + 4.5)/2 = 3; bar 3 = (3·1 + 6)/2 = 4.5
        assert_eq!(&a[2..], &[3.0, 4.5]);
    }
}
