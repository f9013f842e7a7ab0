//! sieve-core: everything sieve knows about one backtest.
//!
//! The layers depend one way:
//!
//! * [`data`] loads and validates bars (or synthesises them) into columnar
//!   [`data::Bars`], held once and shared read-only.
//! * [`indicators`] computes each distinct indicator setting once
//!   ([`indicators::IndicatorSet`]); strategies only read them.
//! * [`strategy`] turns bars + one parameter set into a target position per bar;
//!   [`rules`] compiles strategies written in the config.
//! * [`engine`] fills those targets in f64 (fees, slippage, lots, shorts).
//! * [`metrics`] scores the equity curve over the full / score / holdout windows.
//! * [`lanes`] runs the engine and the screen's metrics for several
//!   combinations at once, bit-identical to the scalar path.
//! * [`config`] and [`grid`] describe what to run; they know nothing of how.
//!
//! Screening and verification (other crates) only combine these pieces, so the
//! screen score and the exact score come from the same arithmetic.

pub mod config;
pub mod data;
pub mod engine;
pub mod error;
pub mod evaluate;
pub mod format;
pub mod grid;
pub mod indicators;
pub mod lanes;
pub mod market;
pub mod metrics;
pub mod param;
pub mod robust;
pub mod rules;
mod simd;
pub mod strategy;

pub use error::{Error, Result};
