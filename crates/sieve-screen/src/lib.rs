//! sieve-screen: evaluate every combination of a parameter grid and keep the
//! best K, in bounded memory.
//!
//! A [`ScreenBackend`] scores a slice of grid indices and returns a [`Screen`]:
//! the top K (by the one ranking order of sieve: score, NaN last, ties by
//! grid index) and the moments of the objective over every combination
//! evaluated. Backends: [`CpuBackend`] (rayon) and the GPU backend behind the
//! `gpu` feature (a stand-in that returns a clear error when the feature is
//! off, so no other code needs `cfg`).
//!
//! Memory is O(bars × distinct indicator settings + K × threads): the grid
//! is walked by index, never materialised, and nothing is kept per
//! combination beyond the running top K.

mod backend;
mod cpu;
// The wgpu backend, or a stand-in with the same API that says how to get it.
#[cfg(feature = "gpu")]
mod gpu;
#[cfg(not(feature = "gpu"))]
#[path = "gpu_standin.rs"]
mod gpu;
mod stats;
mod topk;
pub mod wgsl;

pub use backend::{
    backend_by_name, Checkpoint, ScreenBackend, ScreenJob, SeriesPlan, SERIES_BUDGET,
};
pub use cpu::CpuBackend;
pub use gpu::GpuBackend;
pub use stats::ObjectiveStats;
pub use topk::{Scored, TopK};

/// What a screen returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Screen {
    /// Best first, at most K.
    pub top: Vec<Scored>,
    pub stats: ObjectiveStats,
    /// The per-period score-window Sharpe of every combination (the
    /// Deflated Sharpe's trial variance); empty where a backend does not
    /// compute it.
    pub sharpe: ObjectiveStats,
}

/// A rayon pool of `threads` workers (0 = one per core), the one way sieve
/// sizes its parallel work.
/// More workers than this is a typo, not a machine: refused before any
/// thread starts.
pub const MAX_THREADS: usize = 4096;

pub fn thread_pool(threads: usize) -> sieve_core::Result<rayon::ThreadPool> {
    if threads > MAX_THREADS {
        return Err(sieve_core::Error::Invalid(format!(
            "--threads {threads}: at most {MAX_THREADS} (0 = one per core)"
        )));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| sieve_core::Error::Invalid(format!("cannot start worker threads: {e}")))
}
