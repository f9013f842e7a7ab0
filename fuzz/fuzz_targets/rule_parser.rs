//! The rule language: any text as an entry rule (the first line) and an exit
//! rule (the rest) compiles or is refused with an error; what compiles runs
//! on a small series in both directions without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        sieve_core::rules::fuzz_one(text);
    }
});
