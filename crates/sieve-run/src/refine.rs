//! Zooming the grid in (DESIGN §1, issue 5): each swept parameter's range
//! becomes the min..max of the best verified candidates, widened by one
//! current step, with a finer step (floats: half; ints: half, at least 1),
//! clipped to the original bounds. The new values are anchored at the best
//! candidate's value, so the best is always in the next grid.

use sieve_core::grid::{round_sig, Axis};
use sieve_core::strategy::{ParamKind, Strategy};

/// The next grid's axes, or `None` when no axis changes (nothing left to
/// refine). `top` holds the parameter sets of the best verified candidates,
/// best first (strategy order).
pub fn refine(
    strategy: &dyn Strategy,
    current: &[Axis],
    original: &[Axis],
    top: &[Vec<f64>],
) -> Option<Vec<Axis>> {
    let best = top.first()?;
    let next: Vec<Axis> = current
        .iter()
        .zip(original)
        .map(|(axis, orig)| {
            if axis.values.len() < 2 {
                return axis.clone();
            }
            let int = strategy.params()[axis.param].kind == ParamKind::Int;
            let step = min_gap(&axis.values);
            let (lo_orig, hi_orig) = bounds(&orig.values);
            let (mut lo, mut hi) = bounds(&top.iter().map(|p| p[axis.param]).collect::<Vec<_>>());
            lo = (lo - step).max(lo_orig);
            hi = (hi + step).min(hi_orig);
            let fine = if int {
                (step / 2.0).floor().max(1.0)
            } else {
                step / 2.0
            };
            let anchor = best[axis.param];
            let tol = 1e-9 * fine;
            let k_lo = ((lo - anchor) / fine - tol).ceil() as i64;
            let k_hi = ((hi - anchor) / fine + tol).floor() as i64;
            let values = (k_lo..=k_hi)
                .map(|k| round_sig(anchor + k as f64 * fine))
                .collect();
            Axis {
                param: axis.param,
                name: axis.name.clone(),
                values,
            }
        })
        .collect();
    (next != current).then_some(next)
}

fn bounds(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// The current step: the smallest gap between neighbouring values.
fn min_gap(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sieve_core::strategy::lookup;

    fn axis(param: usize, name: &str, values: &[f64]) -> Axis {
        Axis {
            param,
            name: name.into(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn int_axis_by_hand() {
        let s = lookup("sma_cross").unwrap();
        let cur = vec![
            axis(0, "fast", &[10.0, 20.0, 30.0, 40.0, 50.0]),
            axis(1, "slow", &[100.0]),
        ];
        // best fast 30, others at 20: range 20..30 → 10..40, step 10 → 5.
        let top = vec![vec![30.0, 100.0], vec![20.0, 100.0]];
        let next = refine(s, &cur, &cur, &top).unwrap();
        assert_eq!(
            next[0].values,
            vec![10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0]
        );
        assert_eq!(next[1].values, vec![100.0], "a fixed parameter stays fixed");
    }

    #[test]
    fn odd_int_step_halves_down_and_keeps_the_best() {
        let s = lookup("sma_cross").unwrap();
        let cur = vec![axis(0, "fast", &[5.0, 10.0, 15.0, 20.0, 25.0, 30.0])];
        let top = vec![vec![25.0, 100.0], vec![15.0, 100.0]];
        // 15..25 widened by 5 → 10..30; step 5 → 2, anchored at 25.
        let next = refine(s, &cur, &cur, &top).unwrap();
        assert_eq!(
            next[0].values,
            vec![11.0, 13.0, 15.0, 17.0, 19.0, 21.0, 23.0, 25.0, 27.0, 29.0]
        );
    }

    #[test]
    fn float_axis_and_clipping_to_original_bounds() {
        let s = lookup("rsi_reversion").unwrap();
        let orig = vec![axis(1, "lower", &[10.0, 20.0, 30.0, 40.0])];
        let top = vec![vec![14.0, 10.0, 70.0], vec![14.0, 20.0, 70.0]];
        // 10..20 widened by 10 → 0..30, clipped to 10..30; step 5 from 10.
        let next = refine(s, &orig, &orig, &top).unwrap();
        assert_eq!(next[0].values, vec![10.0, 15.0, 20.0, 25.0, 30.0]);
        let cur = vec![axis(1, "lower", &[0.3, 0.4, 0.5, 0.6])];
        let orig = vec![axis(1, "lower", &[0.1, 0.9])];
        let top = vec![vec![14.0, 0.5, 70.0], vec![14.0, 0.4, 70.0]];
        let next = refine(s, &cur, &orig, &top).unwrap();
        assert_eq!(next[0].values, vec![0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6]);
    }

    #[test]
    fn nothing_left_to_refine() {
        let s = lookup("sma_cross").unwrap();
        let cur = vec![axis(0, "fast", &[9.0, 10.0, 11.0])];
        let top = vec![vec![10.0, 100.0]];
        assert_eq!(refine(s, &cur, &cur, &top), None);
    }
}
