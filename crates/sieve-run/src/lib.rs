//! sieve-run: the jobs a user runs, built from the core and the screening
//! backends.
//!
//! * [`Study`]: one strategy, grid, config and data set, checked and hashed.
//! * [`sweep`]: screen a grid (or one shard of it) into `sweep.csv` +
//!   `sweep.meta.json`; [`merge`] joins shards into exactly the unsharded file.
//! * [`verify`]: re-run candidates through the exact engine in parallel into
//!   `verified.csv`, with the screen/verify agreement.
//!
//! Every file is written to a temporary name and renamed.

pub mod backtest;
pub mod best;
pub mod candidates;
pub mod control;
pub mod files;
pub mod inputs;
pub mod jobs;
pub mod merge;
pub mod optimize;
pub mod progress;
pub mod refine;
pub mod report;
pub mod robust;
pub mod rundir;
pub mod settings;
pub mod shard;
mod stages;
pub mod study;
pub mod sweep;
pub mod text;
pub mod verify;
pub mod walkforward;

pub use study::Study;
