//! How the exact engine fills and what it charges: [`Fill`] and
//! [`EngineConfig`] (fees, slippage, lots, cash, leverage).

/// When a target decided on bar t's close is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// At open[t+1]; a target on the last bar is not filled.
    #[default]
    NextOpen,
    /// At close[t].
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineConfig {
    pub fill: Fill,
    /// Fraction of traded notional charged on every fill, taken from cash.
    pub fee: f64,
    /// Buy at p·(1+slippage), sell at p·(1−slippage).
    pub slippage: f64,
    /// Units are rounded down to a multiple of this; 0 = fractional units.
    pub lot_size: f64,
    pub initial_cash: f64,
    /// The largest `strategy.size` a trade may take (a larger one is
    /// capped here).
    pub max_leverage: f64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            fill: Fill::NextOpen,
            fee: 0.0,
            slippage: 0.0,
            lot_size: 0.0,
            initial_cash: 10_000.0,
            max_leverage: 1.0,
        }
    }
}
