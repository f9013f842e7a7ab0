//! The evolutionary search ([`Evolve`], `search.method = "evolve"`): the
//! first generation is the random sampler's first batch (a uniform sample,
//! which also gives the Deflated Sharpe its V); each later one breeds
//! children from the elite — the best screened combinations of every
//! generation so far — in the grid's coordinates (each axis's value
//! positions, scaled to 0..1), until `evaluations` are screened.
//!
//! A child is a parent from the elite (picked with rank weights, the best
//! most often), a quarter of the time crossed with a second parent axis by
//! axis, moved by a normal step whose covariance is the elite's (halved,
//! and at least one grid step on each axis), reflected into the grid and
//! rounded to its nearest point. The elite's spread sets the step: wide
//! while the good region is wide, one grid step once it has converged,
//! so the search ends as a local search at the grid's resolution. Once
//! that neighbourhood is screened (under a quarter of a round of children
//! new), the step doubles, up to 64 times, and the search looks further
//! out. A tenth of each generation stays uniform, so a better region
//! elsewhere can still enter the elite. Children never repeat a screened
//! combination and never break the constraints (those are redrawn, up to
//! 16 tries per child wanted; the rest of the batch is then uniform).
//!
//! Like every search it proposes from the history alone: the elite is
//! read from the earlier generations' `sweep.csv` and the draws are seeded
//! by `seed` and the generation, so a resumed run proposes what an
//! uninterrupted one does.

use sieve_core::grid::Axis;
use sieve_core::Result;

use super::random::Draws;
use super::{History, Next, Search};
use crate::settings::SearchSettings;

/// Breeds each generation from the best of the earlier ones.
#[derive(Debug, Clone, Copy)]
pub struct Evolve {
    pub seed: u64,
    pub evaluations: u64,
    pub batch: u64,
}

impl Evolve {
    pub fn new(s: &SearchSettings) -> Evolve {
        Evolve {
            seed: s.seed,
            evaluations: s.evaluations,
            batch: s.batch,
        }
    }

    /// Elite size: a twentieth of a generation, at least 16, at most 50,000.
    fn elite_size(&self) -> usize {
        (self.batch / 20).clamp(16, 50_000) as usize
    }
}

/// The share of a generation drawn uniformly.
const UNIFORM_SHARE: u64 = 10;
/// Children tried per child wanted before the rest is drawn uniformly.
const BREEDING_TRIES: u64 = 16;
/// The step is doubled (up to this factor) after each round of children
/// in which under a quarter were new: the elite's neighbourhood is
/// screened, so the search looks further out.
const MAX_WIDENING: f64 = 64.0;
/// One child in this many is a crossover of two parents.
const CROSSOVER: u64 = 4;
/// The step's covariance is the elite's times this.
const STEP_SCALE: f64 = 0.5;

impl Search for Evolve {
    fn propose(&self, history: &History<'_>) -> Result<Next> {
        let Some(mut draws) = Draws::start(history, self.seed, self.evaluations, self.batch) else {
            return Ok(Next::Exhausted);
        };
        let elite = elite(history, self.elite_size())?;
        let axes: Vec<&Axis> = history.original.iter().collect();
        let model = (!elite.is_empty()).then(|| Model::fit(&axes, &elite));
        let Some(model) = model else {
            // The first generation (or no finite score yet): uniform.
            draws.uniform(draws.want);
            return draws.finish(history, false);
        };
        let uniform = draws.want / UNIFORM_SHARE;
        draws.uniform(uniform);
        let bound = draws.tried + BREEDING_TRIES * draws.want;
        let round = (draws.want / 4).max(64);
        let (mut widening, mut tried, mut new) = (1.0, 0, 0);
        let mut coords = vec![0u64; axes.len()];
        while draws.len() < draws.want && draws.tried < bound {
            model.child(&mut draws.rng, widening, &mut coords);
            new += u64::from(draws.offer(index_of(&axes, &coords)));
            tried += 1;
            if tried == round {
                if 4 * new < round {
                    widening = (widening * 2.0).min(MAX_WIDENING);
                }
                (tried, new) = (0, 0);
            }
        }
        // What breeding could not find (a converged elite whose
        // neighbourhood is screened): uniform.
        let want = draws.want;
        draws.uniform(want);
        draws.finish(history, true)
    }

    fn budgeted(&self) -> bool {
        true
    }
}

