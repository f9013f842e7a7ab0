//! The progress display of long steps (a bar on a terminal, else a line
//! every 30 s), re-exported from `sieve_run`.

pub use sieve_run::progress::Progress;
