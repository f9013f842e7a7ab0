//! Stand-in for the wgpu backend when sieve is built without the `gpu`
//! feature: same API, a clear error instead of a result.

use sieve_core::{Error, Result};

use std::ops::ControlFlow;

use crate::backend::{Checkpoint, ScreenBackend, ScreenJob, Screened};

pub struct GpuBackend;

const NOT_BUILT: &str = "the GPU backend is not in this build of sieve; rebuild with `cargo build --release --features gpu` (or use --backend cpu)";

impl GpuBackend {
    pub fn new() -> Result<Self> {
        Err(Error::Gpu(NOT_BUILT.into()))
    }
}

impl ScreenBackend for GpuBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn screen(
        &self,
        _: &ScreenJob<'_>,
        _: &mut dyn FnMut(&Checkpoint) -> Result<ControlFlow<()>>,
    ) -> Result<Screened> {
        Err(Error::Gpu(NOT_BUILT.into()))
    }
}
