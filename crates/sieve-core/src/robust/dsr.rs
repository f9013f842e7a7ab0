//! The Deflated Sharpe Ratio: the probability that the true Sharpe of the
//! selected strategy is above the best Sharpe that N trials of pure noise
//! would be expected to show, given the returns' length, skew and kurtosis.
//!
//! SR₀ = √V · ((1 − γ) Φ⁻¹(1 − 1/N) + γ Φ⁻¹(1 − 1/(N e)))
//! DSR = Φ( (SR − SR₀) √(T − 1) / √(1 − γ₃ SR + (γ₄ − 1)/4 · SR²) )
//! with SR the per-period (not annualised) Sharpe, V the variance of the
//! trials' per-period Sharpes, γ Euler–Mascheroni, γ₃ the skewness and γ₄
//! the raw (not excess) kurtosis.

use statrs::distribution::{ContinuousCDF, Normal};

/// Euler–Mascheroni constant.
pub const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// Per-period Sharpe and the shape of one return series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReturnShape {
    /// mean / std (ddof = 1), not annualised.
    pub sharpe: f64,
    /// T: the number of returns.
    pub observations: u64,
    /// γ₃ = m₃ / m₂^1.5 from population moments.
    pub skew: f64,
    /// γ₄ = m₄ / m₂² from population moments (3 for a normal).
    pub kurtosis: f64,
}

impl ReturnShape {
    pub fn of(returns: &[f64]) -> ReturnShape {
        let n = returns.len() as f64;
        let mean = returns.iter().sum::<f64>() / n;
        let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
        for &r in returns {
            let d = r - mean;
            let d2 = d * d;
            m2 += d2;
            m3 += d2 * d;
            m4 += d2 * d2;
        }
        let (m2, m3, m4) = (m2 / n, m3 / n, m4 / n);
        let sample_std = (m2 * n / (n - 1.0)).sqrt();
        ReturnShape {
            sharpe: if sample_std > 0.0 {
                mean / sample_std
            } else {
                f64::NAN
            },
            observations: returns.len() as u64,
            skew: m3 / m2.powf(1.5),
            kurtosis: m4 / (m2 * m2),
        }
    }
}

fn normal() -> Normal {
    // Mean 0, deviation 1 is always a valid normal.
    Normal::standard()
}

/// SR₀: the expected maximum per-period Sharpe of `trials` independent
/// trials whose Sharpes have variance `variance`.
pub fn expected_max_sharpe(variance: f64, trials: f64) -> f64 {
    if trials < 2.0 || variance.is_nan() || variance < 0.0 {
        return f64::NAN;
    }
    let n = normal();
    let e = std::f64::consts::E;
    variance.sqrt()
        * ((1.0 - EULER_GAMMA) * n.inverse_cdf(1.0 - 1.0 / trials)
            + EULER_GAMMA * n.inverse_cdf(1.0 - 1.0 / (trials * e)))
}

/// DSR of a series of `shape` against the benchmark Sharpe `sr0`.
pub fn deflated_sharpe(shape: &ReturnShape, sr0: f64) -> f64 {
    let sr = shape.sharpe;
    let t = shape.observations as f64;
    let denominator = 1.0 - shape.skew * sr + (shape.kurtosis - 1.0) / 4.0 * sr * sr;
    if t < 2.0 || denominator <= 0.0 || !denominator.is_finite() {
        return f64::NAN;
    }
    normal().cdf((sr - sr0) * (t - 1.0).sqrt() / denominator.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bailey & López de Prado (2014), the numerical example: N = 100
    /// trials, V = 0.5/250, T = 1250, SR = 2.5/√250, γ₃ = −3, γ₄ = 10.
    #[test]
    fn the_papers_example() {
        let sr0 = expected_max_sharpe(0.5 / 250.0, 100.0);
        assert!((sr0 - 0.113172).abs() < 5e-7, "{sr0}");
        let shape = ReturnShape {
            sharpe: 2.5 / 250f64.sqrt(),
            observations: 1250,
            skew: -3.0,
            kurtosis: 10.0,
        };
        let dsr = deflated_sharpe(&shape, sr0);
        assert!((dsr - 0.900397).abs() < 5e-7, "{dsr}");
    }

    #[test]
    fn shape_by_hand() {
        // r = 1, 2, 3, 6: mean 3, deviations −2 −1 0 3.
        // m2 = 14/4, m3 = (−8 −1 + 27)/4 = 4.5, m4 = (16 + 1 + 81)/4 = 24.5.
        let s = ReturnShape::of(&[1.0, 2.0, 3.0, 6.0]);
        assert_eq!(s.observations, 4);
        assert!((s.sharpe - 3.0 / (14.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((s.skew - 4.5 / 3.5f64.powf(1.5)).abs() < 1e-15);
        assert!((s.kurtosis - 24.5 / 12.25).abs() < 1e-15);
    }

    #[test]
    fn more_trials_raise_the_bar() {
        let few = expected_max_sharpe(0.01, 10.0);
        let many = expected_max_sharpe(0.01, 1e7);
        assert!(few > 0.0 && many > few);
        assert!(expected_max_sharpe(0.01, 1.0).is_nan());
    }
}
