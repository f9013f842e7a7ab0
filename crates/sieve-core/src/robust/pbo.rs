//! The Probability of Backtest Overfitting by combinatorially symmetric
//! cross-validation (CSCV). The return series of N candidates are cut into
//! S contiguous blocks; for each of the C(S, S/2) ways to call half of the
//! blocks in-sample, the candidate with the best in-sample Sharpe is picked
//! and its out-of-sample Sharpe ranked among all candidates':
//! ω = (1 + #{OOS below the pick's}) / (N + 1), λ = ln(ω / (1 − ω)).
//! PBO is the share of splits with λ ≤ 0: the pick did no better than the
//! median out of sample.
//!
//! Per-block sums (count, Σr, Σr²) make each split O(N · S/2).

use rayon::prelude::*;

/// Count, Σr and Σr² of one candidate's returns in one block.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BlockSums {
    pub n: f64,
    pub sum: f64,
    pub sum_sq: f64,
}

impl BlockSums {
    fn add(&mut self, o: &BlockSums) {
        self.n += o.n;
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }

    /// mean / std (ddof = 1); −∞ when the deviation is zero or undefined.
    fn sharpe(&self) -> f64 {
        if self.n < 2.0 {
            return f64::NEG_INFINITY;
        }
        let mean = self.sum / self.n;
        let var = (self.sum_sq - self.sum * mean) / (self.n - 1.0);
        if var > 0.0 && var.is_finite() {
            mean / var.sqrt()
        } else {
            f64::NEG_INFINITY
        }
    }
}

/// The per-block sums of `returns` cut into `blocks` contiguous blocks:
/// block b holds indices [⌊b·T/S⌋, ⌊(b+1)·T/S⌋).
pub fn block_sums(returns: &[f64], blocks: usize) -> Vec<BlockSums> {
    let t = returns.len();
    (0..blocks)
        .map(|b| {
            let (lo, hi) = (b * t / blocks, (b + 1) * t / blocks);
            let mut s = BlockSums::default();
            for &r in &returns[lo..hi] {
                s.n += 1.0;
                s.sum += r;
                s.sum_sq += r * r;
            }
            s
        })
        .collect()
}

/// What CSCV found.
#[derive(Debug, Clone, PartialEq)]
pub struct Pbo {
    pub blocks: usize,
    pub candidates: usize,
    pub splits: usize,
    pub pbo: f64,
    /// Share of splits where the pick's out-of-sample Sharpe is below 0.
    pub prob_oos_loss: f64,
    /// Least-squares line of the pick's OOS Sharpe on its IS Sharpe.
    pub degradation_slope: f64,
    pub degradation_intercept: f64,
    /// λ of every split, in split order.
    pub logits: Vec<f64>,
    /// (IS, OOS) Sharpe of the pick of every split.
    pub picks: Vec<(f64, f64)>,
}

/// Two Sharpes this close (relative to the larger) are a tie: candidates
/// with the same trades differ only in the last bits of their sums, and
/// that rounding must not decide which is picked or how it ranks.
pub const SHARPE_TIE: f64 = 1e-9;

/// Whether `a` and `b` are the same Sharpe up to [`SHARPE_TIE`].
fn tied(a: f64, b: f64) -> bool {
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= SHARPE_TIE * a.abs().max(b.abs()))
}

/// The C(S, S/2) in-sample block sets, as bit masks in increasing order.
fn splits(blocks: usize) -> Vec<u32> {
    (0u32..(1 << blocks))
        .filter(|m| m.count_ones() as usize == blocks / 2)
        .collect()
}

/// How each split's in-sample pick is made.
#[derive(Debug, Clone, Copy)]
pub enum Pick<'a> {
    /// The highest in-sample Sharpe.
    Argmax,
    /// The highest aggregate of a candidate's in-sample Sharpe and its
    /// neighbours' (`neighbours[candidate]`: indices into the series, which
    /// may lie past the candidates), an undefined one counting as −∞: the
    /// plateau rule of the optimize loop, applied in-sample.
    Plateau {
        neighbours: &'a [Vec<usize>],
        how: super::NeighbourAggregate,
    },
}

/// CSCV over `sums[candidate][block]` (candidates in grid-index order: a
/// tie in-sample goes to the earlier one; every candidate has the same
/// block sizes). `blocks` must be even, 2..=24.
pub fn pbo(sums: &[Vec<BlockSums>], blocks: usize) -> Pbo {
    pbo_picking(sums, sums.len(), blocks, Pick::Argmax)
}

/// [`pbo`] with the first `candidates` of `sums` the candidates (the rest:
/// series the pick reads, such as plateau neighbours) and the in-sample
/// pick made by `pick`.
pub fn pbo_picking(
    sums: &[Vec<BlockSums>],
    candidates: usize,
    blocks: usize,
    pick: Pick<'_>,
) -> Pbo {
    match pbo_picking_until(sums, candidates, blocks, pick, &|| false) {
        Some(pbo) => pbo,
        None => unreachable!("never stopped"),
    }
}

