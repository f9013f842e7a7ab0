//! Choosing from a plateau: each verified candidate ranked by its own
//! score-window objective aggregated with its axis neighbours' (one step
//! up and one down on each swept axis of the grid it came from), every
//! neighbour evaluated exactly. A spike whose neighbours do badly loses to
//! a candidate on a broad ridge.
//!
//! Definitions (docs/metrics.md, "Choosing the best"):
//! - a neighbour outside the grid (past an axis' end) or excluded by the
//!   constraints is left out: the aggregate is over the candidate and the
//!   neighbours that exist;
//! - an undefined neighbour objective (NaN: no trade, below `min_trades`)
//!   counts as −∞, a cliff; so `mean` and `min` of such a neighbourhood are
//!   −∞;
//! - a candidate with an undefined objective has an undefined aggregate and
//!   ranks last;
//! - ties: the higher own objective, then the lower grid index.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use crate::outcome::Ended;
use crate::settings::NeighbourAggregate;
use sieve_core::grid::{Axis, ParamSpace};
use sieve_core::metrics::rank_order;
use sieve_core::Result;

use crate::candidates::Candidate;
use crate::verify::Verified;
use crate::Study;

/// One verified candidate's neighbourhood.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Neighbourhood {
    /// The aggregate of the candidate's objective and its neighbours'.
    pub aggregate: f64,
    /// Neighbours on the grid (constraints holding).
    pub neighbours: usize,
}

/// The axis neighbours of `params` on `space`: for each swept axis, the
/// values one step below and above, with the constraints holding. Past
/// the end of a zoomed axis, the point one of its steps further, while it
/// stays within `bounds` (the original grid's axes): a zoom window's edge
/// is not the parameter's.
pub fn neighbours(space: &ParamSpace, params: &[f64], bounds: &[Axis]) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    for axis in space.axes.iter().filter(|a| a.values.len() > 1) {
        let at = params[axis.param];
        // The next value below and above, whatever order a `values` list
        // has.
        let mut values = axis.values.clone();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|a, b| a == b);
        // By value: -0.0 and 0.0 are one grid point (files write both as 0).
        let Some(i) = values.iter().position(|&v| v == at) else {
            continue;
        };
        let (lo, hi) = bounds
            .iter()
            .find(|b| b.param == axis.param)
            .map_or((at, at), |b| {
                let lo = b.values.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = b.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lo, hi)
            });
        let within = |v: f64| {
            let tol = 1e-9 * lo.abs().max(hi.abs()).max(1.0);
            v >= lo - tol && v <= hi + tol
        };
        let n = values.len();
        if n < 2 {
            continue;
        }
        let down = match i {
            0 => Some(at - (values[1] - values[0])).filter(|&v| within(v)),
            _ => Some(values[i - 1]),
        };
        let up = match i + 1 == n {
            true => Some(at + (values[n - 1] - values[n - 2])).filter(|&v| within(v)),
            false => Some(values[i + 1]),
        };
        for v in [down, up].into_iter().flatten() {
            let mut q = params.to_vec();
            q[axis.param] = v;
            if space.constraints.iter().all(|c| c.holds(&q)) {
                out.push(q);
            }
        }
    }
    out
}

fn key(params: &[f64]) -> Vec<u64> {
    params.iter().map(|p| p.to_bits()).collect()
}

