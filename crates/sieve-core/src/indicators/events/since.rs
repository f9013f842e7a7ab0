//! Running values since a condition was last true. The condition arrives
//! as 1 / 0 (a true/false series read as a number); before it is first
//! true every value is undefined (NaN). An undefined `x` leaves the value
//! undefined until the condition is next true.

/// Bars since `c` was last true: 0 on a bar where it is true.
pub fn barssince(c: &[f64]) -> Vec<f64> {
    let mut last = None;
    c.iter()
        .enumerate()
        .map(|(t, &v)| {
            if v == 1.0 {
                last = Some(t);
            }
            last.map_or(f64::NAN, |l| (t - l) as f64)
        })
        .collect()
}

/// `x` on the last bar where `c` was true (this one included).
pub fn valuewhen(c: &[f64], x: &[f64]) -> Vec<f64> {
    since(c, x, |kept, _| kept)
}

/// The sum of `x` from the last bar where `c` was true through this one.
pub fn sum_since(c: &[f64], x: &[f64]) -> Vec<f64> {
    since(c, x, |total, v| total + v)
}

/// The highest `x` from the last bar where `c` was true through this one.
pub fn highest_since(c: &[f64], x: &[f64]) -> Vec<f64> {
    since(c, x, |top, v| if v > top || v.is_nan() { v } else { top })
}

/// The lowest `x` from the last bar where `c` was true through this one.
pub fn lowest_since(c: &[f64], x: &[f64]) -> Vec<f64> {
    since(c, x, |low, v| if v < low || v.is_nan() { v } else { low })
}

/// Restarts at `x` where `c` is true, else folds `x` into the running
/// value with `step` (which keeps NaN: `NaN + v`, a NaN `top` never
/// replaced by a comparison).
fn since(c: &[f64], x: &[f64], step: fn(f64, f64) -> f64) -> Vec<f64> {
    let mut value = f64::NAN;
    c.iter()
        .zip(x)
        .map(|(&on, &v)| {
            value = if on == 1.0 { v } else { step(value, v) };
            value
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAN: f64 = f64::NAN;

    fn same(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x == y || x.is_nan() && y.is_nan())
    }

    #[test]
    fn by_hand() {
        let c = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0];
        let x = [9.0, 2.0, 5.0, 1.0, 4.0, 7.0];
        assert!(same(&barssince(&c), &[NAN, 0.0, 1.0, 2.0, 0.0, 1.0]));
        assert!(same(&valuewhen(&c, &x), &[NAN, 2.0, 2.0, 2.0, 4.0, 4.0]));
        assert!(same(&sum_since(&c, &x), &[NAN, 2.0, 7.0, 8.0, 4.0, 11.0]));
        assert!(same(
            &highest_since(&c, &x),
            &[NAN, 2.0, 5.0, 5.0, 4.0, 7.0]
        ));
        assert!(same(&lowest_since(&c, &x), &[NAN, 2.0, 2.0, 1.0, 4.0, 4.0]));
    }

    /// An undefined x: undefined until the condition is next true.
    #[test]
    fn an_undefined_value_lasts_until_the_next_event() {
        let c = [1.0, 0.0, 0.0, 1.0, 0.0];
        let x = [1.0, NAN, 3.0, 4.0, 5.0];
        assert!(same(&sum_since(&c, &x), &[1.0, NAN, NAN, 4.0, 9.0]));
        assert!(same(&highest_since(&c, &x), &[1.0, NAN, NAN, 4.0, 5.0]));
        assert!(same(&lowest_since(&c, &x), &[1.0, NAN, NAN, 4.0, 4.0]));
        assert!(same(&valuewhen(&c, &x), &[1.0, 1.0, 1.0, 4.0, 4.0]));
    }
}
