//! The bar CSV loader: any bytes give bars or an error, never a panic, and
//! loaded bars satisfy every validation rule of the loader.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "valid_bars.rs"]
mod valid_bars;

fuzz_target!(|data: &[u8]| {
    if let Ok(bars) = sieve_core::data::parse_csv(data) {
        valid_bars::assert_valid(&bars);
    }
});
