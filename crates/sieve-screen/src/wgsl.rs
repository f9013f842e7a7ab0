//! The GPU kernels' source: the engine (in f32, mirroring sieve-core's),
//! the built-in strategies' entry points, and a rule strategy's generated
//! entry point appended to them. Plain text, so `--emit-wgsl` works in any
//! build.

use sieve_core::rules::RuleKernel;
use sieve_core::strategy::Strategy;

/// The engine prelude and the built-in kernels (`cross`, `activation`).
pub const ENGINE: &str = include_str!("gpu/screen.wgsl");

/// The whole WGSL module of a rule strategy's kernel.
pub fn rule_module(kernel: &RuleKernel) -> String {
    format!("{ENGINE}\n{}", kernel.entry)
}

/// What the GPU backend runs for `strategy`: its module's WGSL when it is a
/// rule strategy the device can run; `Err` names why not (not rules, or the
/// construct that keeps it on the CPU).
pub fn strategy_module(strategy: &dyn Strategy) -> Result<String, String> {
    match strategy.as_rules() {
        Some(rules) => rules.gpu_kernel().map(|k| rule_module(&k)),
        None => Err(format!(
            "'{}' is a built-in strategy, not rules; its kernel is hand-written",
            strategy.name()
        )),
    }
}