/// The best `size` screened combinations of every earlier generation (grid
/// indices of the run's grid), best first: by screen score, ties by grid
/// index. Non-finite scores are not in it.
fn elite(history: &History<'_>, size: usize) -> Result<Vec<u64>> {
    let mut rows: Vec<(f64, u64)> = Vec::new();
    for it in history.iterations.iter().filter(|it| it.sweep.is_some()) {
        let path = history.dir.iter_dir(it.iteration)?.join("sweep.csv");
        let (_, sweep) = crate::files::read_sweep_csv(&path)?;
        rows.extend(
            sweep
                .iter()
                .filter(|r| r.score.is_finite())
                .map(|r| (r.score, r.grid_index)),
        );
    }
    rows.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    rows.dedup_by_key(|r| r.1);
    rows.truncate(size);
    Ok(rows.into_iter().map(|r| r.1).collect())
}

/// Grid coordinates (each axis's value position) of `index`; the last
/// axis varies fastest.
fn coords_of(axes: &[&Axis], mut index: u64, out: &mut [u64]) {
    for (j, axis) in axes.iter().enumerate().rev() {
        let n = axis.values.len() as u64;
        out[j] = index % n;
        index /= n;
    }
}

fn index_of(axes: &[&Axis], coords: &[u64]) -> u64 {
    axes.iter()
        .zip(coords)
        .fold(0, |acc, (axis, &c)| acc * axis.values.len() as u64 + c)
}

/// The breeding distribution fitted to an elite.
struct Model {
    /// Each elite member's position, scaled to 0..1 per axis.
    parents: Vec<Vec<f64>>,
    /// Cumulative rank weights of `parents`.
    cumulative: Vec<f64>,
    /// The axes with more than one value: the only ones that move.
    moving: Vec<usize>,
    /// Lower-triangular factor of the step's covariance over `moving`.
    factor: Vec<Vec<f64>>,
    /// Values per axis.
    sizes: Vec<u64>,
}

impl Model {
    fn fit(axes: &[&Axis], elite: &[u64]) -> Model {
        let d = axes.len();
        let sizes: Vec<u64> = axes.iter().map(|a| a.values.len() as u64).collect();
        let scale = |j: usize, c: u64| match sizes[j] {
            1 => 0.0,
            n => c as f64 / (n - 1) as f64,
        };
        let mut coords = vec![0u64; d];
        let parents: Vec<Vec<f64>> = elite
            .iter()
            .map(|&i| {
                coords_of(axes, i, &mut coords);
                (0..d).map(|j| scale(j, coords[j])).collect()
            })
            .collect();
        // Rank weights as CMA-ES's: ln(μ + 1) − ln(rank).
        let mu = parents.len() as f64;
        let weights: Vec<f64> = (1..=parents.len())
            .map(|r| (mu + 1.0).ln() - (r as f64).ln())
            .collect();
        let total: f64 = weights.iter().sum();
        let mut cumulative = Vec::with_capacity(weights.len());
        let mut acc = 0.0;
        for w in &weights {
            acc += w / total;
            cumulative.push(acc);
        }
        // A fixed axis (one value) has no variance: left out, so that it
        // cannot make the covariance singular.
        let moving: Vec<usize> = (0..d).filter(|&j| sizes[j] > 1).collect();
        let mean: Vec<f64> = moving
            .iter()
            .map(|&j| {
                parents
                    .iter()
                    .zip(&weights)
                    .map(|(p, w)| w * p[j])
                    .sum::<f64>()
                    / total
            })
            .collect();
        let k = moving.len();
        let mut cov = vec![vec![0.0; k]; k];
        for (p, w) in parents.iter().zip(&weights) {
            for a in 0..k {
                let da = p[moving[a]] - mean[a];
                for b in 0..=a {
                    cov[a][b] += w / total * da * (p[moving[b]] - mean[b]);
                }
            }
        }
        for (a, &j) in moving.iter().enumerate() {
            for c in cov[a].iter_mut().take(a + 1) {
                *c *= STEP_SCALE;
            }
            // At least one grid step: the search can always reach its
            // neighbours.
            let step = 1.0 / (sizes[j] - 1) as f64;
            cov[a][a] = cov[a][a].max(step * step);
        }
        Model {
            parents,
            cumulative,
            factor: cholesky(&cov),
            moving,
            sizes,
        }
    }

    fn parent(&self, rng: &mut sieve_core::random::SplitMix64) -> &[f64] {
        let u = rng.uniform();
        let k = self.cumulative.partition_point(|&c| c < u);
        &self.parents[k.min(self.parents.len() - 1)]
    }

