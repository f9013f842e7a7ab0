//! The run sections of the config (`[sweep]`, `[verify]`, `[optimize]`,
//! `[robust]`, `[walkforward]`), as sieve-core's config module reads them.

pub use sieve_core::config::run::{RunSettings, Span, WalkForward};
