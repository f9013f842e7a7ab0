//! Integration tests of sieve-core against hand-computed facts.

mod columnar;
mod engine;
mod frames;
mod lanes;
mod loader;
mod management;
mod metrics;
mod robust;
mod rules;
mod strategies;

use sieve_core::data::Bars;

/// Daily bars from 2020-01-01 with the given opens and closes; high/low
/// bracket them by 1.
pub fn bars(open: &[f64], close: &[f64]) -> Bars {
    let n = open.len();
    Bars {
        time: (0..n as i64)
            .map(|i| 1_577_836_800_000 + i * 86_400_000)
            .collect(),
        open: open.to_vec(),
        high: open
            .iter()
            .zip(close)
            .map(|(o, c)| o.max(*c) + 1.0)
            .collect(),
        low: open
            .iter()
            .zip(close)
            .map(|(o, c)| o.min(*c) - 1.0)
            .collect(),
        close: close.to_vec(),
        volume: None,
        timezone: None,
        extra: Vec::new(),
        unread: Vec::new(),
        detail: None,
        frames: None,
    }
}

pub fn close_to(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[macro_export]
macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b): (f64, f64) = ($a, $b);
        assert!(
            $crate::close_to(a, b),
            "{} = {a}, expected {b}",
            stringify!($a)
        );
    }};
}
