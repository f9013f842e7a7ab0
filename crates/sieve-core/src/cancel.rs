//! A process-wide request to stop, for the steps that take no cancel token
//! of their own (reading a data file, drawing a report): a front end sets
//! it from its signal handler, and those steps check it as they go, ending
//! with [`Error::Interrupted`].

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// Set once a stop is requested (the CLI's first SIGINT/SIGTERM).
pub static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Whether a stop has been requested.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// `Err(Interrupted)` once a stop has been requested.
pub fn check() -> Result<()> {
    match requested() {
        true => Err(Error::Interrupted("interrupted".into())),
        false => Ok(()),
    }
}