    /// One child's grid coordinates, its step `widening` times the
    /// elite's.
    fn child(&self, rng: &mut sieve_core::random::SplitMix64, widening: f64, out: &mut [u64]) {
        let mut x: Vec<f64> = self.parent(rng).to_vec();
        if rng.below(CROSSOVER) == 0 {
            let other = self.parent(rng);
            for (xj, oj) in x.iter_mut().zip(other) {
                if rng.below(2) == 1 {
                    *xj = *oj;
                }
            }
        }
        let z: Vec<f64> = self.moving.iter().map(|_| rng.normal()).collect();
        for (row, &j) in self.factor.iter().zip(&self.moving) {
            x[j] += widening * row.iter().zip(&z).map(|(l, z)| l * z).sum::<f64>();
        }
        for ((o, &xj), &n) in out.iter_mut().zip(&x).zip(&self.sizes) {
            *o = if n == 1 {
                0
            } else {
                (reflect(xj) * (n - 1) as f64).round() as u64
            };
        }
    }
}

/// `x` folded into 0..1 by reflection at both ends.
fn reflect(x: f64) -> f64 {
    let m = x.rem_euclid(2.0);
    if m > 1.0 {
        2.0 - m
    } else {
        m
    }
}

/// The lower-triangular L with L·Lᵀ = `a` (only its lower triangle is
/// read); where `a` is not positive definite (an elite on a line), the
/// square roots of its diagonal instead.
fn cholesky(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let d = a.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = a[i][i] - s;
                if v.is_nan() || v <= 1e-300 {
                    return (0..d)
                        .map(|r| {
                            (0..d)
                                .map(|c| if r == c { a[r][r].sqrt() } else { 0.0 })
                                .collect()
                        })
                        .collect();
                }
                l[i][i] = v.sqrt();
            } else {
                l[i][j] = (a[i][j] - s) / l[j][j];
            }
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An axis of `n` values 0, 1, …
    fn axis(n: usize) -> Axis {
        Axis {
            param: 0,
            name: "p".into(),
            values: (0..n).map(|v| v as f64).collect(),
        }
    }

    #[test]
    fn cholesky_factors_a_covariance() {
        let a = vec![
            vec![4.0, 0.0, 0.0],
            vec![2.0, 5.0, 0.0],
            vec![-2.0, 1.0, 6.0],
        ];
        let l = cholesky(&a);
        for i in 0..3 {
            for j in 0..=i {
                let v: f64 = (0..3).map(|k| l[i][k] * l[j][k]).sum();
                assert!((v - a[i][j]).abs() < 1e-12, "{i},{j}: {v} vs {}", a[i][j]);
            }
        }
    }

    #[test]
    fn coordinates_and_indices_round_trip() {
        let (a, b, c) = (axis(3), axis(1), axis(5));
        let axes = [&a, &b, &c];
        let mut coords = [0u64; 3];
        for i in 0..15 {
            coords_of(&axes, i, &mut coords);
            assert_eq!(coords, [i / 5, 0, i % 5]);
            assert_eq!(index_of(&axes, &coords), i);
        }
    }

    /// A fixed axis (one value) stays put and leaves the others'
    /// covariance whole: an elite on the diagonal of two moving axes gives
    /// a factor with its correlation, not a diagonal fallback.
    #[test]
    fn a_fixed_axis_leaves_the_covariance_of_the_others() {
        let (a, fixed, b) = (axis(101), axis(1), axis(101));
        let axes = [&a, &fixed, &b];
        // (k, 0, k) for k = 10..=60: the diagonal.
        let elite: Vec<u64> = (10..=60u64)
            .rev()
            .map(|k| index_of(&axes, &[k, 0, k]))
            .collect();
        let model = Model::fit(&axes, &elite);
        assert_eq!(model.moving, [0, 2]);
        let l = &model.factor;
        assert!(l[1][0] > 0.9 * l[1][1].hypot(l[1][0]), "{l:?}");
        let mut rng = sieve_core::random::SplitMix64(1);
        let mut coords = [0u64; 3];
        // Children follow the diagonal, but for the crossovers (one in
        // four takes each axis from either of two parents).
        let mut near = 0;
        for _ in 0..400 {
            model.child(&mut rng, 1.0, &mut coords);
            assert_eq!(coords[1], 0);
            near += usize::from(coords[0].abs_diff(coords[2]) <= 4);
        }
        assert!(near >= 280, "{near} of 400 near the diagonal");
    }

    #[test]
    fn reflection_folds_into_the_unit_interval() {
        for (x, want) in [
            (0.25, 0.25),
            (-0.25, 0.25),
            (1.25, 0.75),
            (2.5, 0.5),
            (-1.5, 0.5),
        ] {
            assert!((reflect(x) - want).abs() < 1e-12, "{x}");
        }
    }
}
