//! sieve-run: the jobs a user runs, built from the core and the screening
//! backends. Front ends (the CLI, the Python package) call [`jobs`] and the
//! single-step modules; they never assemble a job themselves.
//!
//! Modules depend one way (`scripts/check_layers.py` checks it), lowest
//! first:
//!
//! * [`files`], [`text`], [`outcome`] (how a job ends: [`outcome::Ended`],
//!   [`outcome::Stop`]), [`shard`], [`settings`] (the run sections of the
//!   config, checked), [`inputs`] (the data a config names), [`study`]
//!   ([`Study`]: one strategy, grid, config and data set, checked, hashed
//!   and shared).
//! * One step each: [`sweep`] (screen a grid, a shard or a proposal into
//!   `sweep.csv`), [`merge`] (shards into exactly the unsharded file),
//!   [`candidates`], [`verify`] (the exact engine on candidates),
//!   [`plateau`] (neighbourhoods), [`backtest`] (and the config of one),
//!   [`signals`] (signals of one's own), [`rundir`] (a run folder's files),
//!   [`robust`] (DSR, PBO of a run), [`best`] (`best.json`).
//! * The two seams of the loop: [`executor`] (where a screen runs: the
//!   [`executor::SweepExecutor`] trait, in-process today) and [`search`]
//!   (what to screen next: the [`search::Search`] trait, today's zoom-in
//!   its first method).
//! * [`control`]: what the loops share — options (the executor among
//!   them), the [`control::Observer`], the clock and stop signal;
//!   [`progress`] is the terminal's observer.
//! * The loops: [`optimize`] (screen → verify → zoom in, resumable, its
//!   stages in `stages`), [`walkforward`] (the optimize loop per fold, its
//!   preconditions in `walkforward::check`).
//! * [`report`]: the HTML report of a run folder or a walk-forward.
//! * [`jobs`], on top: sweep, optimize and walk-forward as the front ends run
//!   them, the report written by an observer, and the built-in example.
//!
//! Every file is written to a temporary name and renamed.

pub mod backtest;
pub mod best;
pub mod candidates;
pub mod control;
pub mod executor;
pub mod files;
pub mod inputs;
pub mod jobs;
pub mod kube;
pub mod merge;
pub mod optimize;
pub mod outcome;
pub mod plateau;
pub mod portfolio;
pub mod progress;
pub mod report;
pub mod robust;
pub mod rundir;
pub mod search;
pub mod settings;
pub mod shard;
pub mod signals;
mod stages;
pub mod study;
pub mod sweep;
pub mod text;
pub mod verify;
pub mod walkforward;

pub use study::Study;
