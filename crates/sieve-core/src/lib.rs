//! sieve-core: everything sieve knows about one backtest, from plain typed
//! inputs. Its modules depend one way (`scripts/check_layers.py` checks it),
//! lowest first:
//!
//! * [`error`], [`format`] (numbers and times as files write them), [`param`]
//!   (what a strategy parameter is), [`key`] (the config keys the modules
//!   below `config` name in their errors).
//! * [`data`] loads and validates bars into columnar [`data::Bars`];
//!   [`indicators`] computes each distinct indicator setting once
//!   ([`indicators::IndicatorSet`]); [`engine`] fills target positions in f64
//!   (fees, slippage, lots, shorts); [`metrics`] scores an equity curve over
//!   the full / score / holdout windows.
//! * [`grid`]: a parameter grid over [`param::ParamSpec`]s, walked by index.
//! * [`strategy`]: bars + one parameter set → a target position per bar;
//!   [`rules`] compiles strategies written as rules into one.
//! * [`evaluate`] runs strategy → engine → metrics for one parameter set,
//!   [`lanes`] for several at once (bit-identical), [`market`] over several
//!   instruments.
//! * [`robust`]: the statistics that say whether an optimum is real
//!   (Deflated Sharpe, PBO); plain numbers in, numbers out, no other module.
//! * [`config`], on top: the only module of this crate that reads TOML
//!   (the data, strategy, backtest and score sections; the run sections
//!   are sieve-run's `settings`); it turns a config into the typed specs the others take
//!   ([`evaluate::ScoringSpec`], [`grid::ParamSpace`], a compiled strategy).
//!
//! Screening and verification (other crates) only combine these pieces, so the
//! screen score and the exact score come from the same arithmetic.

pub mod cancel;
pub mod config;
pub mod data;
pub mod engine;
pub mod error;
pub mod evaluate;
pub mod format;
pub mod grid;
pub mod indicators;
pub mod key;
pub mod lanes;
pub mod market;
pub mod metrics;
pub mod param;
pub mod random;
pub mod robust;
pub mod rules;
mod simd;
pub mod strategy;

pub use error::{Error, ErrorKind, Result};
