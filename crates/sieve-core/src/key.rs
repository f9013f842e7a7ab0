//! The config keys that modules below [`crate::config`] name in their
//! errors, in one place: a renamed key is one edit here. `config` reads the
//! TOML (and names the rest of its keys itself); the domain modules only
//! say which key a bad value came from.

pub const DATA_ADJUST: &str = "data.adjust";
pub const DATA_COLUMNS: &str = "data.columns";
pub const DATA_DETAIL: &str = "data.detail";
pub const DATA_NAMES: &str = "data.names";
pub const DATA_PATHS: &str = "data.paths";

pub const STRATEGY_NAME: &str = "strategy.name";
pub const STRATEGY_PARAMS: &str = "strategy.params";
pub const STRATEGY_DEFINE: &str = "strategy.define";
pub const STRATEGY_CONSTRAINTS: &str = "strategy.constraints";
pub const STRATEGY_SHORT_ENTRY: &str = "strategy.short_entry";
pub const STRATEGY_SHORT_EXIT: &str = "strategy.short_exit";
pub const STRATEGY_TRAILING_STOP: &str = "strategy.trailing_stop";

pub const BACKTEST_FEE: &str = "backtest.fee";
pub const BACKTEST_SLIPPAGE: &str = "backtest.slippage";
pub const BACKTEST_INITIAL_CASH: &str = "backtest.initial_cash";

pub const SCORE_START: &str = "score.score_start";
pub const HOLDOUT_START: &str = "score.holdout_start";
pub const SCORE_AGGREGATE: &str = "score.aggregate";
pub const SCORE_SHARES: &str = "score.shares";

pub const PORTFOLIO_SIZE: &str = "portfolio.size";
pub const PORTFOLIO_MAX_POSITIONS: &str = "portfolio.max_positions";
pub const PORTFOLIO_MAX_EXPOSURE: &str = "portfolio.max_exposure";
pub const PORTFOLIO_RANK_BY: &str = "portfolio.rank_by";
pub const PORTFOLIO_WEIGHT: &str = "portfolio.weight";
pub const PORTFOLIO_REBALANCE: &str = "portfolio.rebalance";

pub const SWEEP_BACKEND: &str = "sweep.backend";
pub const WALKFORWARD_START: &str = "walkforward.start";

/// `strategy.params.NAME`: one parameter's key.
pub fn param(name: &str) -> String {
    format!("{STRATEGY_PARAMS}.{name}")
}

/// `strategy.define.NAME`: one definition's key.
pub fn define(name: &str) -> String {
    format!("{STRATEGY_DEFINE}.{name}")
}

/// `strategy.KEY`: a key of `[strategy]`.
pub fn strategy(key: &str) -> String {
    format!("strategy.{key}")
}
