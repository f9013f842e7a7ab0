//! [`Metrics`], every metric of one window, by name.

/// Every metric of one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    pub total_return: f64,
    pub cagr: f64,
    pub max_drawdown: f64,
    pub calmar: f64,
    pub sharpe: f64,
    pub sortino: f64,
    pub trades: u64,
    pub win_rate: f64,
    pub profit_factor: f64,
    pub avg_trade: f64,
    pub exposure: f64,
}

impl Metrics {
    /// Column names, in the order of [`Metrics::values`].
    pub const NAMES: [&'static str; 11] = [
        "total_return",
        "cagr",
        "max_drawdown",
        "calmar",
        "sharpe",
        "sortino",
        "trades",
        "win_rate",
        "profit_factor",
        "avg_trade",
        "exposure",
    ];

    /// Every figure undefined (NaN) but the count of trades.
    pub fn undefined(trades: u64) -> Metrics {
        let nan = f64::NAN;
        Metrics {
            total_return: nan,
            cagr: nan,
            max_drawdown: nan,
            calmar: nan,
            sharpe: nan,
            sortino: nan,
            trades,
            win_rate: nan,
            profit_factor: nan,
            avg_trade: nan,
            exposure: nan,
        }
    }

    pub fn values(&self) -> [f64; 11] {
        [
            self.total_return,
            self.cagr,
            self.max_drawdown,
            self.calmar,
            self.sharpe,
            self.sortino,
            self.trades as f64,
            self.win_rate,
            self.profit_factor,
            self.avg_trade,
            self.exposure,
        ]
    }
}
