//! The GPU kernels' source: the engine (in f32, mirroring sieve-core's),
//! the built-in strategies' entry points, and a rule strategy's generated
//! entry point appended to them. Plain text, so `--emit-wgsl` works in any
//! build.

use sieve_core::strategy::{GeneratedKernel, GpuKernel, Strategy};

/// The engine prelude and the built-in kernels (`cross`, `activation`).
pub const ENGINE: &str = include_str!("gpu/screen.wgsl");

/// The whole WGSL module of a generated kernel.
pub fn generated_module(kernel: &dyn GeneratedKernel) -> String {
    format!("{ENGINE}\n{}", kernel.wgsl())
}

/// What the GPU backend runs for `strategy`: its module's WGSL when it is a
/// rule strategy the device can run; `Err` names why not (not rules, or the
/// construct that keeps it on the CPU).
pub fn strategy_module(strategy: &dyn Strategy) -> Result<String, String> {
    match strategy.gpu_kernel() {
        GpuKernel::Generated(k) => Ok(generated_module(k.as_ref())),
        GpuKernel::Unsupported(construct) => Err(construct),
        GpuKernel::Cross | GpuKernel::Activation | GpuKernel::None => Err(format!(
            "'{}' is a built-in strategy, not rules; its kernel is hand-written",
            strategy.name()
        )),
    }
}
