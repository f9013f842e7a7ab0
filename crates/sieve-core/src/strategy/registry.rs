//! The built-in strategies by name: [`registry`] and [`lookup`].

use super::{Activation, DonchianBreakout, RsiReversion, Strategy, EMA_CROSS, SMA_CROSS};
use crate::error::{Error, Result};

/// Every built-in strategy, in the order `sieve strategies` lists them.
pub fn registry() -> &'static [&'static dyn Strategy] {
    static REGISTRY: [&dyn Strategy; 5] = [
        &SMA_CROSS,
        &EMA_CROSS,
        &RsiReversion,
        &DonchianBreakout,
        &Activation,
    ];
    &REGISTRY
}

/// The strategy called `name`, or an error listing the known ones.
pub fn lookup(name: &str) -> Result<&'static dyn Strategy> {
    registry()
        .iter()
        .copied()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            let known: Vec<_> = registry().iter().map(|s| s.name()).collect();
            Error::config(
                crate::key::STRATEGY_NAME,
                format!("unknown strategy '{name}'; known: {}", known.join(", ")),
            )
        })
}