/// [`pbo_picking`], looking at `stopped` before each split (thousands of
/// them over many candidates take seconds): `None` once it says stop.
pub fn pbo_picking_until(
    sums: &[Vec<BlockSums>],
    candidates: usize,
    blocks: usize,
    pick: Pick<'_>,
    stopped: &(dyn Fn() -> bool + Sync),
) -> Option<Pbo> {
    let series = sums.len();
    let n = candidates.min(series);
    let totals: Vec<BlockSums> = sums
        .iter()
        .map(|c| {
            let mut t = BlockSums::default();
            c.iter().for_each(|b| t.add(b));
            t
        })
        .collect();
    // (Σr, Σr²) by candidate then block, contiguous: the hot loop reads it
    // straight through. Counts are the same for every candidate.
    let flat: Vec<[f64; 2]> = sums
        .iter()
        .flat_map(|c| c.iter().map(|b| [b.sum, b.sum_sq]))
        .collect();
    let counts: Vec<f64> = sums
        .first()
        .map_or_else(Vec::new, |c| c.iter().map(|b| b.n).collect());
    let total_n = counts.iter().sum::<f64>();
    let masks = splits(blocks);
    let per_split: Vec<(f64, f64, f64)> = masks
        .par_iter()
        .map_init(
            || (vec![0.0; series], vec![0.0; series], vec![0.0; n]),
            |(ins, oos, rank), &mask| {
                if stopped() {
                    return (f64::NAN, f64::NAN, f64::NAN); // dropped below
                }
                let chosen: Vec<usize> = (0..blocks).filter(|b| mask >> b & 1 == 1).collect();
                let is_n: f64 = chosen.iter().map(|&b| counts[b]).sum();
                for i in 0..series {
                    let row = &flat[i * blocks..(i + 1) * blocks];
                    let (mut sum, mut sum_sq) = (0.0, 0.0);
                    for &b in &chosen {
                        sum += row[b][0];
                        sum_sq += row[b][1];
                    }
                    let is = BlockSums {
                        n: is_n,
                        sum,
                        sum_sq,
                    };
                    let out = BlockSums {
                        n: total_n - is_n,
                        sum: totals[i].sum - sum,
                        sum_sq: totals[i].sum_sq - sum_sq,
                    };
                    oos[i] = out.sharpe();
                    ins[i] = is.sharpe();
                }
                // What the pick ranks by: the in-sample Sharpe, or its
                // neighbourhood's aggregate.
                for i in 0..n {
                    rank[i] = match pick {
                        Pick::Argmax => ins[i],
                        Pick::Plateau { neighbours, how } => {
                            let own = ins[i];
                            let near = neighbours.get(i).map_or(&[][..], Vec::as_slice);
                            let all = std::iter::once(own).chain(near.iter().map(|&j| ins[j]));
                            let all = all.map(|v| if v.is_nan() { f64::NEG_INFINITY } else { v });
                            match how {
                                super::NeighbourAggregate::Mean => {
                                    all.sum::<f64>() / (1 + near.len()) as f64
                                }
                                super::NeighbourAggregate::Min => all.fold(f64::INFINITY, f64::min),
                            }
                        }
                    };
                }
                // The earliest candidate tied with the highest rank is the
                // pick (its own in-sample Sharpe breaks a tie of
                // aggregates); out of sample, one tied with the pick's is
                // not below it.
                let top = rank.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let chosen = (0..n)
                    .filter(|&i| tied(rank[i], top))
                    .reduce(|a, b| match ins[b] > ins[a] && !tied(ins[a], ins[b]) {
                        true => b,
                        false => a,
                    })
                    .unwrap_or(0);
                let pick = oos[chosen];
                let below = oos[..n]
                    .iter()
                    .filter(|&&o| o < pick && !tied(o, pick))
                    .count();
                let omega = (1.0 + below as f64) / (n as f64 + 1.0);
                ((omega / (1.0 - omega)).ln(), ins[chosen], pick)
            },
        )
        .collect();
    if stopped() {
        return None;
    }
    let splits = per_split.len();
    let share = |f: &dyn Fn(&(f64, f64, f64)) -> bool| {
        per_split.iter().filter(|s| f(s)).count() as f64 / splits as f64
    };
    let pbo = share(&|s| s.0 <= 0.0);
    let prob_oos_loss = share(&|s| s.2 < 0.0);
    let picks: Vec<(f64, f64)> = per_split.iter().map(|s| (s.1, s.2)).collect();
    let (slope, intercept) = least_squares(&picks);
    Some(Pbo {
        blocks,
        candidates: n,
        splits,
        pbo,
        prob_oos_loss,
        degradation_slope: slope,
        degradation_intercept: intercept,
        logits: per_split.iter().map(|s| s.0).collect(),
        picks,
    })
}

/// y = slope·x + intercept over the finite pairs; NaN when x does not vary.
fn least_squares(points: &[(f64, f64)]) -> (f64, f64) {
    let finite: Vec<&(f64, f64)> = points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let k = finite.len() as f64;
    let mx = finite.iter().map(|p| p.0).sum::<f64>() / k;
    let my = finite.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = finite.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = finite.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx > 0.0 {
        let slope = sxy / sxx;
        (slope, my - slope * mx)
    } else {
        (f64::NAN, f64::NAN)
    }
}
