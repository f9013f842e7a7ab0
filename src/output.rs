//! Human-readable numbers and tables (shared with the Python package).
pub use sieve_run::text::{human, table};
