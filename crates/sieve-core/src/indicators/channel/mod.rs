//! Rolling channels (Donchian). Both sides share one monotonic-deque walk,
//! O(bars) whatever the length.
mod highest;
mod lowest;
pub use highest::highest;
pub use lowest::lowest;

use std::collections::VecDeque;

/// Rolling extreme over the last `n` values, this one included; first value
/// at index n−1. `beats(a, b)` is true when `a` should replace `b`.
fn rolling_extreme(x: &[f64], n: usize, beats: impl Fn(f64, f64) -> bool) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if n == 0 {
        return out;
    }
    // Indices whose values are strictly better than every later one.
    let mut window: VecDeque<usize> = VecDeque::with_capacity(n + 1);
    for (i, &v) in x.iter().enumerate() {
        while window.back().is_some_and(|&j| !beats(x[j], v)) {
            window.pop_back();
        }
        window.push_back(i);
        if window.front().is_some_and(|&j| j + n <= i) {
            window.pop_front();
        }
        if i + 1 >= n {
            out[i] = x[window[0]];
        }
    }
    out
}
