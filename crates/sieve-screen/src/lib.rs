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
//!
//! Modules, lowest first: `stats` and `topk` (what a screen accumulates),
//! `backend` (the trait, the job and [`Screen`]), `pool` (worker threads),
//! `cpu`, `gpu` (which falls back to `cpu`), `select` (the backend a config
//! names); [`wgsl`] is the kernels' text. A strategy offers its GPU kernel
//! ([`sieve_core::strategy::Strategy::gpu_kernel`]); nothing here matches
//! strategies by name.

mod backend;
mod cpu;
// The wgpu backend, or a stand-in with the same API that says how to get it.
#[cfg(feature = "gpu")]
mod gpu;
#[cfg(not(feature = "gpu"))]
#[path = "gpu_standin.rs"]
mod gpu;
mod pool;
mod select;
mod stats;
mod topk;
pub mod wgsl;

pub use backend::{
    sorted_indices, Batch, Checkpoint, Running, Screen, ScreenBackend, ScreenJob, Screened,
    SeriesPlan, SERIES_BUDGET,
};
pub use cpu::{CpuBackend, CHUNK};
pub use gpu::GpuBackend;
pub use pool::{thread_pool, MAX_THREADS};
pub use select::backend_by_name;
pub use stats::{ObjectiveStats, StatsNode, StatsTree};
pub use topk::{Scored, TopK};
