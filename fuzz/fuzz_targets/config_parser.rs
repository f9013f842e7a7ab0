//! The TOML config parser and grid builder: any text gives a config (whose
//! grid can be built or refused) or an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(config) = sieve_core::config::Config::parse(text) {
        if let Ok(strategy) = sieve_core::strategy::lookup(&config.strategy) {
            if let Ok(space) = config.space(strategy) {
                // Index → parameters → index round-trips at both ends.
                for i in [0, space.size().saturating_sub(1)] {
                    if space.size() > 0 {
                        assert_eq!(space.index_of(&space.params_of(i)), Some(i));
                    }
                }
            }
        }
    }
});
