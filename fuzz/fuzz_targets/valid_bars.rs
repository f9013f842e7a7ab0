//! What every loaded `Bars` satisfies, whatever the format it came from.
use sieve_core::data::Bars;

pub fn assert_valid(bars: &Bars) {
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
