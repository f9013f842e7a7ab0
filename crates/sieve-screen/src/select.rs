//! The backend a config names.

use sieve_core::{Error, Result};

use crate::backend::ScreenBackend;
use crate::cpu::CpuBackend;
use crate::gpu::GpuBackend;

/// `cpu` or `gpu`.
pub fn backend_by_name(name: &str) -> Result<Box<dyn ScreenBackend>> {
    match name {
        "cpu" => Ok(Box::new(CpuBackend)),
        "gpu" => Ok(Box::new(GpuBackend::new()?)),
        other => Err(Error::config(
            sieve_core::key::SWEEP_BACKEND,
            format!("unknown backend '{other}'; expected cpu or gpu"),
        )),
    }
}
