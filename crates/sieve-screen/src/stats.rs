//! Count, mean and variance of the objective over every combination
//! screened (Welford within a chunk, Chan's formula across chunks, in index
//! order), so the numbers do not depend on the thread count.

/// Count, mean and variance of the objective over every combination
/// evaluated (finite values; NaN and ±inf are counted apart). Within a chunk
/// values are added by Welford's update; chunks and shards combine with
/// Chan's formula, always in index order, so a run gives the same numbers
/// whatever its thread count.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ObjectiveStats {
    /// Combinations scored (constraint-satisfying).
    pub evaluated: u64,
    /// Of those, finite objectives (the moments below are over these).
    pub count: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
    /// Objectives that were NaN (e.g. fewer than `min_trades` trades).
    pub nan: u64,
    /// Objectives that were ±infinite.
    pub infinite: u64,
}

impl ObjectiveStats {
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.evaluated += 1;
        if x.is_nan() {
            self.nan += 1;
        } else if x.is_infinite() {
            self.infinite += 1;
        } else {
            self.count += 1;
            let delta = x - self.mean;
            self.mean += delta / self.count as f64;
            self.m2 += delta * (x - self.mean);
        }
    }

    /// Appends the stats of the combinations that follow these.
    pub fn combine(&mut self, other: &ObjectiveStats) {
        self.evaluated += other.evaluated;
        self.nan += other.nan;
        self.infinite += other.infinite;
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            self.count = other.count;
            self.mean = other.mean;
            self.m2 = other.m2;
            return;
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let delta = other.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += other.m2 + delta * delta * na * nb / n;
        self.count += other.count;
    }

    /// Sample variance (ddof = 1); NaN below two values.
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            f64::NAN
        } else {
            self.m2 / (self.count - 1) as f64
        }
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.mean
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_by_hand_and_split_agree() {
        let xs = [1.0, 2.0, 4.0, f64::NAN, 7.0, f64::INFINITY];
        let mut all = ObjectiveStats::default();
        xs.iter().for_each(|&x| all.push(x));
        assert_eq!(
            (all.evaluated, all.count, all.nan, all.infinite),
            (6, 4, 1, 1)
        );
        assert_eq!(all.mean(), 3.5);
        // deviations −2.5, −1.5, 0.5, 3.5 → squares 6.25 + 2.25 + 0.25 + 12.25 = 21
        assert!((all.variance() - 7.0).abs() < 1e-12);
        let (mut a, mut b) = (ObjectiveStats::default(), ObjectiveStats::default());
        xs[..2].iter().for_each(|&x| a.push(x));
        xs[2..].iter().for_each(|&x| b.push(x));
        a.combine(&b);
        assert_eq!((a.evaluated, a.count), (6, 4));
        assert!((a.mean() - 3.5).abs() < 1e-12 && (a.variance() - 7.0).abs() < 1e-12);
    }
}
