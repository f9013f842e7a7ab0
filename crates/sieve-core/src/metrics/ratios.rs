//! Risk-adjusted ratios from the window's simple returns r_t = E_t/E_{t−1} − 1
//! (the first against the close before the window), annualised by √P.

/// Running sums of the returns, their squares and their downside squares.
/// Plain sums rather than Welford's update: no division per bar, and for
/// daily returns (mean² ≪ variance) the cancellation in Σr² − (Σr)²/n costs
/// nothing measurable.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReturnMoments {
    n: u64,
    sum: f64,
    sum_sq: f64,
    downside_sq: f64,
}

impl ReturnMoments {
    /// The moments of `n` returns from their sums (what pushing them one by
    /// one in the same order gives).
    pub(crate) fn from_sums(n: u64, sum: f64, sum_sq: f64, downside_sq: f64) -> Self {
        ReturnMoments {
            n,
            sum,
            sum_sq,
            downside_sq,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, r: f64) {
        self.n += 1;
        self.sum += r;
        self.sum_sq += r * r;
        self.downside_sq += r.min(0.0) * r.min(0.0);
    }

    /// [`ReturnMoments::push`] without the downside sum, for a screen that
    /// never reads the Sortino ratio (the other sums are the same).
    #[inline(always)]
    pub fn push_no_downside(&mut self, r: f64) {
        self.n += 1;
        self.sum += r;
        self.sum_sq += r * r;
    }

    /// `k` returns of exactly 0 (what `push(0.0)` k times gives).
    #[inline]
    pub fn push_zeros(&mut self, k: u64) {
        self.n += k;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum / self.n as f64
        }
    }

    /// Sample standard deviation (ddof = 1).
    pub fn std(&self) -> f64 {
        if self.n < 2 {
            return f64::NAN;
        }
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n).max(0.0) / (n - 1.0)).sqrt()
    }

    /// sharpe = mean(r) / std(r, ddof=1) · √P; NaN when std is 0 or undefined.
    pub fn sharpe(&self, periods_per_year: f64) -> f64 {
        let std = self.std();
        if std == 0.0 || std.is_nan() {
            return f64::NAN;
        }
        self.mean() / std * periods_per_year.sqrt()
    }

    /// sortino = mean(r) / √mean(min(r,0)²) · √P; NaN with no losing bar.
    pub fn sortino(&self, periods_per_year: f64) -> f64 {
        if self.n == 0 || self.downside_sq == 0.0 {
            return f64::NAN;
        }
        self.mean() / (self.downside_sq / self.n as f64).sqrt() * periods_per_year.sqrt()
    }
}
