//! The PBO by combinatorially symmetric cross-validation: hand-computed
//! small cases, a dominating candidate, pure noise, the fast CSCV against
//! a naive one, and ties.

use sieve_core::robust::pbo::{block_sums, pbo, pbo_picking, BlockSums, Pick};

/// One return per block: a split's Sharpe is that of a pair,
/// (x + y)/2 / (|x − y|/√2), and −∞ when x = y.
fn sums(candidates: &[[f64; 4]]) -> Vec<Vec<BlockSums>> {
    candidates.iter().map(|c| block_sums(c, 4)).collect()
}

#[test]
fn two_and_four_candidates_by_hand() {
    // A = 1, 2, 1, 2 (pairs: (1,2) → 2.12, (1,1) and (2,2) → −∞)
    // B = 1, 1.5, 2, 2.5 ({0,1} 3.54, {0,2} 2.12, {0,3} 1.65,
    //                     {1,2} 4.95, {1,3} 2.83, {2,3} 6.36)
    // Splits in mask order (IS blocks → pick; OOS: pick vs the other):
    //   {0,1} → B; OOS {2,3}: B 6.36 > A 2.12   λ = ln(2/3 ÷ 1/3) = ln 2
    //   {0,2} → B; OOS {1,3}: B 2.83 > A −∞     λ = ln 2
    //   {1,2} → B; OOS {0,3}: B 1.65 < A 2.12   λ = ln(1/3 ÷ 2/3) = −ln 2
    //   {0,3} → A; OOS {1,2}: A 2.12 < B 4.95   λ = −ln 2
    //   {1,3} → B; OOS {0,2}: B 2.12 > A −∞     λ = ln 2
    //   {2,3} → B; OOS {0,1}: B 3.54 > A 2.12   λ = ln 2
    // PBO = 2/6; every pick's OOS Sharpe is positive.
    let a = [1.0, 2.0, 1.0, 2.0];
    let b = [1.0, 1.5, 2.0, 2.5];
    let r = pbo(&sums(&[a, b]), 4);
    assert_eq!((r.blocks, r.candidates, r.splits), (4, 2, 6));
    assert!((r.pbo - 1.0 / 3.0).abs() < 1e-15, "{}", r.pbo);
    assert_eq!(r.prob_oos_loss, 0.0);
    let l2 = 2f64.ln();
    let want = [l2, l2, -l2, -l2, l2, l2];
    for (got, want) in r.logits.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{:?}", r.logits);
    }
    // Two losers (every pair negative, or −∞) below everyone out of sample:
    // the pick is now always in the top half. ω = (1 + 3)/5 when it beats
    // the other of A/B, (1 + 2)/5 when not: λ = ln 4 or ln 1.5, PBO = 0.
    let c = [-1.0, -1.2, -1.0, -1.2];
    let d = [-2.0, -2.5, -3.0, -3.5];
    let r = pbo(&sums(&[a, b, c, d]), 4);
    assert_eq!(r.candidates, 4);
    assert_eq!(r.pbo, 0.0);
    let (l4, l15) = (4f64.ln(), 1.5f64.ln());
    let want = [l4, l4, l15, l15, l4, l4];
    for (got, want) in r.logits.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{:?}", r.logits);
    }
}

/// A small deterministic generator (xorshift64*) and Box–Muller normals.
struct Noise(u64);
impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    fn series(&mut self, t: usize, mean: f64, sd: f64) -> Vec<f64> {
        (0..t).map(|_| mean + sd * self.normal()).collect()
    }
}

#[test]
fn a_candidate_that_dominates_every_block_is_never_overfit() {
    let mut noise = Noise(7);
    let mut returns: Vec<Vec<f64>> = (0..20).map(|_| noise.series(400, 0.0, 0.01)).collect();
    // Candidate 5 earns 0.5% a bar more than any noise candidate can show.
    returns[5] = noise.series(400, 0.005, 0.001);
    let s: Vec<Vec<BlockSums>> = returns.iter().map(|r| block_sums(r, 8)).collect();
    let r = pbo(&s, 8);
    assert_eq!(r.splits, 70);
    assert_eq!(r.pbo, 0.0);
    assert_eq!(r.prob_oos_loss, 0.0);
}

#[test]
fn pure_noise_is_overfit_about_half_the_time() {
    // The property: with no skill anywhere, the in-sample pick lands below
    // the out-of-sample median about half the time (over many seeds).
    let mut total = 0.0;
    let seeds = 30;
    for seed in 1..=seeds {
        let mut noise = Noise(seed * 7919);
        let s: Vec<Vec<BlockSums>> = (0..40)
            .map(|_| block_sums(&noise.series(320, 0.0, 0.01), 8))
            .collect();
        total += pbo(&s, 8).pbo;
    }
    let mean = total / seeds as f64;
    assert!((mean - 0.5).abs() < 0.1, "mean PBO over noise {mean}");
}