/// The neighbourhood of every row of `rows` (verified on `study`, whose
/// space is the grid they came from), in the rows' order; neighbours not
/// among the rows are verified here: `to_verify` is told how many before
/// they start, `tick` once per neighbour done. `None` when `cancel`
/// stopped it.
#[allow(clippy::too_many_arguments)]
pub fn neighbourhoods(
    study: &Study,
    bounds: &[Axis],
    rows: &[Verified],
    how: NeighbourAggregate,
    threads: usize,
    cancel: Option<&AtomicBool>,
    to_verify: &mut dyn FnMut(usize),
    tick: &(dyn Fn() + Sync),
) -> Result<Ended<Vec<Neighbourhood>>> {
    let space = study.space();
    let mut scores: HashMap<Vec<u64>, f64> = rows
        .iter()
        .map(|r| (key(&r.candidate.params), r.score))
        .collect();
    let around: Vec<Vec<Vec<f64>>> = rows
        .iter()
        .map(|r| neighbours(space, &r.candidate.params, bounds))
        .collect();
    // Each neighbour not verified yet, once, in a fixed order.
    let mut missing: Vec<Vec<f64>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for q in around.iter().flatten() {
        if !scores.contains_key(&key(q)) && seen.insert(key(q)) {
            missing.push(q.clone());
        }
    }
    if !missing.is_empty() {
        to_verify(missing.len());
        let candidates = missing
            .into_iter()
            .map(|params| Candidate {
                line: 0,
                grid_index: space.index_of(&params).unwrap_or(u64::MAX),
                screen_rank: 0,
                params,
            })
            .collect();
        let done = match crate::verify::verify(study, candidates, threads, cancel, tick)? {
            Ended::Done(done) => done,
            Ended::Stopped(stop) => return Ok(Ended::Stopped(stop)),
        };
        for r in done.rows {
            scores.insert(key(&r.candidate.params), r.score);
        }
    }
    Ok(Ended::Done(
        rows.iter()
            .zip(&around)
            .map(|(r, near)| {
                let values = near
                    .iter()
                    .map(|q| scores.get(&key(q)).copied().unwrap_or(f64::NAN));
                Neighbourhood {
                    aggregate: aggregate(r.score, values, how),
                    neighbours: near.len(),
                }
            })
            .collect(),
    ))
}

/// The aggregate of `own` and its neighbours' objectives (see the module
/// docs for undefined values).
pub fn aggregate(own: f64, neighbours: impl Iterator<Item = f64>, how: NeighbourAggregate) -> f64 {
    if own.is_nan() {
        return f64::NAN;
    }
    let all: Vec<f64> = std::iter::once(own)
        .chain(neighbours.map(|v| if v.is_nan() { f64::NEG_INFINITY } else { v }))
        .collect();
    // A cliff anywhere makes the neighbourhood −∞, whatever the rest
    // (+∞ and −∞ have no mean).
    if all.contains(&f64::NEG_INFINITY) {
        return f64::NEG_INFINITY;
    }
    match how {
        NeighbourAggregate::Mean => all.iter().sum::<f64>() / all.len() as f64,
        NeighbourAggregate::Min => all.iter().copied().fold(f64::INFINITY, f64::min),
    }
}

