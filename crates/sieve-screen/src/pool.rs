//! The one way sieve sizes its parallel work.

/// More workers than this is a typo, not a machine: refused before any
/// thread starts.
pub const MAX_THREADS: usize = 4096;

/// A rayon pool of `threads` workers (0 = one per core).
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
