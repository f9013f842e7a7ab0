//! TA-Lib's on-balance volume: a running total of volume, added on an up
//! close and subtracted on a down close; defined from bar 0 on.

/// TA-Lib's on-balance volume: the first bar's volume, then the running
/// total adding each bar's volume when its close is above the previous
/// close and subtracting it when below (unchanged on an equal close).
/// Defined from bar 0.
pub fn obv(close: &[f64], volume: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(close.len());
    let Some((&first, _)) = volume.split_first() else {
        return out;
    };
    let mut total = first;
    out.push(total);
    for t in 1..close.len() {
        if close[t] > close[t - 1] {
            total += volume[t];
        } else if close[t] < close[t - 1] {
            total -= volume[t];
        }
        out.push(total);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        let close = [10.0, 11.0, 11.0, 9.0];
        let volume = [100.0, 200.0, 300.0, 50.0];
        assert_eq!(obv(&close, &volume), [100.0, 300.0, 300.0, 250.0]);
    }
}
