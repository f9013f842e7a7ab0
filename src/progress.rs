pub use sieve_run::progress::Progress;
