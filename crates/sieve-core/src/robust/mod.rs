//! Is an optimum real? Pure functions over return series and summary
//! statistics, one formula per file like the metrics:
//! [`dsr`] the Deflated Sharpe Ratio (Bailey & López de Prado, 2014),
//! [`pbo`] the Probability of Backtest Overfitting by combinatorially
//! symmetric cross-validation (Bailey, Borwein, López de Prado & Zhu, 2017);
//! and [`NeighbourAggregate`], how the plateau rule combines a candidate's
//! neighbourhood (in the optimize loop and in the PBO's selection).

pub mod dsr;
pub mod pbo;

/// `robust.neighbour_aggregate`: how a candidate's neighbourhood combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NeighbourAggregate {
    #[default]
    Mean,
    Min,
}

/// The simple returns of `equity` over bars `start..end`, the first against
/// the equity before the window (`initial` when the window starts at bar 0):
/// the convention every window metric uses.
pub fn window_returns(equity: &[f64], start: usize, end: usize, initial: f64) -> Vec<f64> {
    let mut prev = if start == 0 {
        initial
    } else {
        equity[start - 1]
    };
    equity[start..end]
        .iter()
        .map(|&e| {
            let r = e / prev - 1.0;
            prev = e;
            r
        })
        .collect()
}
