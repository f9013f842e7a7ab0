//! The zoom-in ([`Zoom`]), the optimize loop's search since the start: the
//! study's grid first, then each iteration's grid zoomed in around its best
//! verified candidates, every combination of it screened.
//!
//! Per swept parameter, the next range is the hull
//! (min..max) of the best verified candidates with a finite score, widened
//! by one current step on each side and clipped to the original bounds.
//! Steps are halved (whole numbers: floor, at least 1) only while the grid
//! stays within `max_combinations`; when halving every axis would not fit,
//! the axes whose range shrank most are halved first. Values are anchored
//! at the best candidate's, so the best is always on the next grid, and no
//! next grid has more than `max_combinations` combinations.

use sieve_core::grid::{grid_value, Axis};
use sieve_core::strategy::{ParamKind, Strategy};
use sieve_core::Result;

use super::{History, Next, Proposal, Search};

/// The zoom-in: the whole first grid, then the last grid refined.
#[derive(Debug, Clone, Copy, Default)]
pub struct Zoom;

impl Search for Zoom {
    fn propose(&self, history: &History<'_>) -> Result<Next> {
        let study = history.study;
        let axes = match history.iterations.last() {
            None => Some(history.original.to_vec()),
            Some(prev) => {
                let max = study
                    .settings()
                    .max_combinations
                    .unwrap_or(history.iterations[0].grid_size);
                let current = study.axes_of(&prev.grid)?;
                let from = prev.verify.as_ref().map_or(&[][..], |v| &v.refine_from);
                refine(study.strategy(), &current, history.original, from, max)
            }
        };
        Ok(match axes {
            Some(axes) => Next::Try(Proposal {
                axes,
                indices: None,
                biased: false,
            }),
            None => Next::Exhausted,
        })
    }
}

/// One swept axis of the next grid: its range and its two possible steps.
struct Plan {
    lo: f64,
    hi: f64,
    anchor: f64,
    step: f64,
    fine: f64,
    /// New range / current range: small = the candidates agree.
    shrink: f64,
}

impl Plan {
    fn values(&self, halved: bool) -> Vec<f64> {
        let step = if halved { self.fine } else { self.step };
        let tol = 1e-9 * step;
        let k_lo = ((self.lo - self.anchor) / step - tol).ceil() as i64;
        let k_hi = ((self.hi - self.anchor) / step + tol).floor() as i64;
        (k_lo..=k_hi)
            .map(|k| grid_value(self.anchor, k, step))
            .collect()
    }
}

