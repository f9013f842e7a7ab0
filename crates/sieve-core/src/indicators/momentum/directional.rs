//! Wilder's directional movement (TA-Lib's PLUS_DI, MINUS_DI and ADX),
//! computed as TA-Lib computes them, operation for operation: the first
//! n − 1 bars' movements and true ranges summed, then smoothed as
//! s − s/n + x; each DI is 100 · DM / TR (0 where TR is within 1e-8 of
//! zero); DX = 100 · |−DI − +DI| / (−DI + +DI); the ADX starts as the mean
//! of the first n DX and then follows (ADX · (n − 1) + DX) / n, keeping its
//! value on a bar whose DX is undefined.

/// The three series of one window `n` (≥ 2).
struct Directional {
    plus: Vec<f64>,
    minus: Vec<f64>,
    adx: Vec<f64>,
}

fn directional(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Directional {
    let len = close.len();
    let mut out = Directional {
        plus: vec![f64::NAN; len],
        minus: vec![f64::NAN; len],
        adx: vec![f64::NAN; len],
    };
    if n < 2 || len <= n {
        return out;
    }
    let zero = |x: f64| -1e-8 < x && x < 1e-8;
    let (mut prev_high, mut prev_low, mut prev_close) = (high[0], low[0], close[0]);
    // One bar's +DM, −DM and true range, as TA-Lib's loops find them.
    let mut step = |t: usize| {
        let diff_p = high[t] - prev_high;
        prev_high = high[t];
        let diff_m = prev_low - low[t];
        prev_low = low[t];
        let (plus, minus) = if diff_m > 0.0 && diff_p < diff_m {
            (0.0, diff_m)
        } else if diff_p > 0.0 && diff_p > diff_m {
            (diff_p, 0.0)
        } else {
            (0.0, 0.0)
        };
        let mut range = prev_high - prev_low;
        let up = (prev_high - prev_close).abs();
        if up > range {
            range = up;
        }
        let down = (prev_low - prev_close).abs();
        if down > range {
            range = down;
        }
        prev_close = close[t];
        (plus, minus, range)
    };
    let (mut plus_dm, mut minus_dm, mut tr) = (0.0, 0.0, 0.0);
    for t in 1..n {
        let (p, m, r) = step(t);
        plus_dm += p;
        minus_dm += m;
        tr += r;
    }
    let nf = n as f64;
    let (mut sum_dx, mut adx) = (0.0, f64::NAN);
    for t in n..len {
        let (p, m, r) = step(t);
        plus_dm = plus_dm - plus_dm / nf + p;
        minus_dm = minus_dm - minus_dm / nf + m;
        tr = tr - tr / nf + r;
        let (plus_di, minus_di) = if zero(tr) {
            (0.0, 0.0)
        } else {
            (100.0 * (plus_dm / tr), 100.0 * (minus_dm / tr))
        };
        out.plus[t] = plus_di;
        out.minus[t] = minus_di;
        let sum = minus_di + plus_di;
        let dx = (!zero(tr) && !zero(sum)).then(|| 100.0 * ((minus_di - plus_di).abs() / sum));
        if t < 2 * n {
            sum_dx += dx.unwrap_or(0.0);
            if t == 2 * n - 1 {
                adx = sum_dx / nf;
                out.adx[t] = adx;
            }
        } else {
            if let Some(dx) = dx {
                adx = (adx * (nf - 1.0) + dx) / nf;
            }
            out.adx[t] = adx;
        }
    }
    out
}

/// +DI over `n` bars, defined from bar n.
pub fn plus_di(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Vec<f64> {
    directional(high, low, close, n).plus
}

/// −DI over `n` bars, defined from bar n.
pub fn minus_di(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Vec<f64> {
    directional(high, low, close, n).minus
}

/// ADX over `n` bars, defined from bar 2n − 1.
pub fn adx(high: &[f64], low: &[f64], close: &[f64], n: usize) -> Vec<f64> {
    directional(high, low, close, n).adx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_on_a_steady_rise() {
        // Highs and lows up 1 a bar, range 2: +DM 1, −DM 0, TR 2 each bar.
        // n = 2: sums after bar 1: +DM 1, TR 2; bar 2: 1 − 0.5 + 1 = 1.5,
        // 2 − 1 + 2 = 3 → +DI 50, −DI 0, DX 100; the ADX starts at bar 3
        // as the mean of two DX of 100.
        let high: Vec<f64> = (0..6).map(|i| 10.0 + i as f64).collect();
        let low: Vec<f64> = high.iter().map(|h| h - 2.0).collect();
        let close: Vec<f64> = high.iter().map(|h| h - 1.0).collect();
        let p = plus_di(&high, &low, &close, 2);
        assert!(p[1].is_nan());
        assert!((p[2] - 50.0).abs() < 1e-12, "{p:?}");
        assert_eq!(minus_di(&high, &low, &close, 2)[2], 0.0);
        let a = adx(&high, &low, &close, 2);
        assert!(a[2].is_nan() && (a[3] - 100.0).abs() < 1e-12, "{a:?}");
    }
}
