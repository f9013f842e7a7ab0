//! The candidates reader of `sieve verify`: any bytes give candidates whose
//! parameters are all valid, or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for name in ["sma_cross", "activation"] {
        let strategy = sieve_core::strategy::lookup(name).unwrap();
        if let Ok(list) = sieve_run::candidates::parse(data, strategy, Some(100)) {
            assert!(!list.is_empty() && list.len() <= 100);
            for c in &list {
                sieve_core::strategy::check_params(strategy, &c.params).unwrap();
            }
        }
    }
});
