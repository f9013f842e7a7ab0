//! The Parquet and Arrow IPC readers: any bytes give bars or an error, never
//! a panic, and loaded bars satisfy every validation rule of the loader. The
//! magic bytes pick the reader, so mutations of either format's seeds keep
//! reaching that format's decoder.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sieve_core::data::LoadOptions;

#[path = "valid_bars.rs"]
mod valid_bars;

fuzz_target!(|data: &[u8]| {
    // Through the loader's entry point, which guards the decoders.
    let loaded = sieve_core::data::parse(data.to_vec(), &LoadOptions::default());
    if let Ok(loaded) = loaded {
        valid_bars::assert_valid(&loaded.bars);
    }
});