/// The block sums give exactly what CSCV on the raw returns gives.
#[test]
fn fast_cscv_equals_a_naive_one() {
    let mut noise = Noise(42);
    let returns: Vec<Vec<f64>> = (0..12).map(|_| noise.series(97, 0.0005, 0.01)).collect();
    let blocks = 6;
    let s: Vec<Vec<BlockSums>> = returns.iter().map(|r| block_sums(r, blocks)).collect();
    let fast = pbo(&s, blocks);
    let t = 97;
    let sharpe = |v: &[f64]| {
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        if var > 0.0 {
            m / var.sqrt()
        } else {
            f64::NEG_INFINITY
        }
    };
    let mut naive_logits = Vec::new();
    for mask in 0u32..(1 << blocks) {
        if mask.count_ones() as usize != blocks / 2 {
            continue;
        }
        let part = |r: &[f64], inside: bool| -> Vec<f64> {
            (0..blocks)
                .filter(|b| (mask >> b & 1 == 1) == inside)
                .flat_map(|b| r[b * t / blocks..(b + 1) * t / blocks].to_vec())
                .collect()
        };
        let is: Vec<f64> = returns.iter().map(|r| sharpe(&part(r, true))).collect();
        let oos: Vec<f64> = returns.iter().map(|r| sharpe(&part(r, false))).collect();
        let pick = (0..is.len()).fold(0, |b, i| if is[i] > is[b] { i } else { b });
        let below = oos.iter().filter(|&&o| o < oos[pick]).count();
        let omega = (1.0 + below as f64) / (returns.len() as f64 + 1.0);
        naive_logits.push((omega / (1.0 - omega)).ln());
    }
    assert_eq!(fast.logits.len(), naive_logits.len());
    for (f, n) in fast.logits.iter().zip(&naive_logits) {
        assert!((f - n).abs() < 1e-12, "{f} vs {n}");
    }
}

/// A candidate whose Sharpes equal another's up to rounding (the same
/// returns scaled: mathematically the same Sharpe in every split) changes
/// CSCV exactly as an exact copy does: rounding decides neither the pick
/// nor its rank.
#[test]
fn sharpes_equal_but_for_rounding_are_ties() {
    let mut noise = Noise(11);
    let mut returns: Vec<Vec<f64>> = (0..9).map(|_| noise.series(160, 0.0, 0.01)).collect();
    returns[0] = noise.series(160, 0.002, 0.01);
    let copy = returns[0].clone();
    let near: Vec<f64> = copy.iter().map(|r| r * (1.0 + 3e-9)).collect();
    let with = |twin: &[f64]| {
        let mut all = returns.clone();
        all.insert(1, twin.to_vec());
        let s: Vec<Vec<BlockSums>> = all.iter().map(|r| block_sums(r, 8)).collect();
        pbo(&s, 8)
    };
    let (exact, rounded) = (with(&copy), with(&near));
    // The scaled copy's Sharpes differ from the original's in the last
    // bits somewhere, or the test would prove nothing.
    let sharpe_bits = |v: &[f64]| {
        let s = block_sums(v, 8);
        let (n, sum, sq) = s.iter().fold((0.0, 0.0, 0.0), |a, b| {
            (a.0 + b.n, a.1 + b.sum, a.2 + b.sum_sq)
        });
        let m = sum / n;
        (m / ((sq - sum * m) / (n - 1.0)).sqrt()).to_bits()
    };
    assert_ne!(sharpe_bits(&copy), sharpe_bits(&near));
    assert_eq!(exact.logits, rounded.logits);
    assert_eq!(exact.pbo, rounded.pbo);
}

#[test]
fn the_plateau_pick_reads_the_neighbours_in_sample() {
    use sieve_core::robust::NeighbourAggregate;
    // A and B of the case above; A's one neighbour always loses, B's is
    // B again. In-sample, A's neighbourhood mean is below B's in every
    // split, so B is the pick of all six (argmax took A in {0,3}); ranked
    // out of sample among A and B only: λ = ln 2 except {1,2} (B 1.65 <
    // A 2.12 over {0,3}): PBO = 1/6.
    let a = [1.0, 2.0, 1.0, 2.0];
    let b = [1.0, 1.5, 2.0, 2.5];
    let loser = [-2.0, -2.5, -3.0, -3.5];
    let series = sums(&[a, b, loser, b]);
    let near = [vec![2], vec![3]];
    let pick = Pick::Plateau {
        neighbours: &near,
        how: NeighbourAggregate::Mean,
    };
    let r = pbo_picking(&series, 2, 4, pick);
    assert_eq!(r.candidates, 2);
    assert!((r.pbo - 1.0 / 6.0).abs() < 1e-15, "{}", r.pbo);
    let l2 = 2f64.ln();
    let want = [l2, l2, -l2, l2, l2, l2];
    for (got, want) in r.logits.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{:?}", r.logits);
    }
    // No neighbours: the plateau pick is the argmax pick.
    let none = [Vec::new(), Vec::new()];
    let alone = Pick::Plateau {
        neighbours: &none,
        how: NeighbourAggregate::Min,
    };
    assert_eq!(
        pbo_picking(&sums(&[a, b]), 2, 4, alone),
        pbo(&sums(&[a, b]), 4)
    );
}