/// The next grid's axes, or `None` when nothing changes (nothing left to
/// refine) or no grid within `max_combinations` holds the candidates'
/// range. `top` holds the parameter sets of the best verified candidates
/// with a finite score, best first (strategy order).
pub fn refine(
    strategy: &dyn Strategy,
    current: &[Axis],
    original: &[Axis],
    top: &[Vec<f64>],
    max_combinations: u64,
) -> Option<Vec<Axis>> {
    let best = top.first()?;
    let plans: Vec<Option<Plan>> = current
        .iter()
        .zip(original)
        .map(|(axis, orig)| {
            if axis.values.len() < 2 {
                return None; // a fixed parameter stays fixed
            }
            let int = strategy.params()[axis.param].kind == ParamKind::Int;
            let step = min_gap(&axis.values);
            let (lo_orig, hi_orig) = bounds(&orig.values);
            let (lo_top, hi_top) = bounds(&top.iter().map(|p| p[axis.param]).collect::<Vec<_>>());
            let lo = (lo_top - step).max(lo_orig);
            let hi = (hi_top + step).min(hi_orig);
            let (lo_cur, hi_cur) = bounds(&axis.values);
            let fine = if int {
                (step / 2.0).floor().max(1.0)
            } else {
                step / 2.0
            };
            Some(Plan {
                lo,
                hi,
                anchor: best[axis.param],
                step,
                fine,
                shrink: (hi - lo) / (hi_cur - lo_cur),
            })
        })
        .collect();
    let size = |halved: &[bool]| -> u64 {
        plans
            .iter()
            .zip(current)
            .zip(halved)
            .map(|((p, a), &h)| p.as_ref().map_or(a.values.len(), |p| p.values(h).len()) as u64)
            .fold(1u64, u64::saturating_mul)
    };
    // Halve every axis if that fits; else the most-shrunk axes first.
    let mut halved = vec![false; plans.len()];
    if size(&halved) > max_combinations {
        return None;
    }
    let mut order: Vec<usize> = (0..plans.len()).filter(|&i| plans[i].is_some()).collect();
    order.sort_by(|&a, &b| {
        let shrink = |i: usize| plans[i].as_ref().map_or(f64::INFINITY, |p| p.shrink);
        shrink(a).total_cmp(&shrink(b)).then(a.cmp(&b))
    });
    for i in order {
        halved[i] = true;
        if size(&halved) > max_combinations {
            halved[i] = false;
        }
    }
    let next: Vec<Axis> = current
        .iter()
        .zip(&plans)
        .zip(&halved)
        .map(|((axis, plan), &h)| Axis {
            param: axis.param,
            name: axis.name.clone(),
            values: plan
                .as_ref()
                .map_or_else(|| axis.values.clone(), |p| p.values(h)),
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
        let next = refine(s, &cur, &cur, &top, u64::MAX).unwrap();
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
        let next = refine(s, &cur, &cur, &top, u64::MAX).unwrap();
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
        let next = refine(s, &orig, &orig, &top, u64::MAX).unwrap();
        assert_eq!(next[0].values, vec![10.0, 15.0, 20.0, 25.0, 30.0]);
        let cur = vec![axis(1, "lower", &[0.3, 0.4, 0.5, 0.6])];
        let orig = vec![axis(1, "lower", &[0.1, 0.9])];
        let top = vec![vec![14.0, 0.5, 70.0], vec![14.0, 0.4, 70.0]];
        let next = refine(s, &cur, &orig, &top, u64::MAX).unwrap();
        assert_eq!(next[0].values, vec![0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6]);
    }

    #[test]
    fn a_zero_on_the_grid_stays_zero_so_a_repeat_is_nothing_to_refine() {
        let s = lookup("rsi_reversion").unwrap();
        let cur = vec![axis(1, "lower", &[-0.2, -0.1, 0.0, 0.1, 0.2])];
        // Hull −0.1..0.1 widened by 0.1 → −0.2..0.2, halved to 0.05,
        // anchored at 0.1: 0.1 − 2 × 0.05 is 0 (not 1.4e−17).
        let top = vec![vec![14.0, 0.1, 70.0], vec![14.0, -0.1, 70.0]];
        let next = refine(s, &cur, &cur, &top, u64::MAX).unwrap();
        assert!(next[0].values.contains(&0.0), "{:?}", next[0].values);
        // Capped at the current size, the same grid comes back: None.
        assert_eq!(refine(s, &cur, &cur, &top, 5), None);
    }

    #[test]
    fn nothing_left_to_refine() {
        let s = lookup("sma_cross").unwrap();
        let cur = vec![axis(0, "fast", &[9.0, 10.0, 11.0])];
        let top = vec![vec![10.0, 100.0]];
        assert_eq!(refine(s, &cur, &cur, &top, u64::MAX), None);
    }

    #[test]
    fn the_grid_never_grows_past_max_combinations() {
        // The built-in example's defect: candidates spread over the whole
        // range, so halving every step multiplies the grid by ~2 per axis.
        let s = lookup("sma_cross").unwrap();
        let cur = vec![
            axis(0, "fast", &[10.0, 20.0, 30.0, 40.0, 50.0]),
            axis(1, "slow", &[100.0, 120.0, 140.0, 160.0, 180.0]),
        ];
        let top = vec![vec![30.0, 140.0], vec![10.0, 100.0], vec![50.0, 180.0]];
        // Nothing shrank; halving both gives 9 × 9 = 81 > 25: no halving.
        assert_eq!(refine(s, &cur, &cur, &top, 25), None);
        // 45 fits one halved axis (9 × 5); both are tied on shrink (1.0),
        // so the first declared is halved.
        let next = refine(s, &cur, &cur, &top, 45).unwrap();
        assert_eq!(next[0].values.len(), 9);
        assert_eq!(next[1].values, cur[1].values);
    }

    #[test]
    fn the_axis_that_shrank_most_is_halved_first() {
        let s = lookup("sma_cross").unwrap();
        let cur = vec![
            axis(
                0,
                "fast",
                &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0],
            ),
            axis(1, "slow", &[100.0, 120.0, 140.0, 160.0, 180.0]),
        ];
        // fast agrees on 40..50 (→ 30..60, shrink 30/80); slow spreads
        // 100..180 (→ 100..180, shrink 1).
        let top = vec![vec![40.0, 140.0], vec![50.0, 100.0], vec![40.0, 180.0]];
        // Both halved: fast 30..60 step 5 = 7 values, slow step 10 = 9: 63.
        assert_eq!(refine(s, &cur, &cur, &top, 63).unwrap()[1].values.len(), 9);
        // 40 fits only one: fast (shrank most) 7 × 5 = 35.
        let next = refine(s, &cur, &cur, &top, 40).unwrap();
        assert_eq!(
            next[0].values,
            vec![30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0]
        );
        assert_eq!(next[1].values, cur[1].values);
        let size: usize = next.iter().map(|a| a.values.len()).product();
        assert!(size as u64 <= 40);
        // The best (fast 40, slow 140) stays on the grid.
        assert!(next[0].values.contains(&40.0) && next[1].values.contains(&140.0));
    }
}
