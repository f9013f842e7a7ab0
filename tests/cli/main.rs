//! End-to-end tests of the `sieve` binary (one integration-test binary).

mod backtest;
mod cluster;
mod columns;
mod corpus;
mod detail;
mod formats;
mod frames;
mod golden;
mod instruments;
mod optimize;
mod plateau;
mod portfolio;
mod robust;
mod rules;
mod search;
mod sweep;
mod trust;
mod verify;
mod walkforward;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: this build's, or `SIEVE_TEST_BIN` (an earlier
/// build, e.g. to pin `tests/golden/` with the code before a refactor).
pub fn sieve() -> Command {
    match std::env::var_os("SIEVE_TEST_BIN") {
        Some(bin) => Command::new(bin),
        None => Command::new(env!("CARGO_BIN_EXE_sieve")),
    }
}

pub fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Runs `sieve args…`, asserting success; returns stdout.
pub fn run_ok(args: &[&str]) -> String {
    let out = sieve().args(args).output().expect("spawn sieve");
    assert!(
        out.status.success(),
        "sieve {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs `sieve args…`, asserting failure; returns the output.
pub fn run_err(args: &[&str]) -> Output {
    let out = sieve().args(args).output().expect("spawn sieve");
    assert!(!out.status.success(), "sieve {args:?} should fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "sieve {args:?} panicked:\n{err}");
    out
}

/// Asserts `out` failed with exit status 2 and says `text` on stderr.
pub fn assert_refused(out: &Output, text: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(stderr(out).contains(text), "{}", stderr(out));
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
