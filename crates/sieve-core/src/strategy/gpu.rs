//! What the GPU screen runs for a strategy: a hand-written kernel of the
//! engine's WGSL, a generated one, or none (and why).

use crate::indicators::Indicator;

/// A strategy's device kernel ([`super::Strategy::gpu_kernel`]).
pub enum GpuKernel<'a> {
    /// The hand-written crossing kernel: two averages (fast, slow).
    Cross,
    /// The hand-written `activation` kernel.
    Activation,
    /// An entry point generated for this strategy (rule strategies).
    Generated(Box<dyn GeneratedKernel + 'a>),
    /// None for this strategy: it uses a construct the device cannot run
    /// (named, for the note that says the CPU screens it).
    Unsupported(String),
    /// No kernel at all.
    None,
}

/// A generated entry point and how to feed it one combination.
pub trait GeneratedKernel: Send + Sync {
    /// The WGSL of the entry point (to follow the engine prelude).
    fn wgsl(&self) -> &str;

    /// Whether the kernel reads this shared series.
    fn reads(&self, key: &Indicator) -> bool;

    /// Values uploaded per combination.
    fn n_values(&self) -> usize;

    /// Series offsets uploaded per combination.
    fn n_columns(&self) -> usize;

    /// One combination's uploads: its values (f32) and the keys of the
    /// shared series it reads, appended; `scratch` is reused between calls.
    fn inputs(
        &self,
        params: &[f64],
        scratch: &mut Vec<f64>,
        values: &mut Vec<f32>,
        keys: &mut Vec<Indicator>,
    );
}
