//! The bar CSV loader: any bytes give bars or an error, never a panic, and
//! loaded bars satisfy every validation rule of the loader.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(bars) = sieve_core::data::parse_csv(data) {
        assert!(!bars.is_empty());
        for i in 0..bars.len() {
            assert!(bars.low[i] > 0.0 && bars.close[i].is_finite());
            assert!(bars.high[i] >= bars.open[i].max(bars.close[i]));
            assert!(bars.low[i] <= bars.open[i].min(bars.close[i]));
            if i > 0 {
                assert!(bars.time[i] > bars.time[i - 1]);
            }
        }
    }
});