/// The plateau ranking of `rows` with their `hoods`: row positions, best
/// first (the higher aggregate, then the higher own objective, then the
/// lower grid index; undefined last).
pub fn ranking(rows: &[Verified], hoods: &[Neighbourhood]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (&rows[a], &rows[b]);
        let by_aggregate = rank_order(hoods[a].aggregate, 0, hoods[b].aggregate, 0);
        by_aggregate.then_with(|| {
            rank_order(
                ra.score,
                ra.candidate.grid_index,
                rb.score,
                rb.candidate.grid_index,
            )
        })
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use sieve_core::grid::Constraint;
    use sieve_core::strategy::registry;

    fn space(constraints: &[&str]) -> ParamSpace {
        let strategy = registry()
            .iter()
            .find(|s| s.name() == "sma_cross")
            .copied()
            .expect("sma_cross");
        let axes = vec![
            Axis {
                name: "fast".into(),
                param: 0,
                values: vec![5.0, 10.0, 15.0],
            },
            Axis {
                name: "slow".into(),
                param: 1,
                values: vec![20.0, 30.0, 40.0, 50.0],
            },
        ];
        let constraints = constraints
            .iter()
            .map(|c| Constraint::parse(c, "sma_cross", strategy.params()).unwrap())
            .collect();
        ParamSpace::new(strategy.params(), axes, constraints).unwrap()
    }

    #[test]
    fn neighbours_step_one_value_each_way_and_stop_at_edges_and_constraints() {
        let s = space(&[]);
        // Inside: four neighbours.
        assert_eq!(
            neighbours(&s, &[10.0, 30.0], &s.axes),
            vec![
                vec![5.0, 30.0],
                vec![15.0, 30.0],
                vec![10.0, 20.0],
                vec![10.0, 40.0]
            ]
        );
        // A corner: two.
        assert_eq!(
            neighbours(&s, &[5.0, 20.0], &s.axes),
            vec![vec![10.0, 20.0], vec![5.0, 30.0]]
        );
        // A constraint removes what it excludes.
        let s = space(&["fast <= 10"]);
        assert_eq!(
            neighbours(&s, &[10.0, 30.0], &s.axes),
            vec![vec![5.0, 30.0], vec![10.0, 20.0], vec![10.0, 40.0]]
        );
    }

    #[test]
    fn a_zoom_windows_edge_is_not_the_parameters() {
        // A zoomed grid (slow 30, 35, 40) inside the original 20..50: its
        // edges still have neighbours one zoomed step further; the
        // original grid's edge (fast 5) does not.
        let original = space(&[]);
        let mut zoomed = original.clone();
        zoomed.axes[1].values = vec![30.0, 35.0, 40.0];
        assert_eq!(
            neighbours(&zoomed, &[5.0, 30.0], &original.axes),
            vec![vec![10.0, 30.0], vec![5.0, 25.0], vec![5.0, 35.0]]
        );
        assert_eq!(
            neighbours(&zoomed, &[5.0, 40.0], &original.axes),
            vec![vec![10.0, 40.0], vec![5.0, 35.0], vec![5.0, 45.0]]
        );
    }

    #[test]
    fn a_values_list_in_any_order_has_its_neighbours_by_value() {
        // fast listed 15, 5, 10: 10's neighbours are 5 and 15, and 15 is
        // the top edge (nothing past it on the first grid).
        let mut s = space(&[]);
        s.axes[0].values = vec![15.0, 5.0, 10.0];
        assert_eq!(
            neighbours(&s, &[10.0, 20.0], &s.axes),
            vec![vec![5.0, 20.0], vec![15.0, 20.0], vec![10.0, 30.0]]
        );
        assert_eq!(
            neighbours(&s, &[15.0, 20.0], &s.axes),
            vec![vec![10.0, 20.0], vec![15.0, 30.0]]
        );
    }

    #[test]
    fn aggregates_by_hand() {
        let mean = NeighbourAggregate::Mean;
        let min = NeighbourAggregate::Min;
        assert_eq!(aggregate(2.0, [1.0, 0.0].into_iter(), mean), 1.0);
        assert_eq!(aggregate(2.0, [1.0, 0.0].into_iter(), min), 0.0);
        // No neighbour: the candidate alone.
        assert_eq!(aggregate(2.0, std::iter::empty(), mean), 2.0);
        // An undefined neighbour is a cliff; an undefined candidate is
        // undefined.
        assert_eq!(
            aggregate(2.0, [f64::NAN].into_iter(), mean),
            f64::NEG_INFINITY
        );
        assert!(aggregate(f64::NAN, [1.0].into_iter(), min).is_nan());
        // +∞ beside a cliff is still a cliff.
        assert_eq!(
            aggregate(f64::INFINITY, [f64::NAN].into_iter(), mean),
            f64::NEG_INFINITY
        );
    }

    #[test]
    fn ranking_by_aggregate_then_own_score_then_index_undefined_last() {
        let metrics = sieve_core::metrics::Metrics {
            total_return: 0.0,
            cagr: 0.0,
            max_drawdown: 0.0,
            calmar: 0.0,
            sharpe: 0.0,
            sortino: 0.0,
            trades: 0,
            win_rate: 0.0,
            profit_factor: 0.0,
            avg_trade: 0.0,
            exposure: 0.0,
        };
        let row = |score: f64, grid_index: u64| Verified {
            candidate: Candidate {
                line: 0,
                grid_index,
                screen_rank: 0,
                params: vec![grid_index as f64],
            },
            metrics,
            score,
            full_score: f64::NAN,
            holdout_score: f64::NAN,
            scores: Vec::new(),
        };
        let hood = |aggregate: f64| Neighbourhood {
            aggregate,
            neighbours: 2,
        };
        // The argmax (2.0) has the weakest neighbourhood; two tie at 0.9
        // and 1.0 own score: the lower grid index first; a candidate with
        // an undefined aggregate last; a higher own score breaks a tie of
        // aggregates.
        let rows = [
            row(2.0, 5),
            row(1.0, 3),
            row(1.0, 1),
            row(f64::NAN, 0),
            row(1.5, 9),
        ];
        let hoods = [hood(0.5), hood(0.9), hood(0.9), hood(f64::NAN), hood(0.5)];
        assert_eq!(ranking(&rows, &hoods), vec![2, 1, 0, 4, 3]);
    }
}
