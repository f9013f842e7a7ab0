//! Risk-adjusted ratios from the window's simple returns r_t = E_t/E_{t−1} − 1
//! (the first against the close before the window), annualised by √P.

/// Running moments of the returns: Welford's mean and M2 (stable, and the
/// same whichever way the bars are fed) plus the downside sum of squares.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReturnMoments {
    n: u64,
    mean: f64,
    m2: f64,
    downside_sq: f64,
}

impl ReturnMoments {
    #[inline(always)]
    pub fn push(&mut self, r: f64) {
        self.n += 1;
        let delta = r - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (r - self.mean);
        if r < 0.0 {
            self.downside_sq += r * r;
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.mean }
    }

    /// Sample standard deviation (ddof = 1).
    pub fn std(&self) -> f64 {
        if self.n < 2 { f64::NAN } else { (self.m2 / (self.n - 1) as f64).sqrt() }
    }

    /// sharpe = mean(r) / std(r, ddof=1) · √P; NaN when std is 0 or undefined.
    pub fn sharpe(&self, periods_per_year: f64) -> f64 {
        let std = self.std();
        if std == 0.0 || std.is_nan() {
            return f64::NAN;
        }
        self.mean / std * periods_per_year.sqrt()
    }

    /// sortino = mean(r) / √mean(min(r,0)²) · √P; NaN with no losing bar.
    pub fn sortino(&self, periods_per_year: f64) -> f64 {
        if self.n == 0 || self.downside_sq == 0.0 {
            return f64::NAN;
        }
        self.mean / (self.downside_sq / self.n as f64).sqrt() * periods_per_year.sqrt()
    }
}
