//! The `sieve` binary: argument parsing and output only; the work lives in
//! the library crates.

mod args;
mod commands;
mod inputs;
mod output;
mod progress;

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Parser;

/// Exit statuses (documented in docs/config.md and the README).
pub mod status {
    /// Bad input, config or files.
    pub const ERROR: u8 = 2;
    /// No combination had a finite objective: there is no best.
    pub const NO_RESULT: u8 = 3;
    /// Stopped by SIGINT/SIGTERM (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: u8 = 130;
}

/// An ending that is not a success: a message and an exit status.
#[derive(Debug)]
pub struct Exit {
    pub status: u8,
    pub message: String,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// Set by the first SIGINT/SIGTERM; long work stops at its next checkpoint
/// (the library's own steps, loading data and drawing reports, read it
/// too).
pub use sieve_core::cancel::REQUESTED as INTERRUPT;

/// A second signal this soon after the first is the same signal delivered
/// twice (to the process, then to its group), not a user insisting.
const SIGNAL_REPEAT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

fn main() -> ExitCode {
    // First signal: stop gracefully at the next checkpoint. A second one
    // at least a second later: now. GNU `timeout` (and Slurm, and a shell
    // forwarding to its process group) delivers one SIGTERM twice, to the
    // process and then to its group, microseconds apart; that repeat must
    // not cost the checkpoint.
    let first = std::sync::OnceLock::<std::time::Instant>::new();
    let _ = ctrlc::set_handler(move || {
        let at = *first.get_or_init(std::time::Instant::now);
        let repeated = INTERRUPT.swap(true, Ordering::SeqCst);
        if repeated && at.elapsed() >= SIGNAL_REPEAT_GRACE {
            std::process::exit(i32::from(status::INTERRUPTED));
        }
    });
    let cli = args::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`sieve … | head`) is not an error worth a message.
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            if let Some(exit) = err.downcast_ref::<Exit>() {
                eprintln!("{}", exit.message);
                return ExitCode::from(exit.status);
            }
            if INTERRUPT.load(Ordering::SeqCst) {
                // A step that checkpointed says so; any other just stopped.
                match err.downcast_ref::<sieve_core::Error>() {
                    Some(sieve_core::Error::Interrupted(how)) => eprintln!("{how}"),
                    _ => eprintln!("interrupted"),
                }
                return ExitCode::from(status::INTERRUPTED);
            }
            eprintln!("error: {err:#}");
            ExitCode::from(status::ERROR)
        }
    }
}
