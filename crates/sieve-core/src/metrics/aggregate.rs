//! One objective from several instruments (`score.aggregate`): each
//! instrument is simulated on its own bars; the combination's objective is
//! the mean, median or minimum of theirs, taken in instrument order so the
//! result is the same bits on every run.

use std::fmt;
use std::str::FromStr;

use super::Metrics;

/// How instrument objectives combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Aggregate {
    #[default]
    Mean,
    Median,
    /// The worst instrument: a setting must work everywhere.
    Min,
}

impl Aggregate {
    pub const ALL: [Aggregate; 3] = [Aggregate::Mean, Aggregate::Median, Aggregate::Min];

    pub fn name(self) -> &'static str {
        match self {
            Aggregate::Mean => "mean",
            Aggregate::Median => "median",
            Aggregate::Min => "min",
        }
    }
}

impl fmt::Display for Aggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Aggregate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Aggregate::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| format!("unknown aggregate \"{s}\"; expected mean, median or min"))
    }
}

/// `score.aggregate` and `score.aggregate_skip_undefined`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aggregation {
    pub how: Aggregate,
    /// Leave out instruments whose objective is undefined (NaN) instead of
    /// making the aggregate undefined.
    pub skip_undefined: bool,
}

impl Aggregation {
    /// The aggregate of `values` (one per instrument, in instrument order).
    /// NaN when any is NaN (unless skipped) or none is left. One value is
    /// returned as it is.
    pub fn of(&self, values: &[f64]) -> f64 {
        if let [one] = values {
            return *one;
        }
        let defined = values.iter().filter(|v| !v.is_nan()).count();
        if defined == 0 || (defined < values.len() && !self.skip_undefined) {
            return f64::NAN;
        }
        let kept = values.iter().copied().filter(|v| !v.is_nan());
        match self.how {
            Aggregate::Mean => kept.sum::<f64>() / defined as f64,
            Aggregate::Min => kept.fold(f64::INFINITY, f64::min),
            Aggregate::Median => {
                let mut sorted: Vec<f64> = kept.collect();
                sorted.sort_by(f64::total_cmp);
                let mid = sorted.len() / 2;
                if sorted.len() % 2 == 1 {
                    sorted[mid]
                } else {
                    (sorted[mid - 1] + sorted[mid]) / 2.0
                }
            }
        }
    }
}

/// Each metric's mean over instruments, trades summed: the metric columns
/// of a several-instrument result (its objective is the aggregate, not
/// these). NaN metrics make their mean NaN.
pub fn mean_metrics(all: &[Metrics]) -> Metrics {
    if let [one] = all {
        return *one;
    }
    let n = all.len() as f64;
    let mean = |f: fn(&Metrics) -> f64| all.iter().map(f).sum::<f64>() / n;
    Metrics {
        total_return: mean(|m| m.total_return),
        cagr: mean(|m| m.cagr),
        max_drawdown: mean(|m| m.max_drawdown),
        calmar: mean(|m| m.calmar),
        sharpe: mean(|m| m.sharpe),
        sortino: mean(|m| m.sortino),
        trades: all.iter().map(|m| m.trades).sum(),
        win_rate: mean(|m| m.win_rate),
        profit_factor: mean(|m| m.profit_factor),
        avg_trade: mean(|m| m.avg_trade),
        exposure: mean(|m| m.exposure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_aggregates() {
        let agg = |how, skip| Aggregation {
            how,
            skip_undefined: skip,
        };
        let v = [3.0, -1.0, 10.0, 2.0];
        assert_eq!(agg(Aggregate::Mean, false).of(&v), 3.5);
        assert_eq!(agg(Aggregate::Median, false).of(&v), 2.5);
        assert_eq!(agg(Aggregate::Median, false).of(&v[..3]), 3.0);
        assert_eq!(agg(Aggregate::Min, false).of(&v), -1.0);
        let with_nan = [3.0, f64::NAN, 1.0];
        for how in Aggregate::ALL {
            assert!(agg(how, false).of(&with_nan).is_nan(), "{how}");
        }
        assert_eq!(agg(Aggregate::Mean, true).of(&with_nan), 2.0);
        assert_eq!(agg(Aggregate::Median, true).of(&with_nan), 2.0);
        assert_eq!(agg(Aggregate::Min, true).of(&with_nan), 1.0);
        assert!(agg(Aggregate::Mean, true)
            .of(&[f64::NAN, f64::NAN])
            .is_nan());
        // Infinities are defined values (a Calmar without drawdown).
        assert_eq!(agg(Aggregate::Min, false).of(&[f64::INFINITY, 2.0]), 2.0);
    }

    #[test]
    fn two_copies_aggregate_to_the_value_itself() {
        for x in [0.1, 1.0 / 3.0, -7.25e-3, 1e300, f64::INFINITY] {
            for how in Aggregate::ALL {
                let a = Aggregation {
                    how,
                    skip_undefined: false,
                };
                assert_eq!(a.of(&[x, x]).to_bits(), x.to_bits(), "{how} {x}");
                assert_eq!(a.of(&[x]).to_bits(), x.to_bits());
            }
        }
    }
}
