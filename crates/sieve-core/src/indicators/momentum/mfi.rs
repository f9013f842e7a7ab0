//! TA-Lib's Money Flow Index: 100 · positive / total money flow (typical
//! price × volume, signed by the typical price's move) over the last n bars;
//! defined from bar n on.

/// TA-Lib's Money Flow Index over `n` bars (`TA_MFI`, its current form):
/// the typical price (high + low + close) / 3 times the volume is a
/// bar's money flow, positive when the typical price rose from the bar
/// before and negative when it fell; MFI = 100 · positive / (positive +
/// negative) over the last n bars. A move within 1e-14 of the two prices'
/// size counts as none; a window with no money flow gives 0, and after n
/// bars without any the sums restart from exactly 0 (TA-Lib's guard
/// against rounding residue). Defined from bar n.
pub fn mfi(high: &[f64], low: &[f64], close: &[f64], volume: &[f64], n: usize) -> Vec<f64> {
    const EPSILON: f64 = 1e-14;
    let len = close.len();
    let mut out = vec![f64::NAN; len];
    if n == 0 || len <= n {
        return out;
    }
    let typical = |t: usize| (high[t] + low[t] + close[t]) / 3.0;
    let (mut positive, mut negative) = (vec![0.0; n], vec![0.0; n]);
    let (mut pos_sum, mut neg_sum) = (0.0f64, 0.0f64);
    let mut null_run = 0;
    let mut prev = typical(0);
    for t in 1..len {
        let slot = (t - 1) % n;
        if t > n {
            pos_sum -= positive[slot];
            neg_sum -= negative[slot];
        }
        let price = typical(t);
        let change = price - prev;
        let scale = price.abs() + prev.abs();
        prev = price;
        let flow = if change.abs() <= EPSILON * scale {
            0.0
        } else {
            price * volume[t]
        };
        let (p, m) = if change < 0.0 {
            (0.0, flow)
        } else {
            (flow, 0.0)
        };
        positive[slot] = p;
        negative[slot] = m;
        pos_sum += p;
        neg_sum += m;
        null_run = if flow == 0.0 { null_run + 1 } else { 0 };
        if null_run >= n {
            null_run = n;
            pos_sum = 0.0;
            neg_sum = 0.0;
        }
        if t >= n {
            let total = pos_sum + neg_sum;
            out[t] = if total <= 0.0 {
                0.0
            } else {
                100.0 * (pos_sum.clamp(0.0, total) / total)
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_and_flat() {
        // Typical prices 10, 11, 10.5, 12 (high = low = close) with
        // volumes 1, 2, 4, 1: flows +22, −42, +12.
        let p = [10.0, 11.0, 10.5, 12.0];
        let v = [1.0, 2.0, 4.0, 1.0];
        let m = mfi(&p, &p, &p, &v, 2);
        assert!(m[..2].iter().all(|x| x.is_nan()));
        assert!((m[2] - 100.0 * 22.0 / 64.0).abs() < 1e-12, "{m:?}");
        assert!((m[3] - 100.0 * 12.0 / 54.0).abs() < 1e-12);
        // No move at all: 0, not undefined.
        let flat = [5.0; 4];
        assert_eq!(mfi(&flat, &flat, &flat, &v, 2)[2..], [0.0, 0.0]);
    }
}
