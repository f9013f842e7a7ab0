//! Order-preserving 16-bit codes of series' values, which scans that
//! compare two series bar by bar (the crossing scan) read first: a quarter
//! of the bytes, sixteen values per AVX register.
//!
//! At each bar, a code is a non-decreasing function of the value, so
//! `code(a) < code(b)` at one bar implies `a < b` (and `>` likewise); only
//! equal codes need the values themselves. The map is the value rounded to
//! f32, its bits read as an integer that orders like the floats (a
//! piecewise-linear log2: the same relative precision at every level),
//! then scaled per bar so that the span of all the set's values at that
//! bar fills at least half the 65,536 codes (or, where it holds fewer f32
//! values than that, one code per f32 value). The averages of one price
//! series lie within a factor of two or so of each other at any bar, so a
//! code is a few 10⁻⁵ of the value: equal codes with unequal values come
//! at about 5 bars in 100,000 (measured on 4,000 synthetic days, all
//! pairs of 2..500-bar averages), where one scale for the whole price
//! range (a factor of 30 there) gave 13 times as many. Values outside a
//! bar's span clamp to the end codes, which stays sound: they only tie
//! more often.

/// How values become codes, bar by bar: one scale for every series of a
/// set, so that codes of different series at one bar compare.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeScale {
    /// Per bar; bars past the end use [`BarScale::COARSE`].
    bars: Vec<BarScale>,
}

/// One bar's scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BarScale {
    /// The order key coded as `i16::MIN`.
    base: i64,
    /// Order keys per code, as a power of two.
    shift: u32,
}

impl BarScale {
    /// Every f32 in the codes: coarse, but sound for any values.
    const COARSE: BarScale = BarScale { base: 0, shift: 16 };

    /// The codes spanning `lo..=hi` ([`BarScale::COARSE`] unless both are
    /// finite).
    fn spanning(lo: f64, hi: f64) -> Self {
        if !(lo.is_finite() && hi.is_finite()) {
            return BarScale::COARSE;
        }
        let (base, top) = (order_key(lo.min(hi)), order_key(lo.max(hi)));
        let mut shift = 0;
        while (top - base) >> shift > i64::from(u16::MAX) {
            shift += 1;
        }
        BarScale { base, shift }
    }

    #[inline(always)]
    fn code(self, value: f64) -> i16 {
        let steps = (order_key(value) - self.base) >> self.shift;
        (steps + i64::from(i16::MIN)).clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
    }
}

impl CodeScale {
    /// At each of `len` bars, the codes spanning the values of every
    /// series at that bar (NaN left out); a bar with an infinite value, or
    /// none, gets the coarse scale.
    pub fn spanning_each_bar<'a>(len: usize, series: impl IntoIterator<Item = &'a [f64]>) -> Self {
        let mut lo = vec![f64::INFINITY; len];
        let mut hi = vec![f64::NEG_INFINITY; len];
        for values in series {
            // `min` and `max` pass over NaN (and ±∞ leaves the bar
            // coarse); both vectorize.
            for ((lo, hi), &v) in lo.iter_mut().zip(&mut hi).zip(values) {
                *lo = lo.min(v);
                *hi = hi.max(v);
            }
        }
        CodeScale {
            bars: lo
                .iter()
                .zip(&hi)
                .map(|(&lo, &hi)| BarScale::spanning(lo, hi))
                .collect(),
        }
    }

    /// The codes spanning `lo..=hi` at each of `len` bars.
    #[cfg(test)]
    pub(crate) fn spanning(len: usize, lo: f64, hi: f64) -> Self {
        CodeScale {
            bars: vec![BarScale::spanning(lo, hi); len],
        }
    }

    /// The code of `value` at `bar`; `value` must not be NaN (it has no
    /// place in the order).
    #[inline]
    pub fn code(&self, bar: usize, value: f64) -> i16 {
        let scale = self.bars.get(bar).copied();
        scale.unwrap_or(BarScale::COARSE).code(value)
    }

    /// The codes of `values` (from bar 0), and the first bar from which
    /// they hold: the bar after the last NaN (a NaN is on neither side of
    /// a comparison, which no code can say), 0 without one.
    pub fn codes(&self, values: &[f64]) -> Codes {
        let mut codes = vec![0; values.len() + PAST_END];
        // One pass, every bar coded (a NaN's code means nothing) and the
        // last NaN noted; bars past the scale's are coarse.
        let mut from = 0;
        let scaled = self.bars.len().min(values.len());
        let (head, tail) = codes[..values.len()].split_at_mut(scaled);
        let mut code = |t: usize, c: &mut i16, scale: BarScale| {
            let v = values[t];
            *c = scale.code(v);
            if v.is_nan() {
                from = t + 1;
            }
        };
        for (t, (c, &scale)) in head.iter_mut().zip(&self.bars).enumerate() {
            code(t, c, scale);
        }
        for (t, c) in tail.iter_mut().enumerate() {
            code(scaled + t, c, BarScale::COARSE);
        }
        codes[..from].fill(0);
        Codes {
            values: codes,
            from,
        }
    }
}

/// Zero codes after a series' last bar, so that a scan may read a block of
/// up to `PAST_END + 1` codes from any bar (and ignore what is past the
/// end).
pub const PAST_END: usize = 32;

/// A series' codes ([`CodeScale::codes`]).
#[derive(Debug, Clone, Default)]
pub struct Codes {
    /// One per bar, then [`PAST_END`] zeros; those before `from` mean
    /// nothing.
    pub values: Vec<i16>,
    /// The first bar whose code holds, with every bar after it.
    pub from: usize,
}

/// An integer that orders as the value rounded to f32 does: rounding is
/// monotonic, and so is this map of the f32's bits (negative floats'
/// bits reversed below the positive ones). Both zeros get one key, as
/// they compare equal.
#[inline(always)]
fn order_key(value: f64) -> i64 {
    let narrow = value as f32;
    let bits = if narrow == 0.0 { 0 } else { narrow.to_bits() };
    // Negative: all bits flipped; positive: the sign bit set.
    let flip = ((bits as i32 >> 31) as u32) | 1 << 31;
    i64::from(bits ^ flip)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values across signs, magnitudes, f32 overflow and underflow, ±∞.
    fn palette() -> Vec<f64> {
        let mut v = vec![
            f64::NEG_INFINITY,
            -1e39,
            -3.5e38,
            -1e5,
            -1.0,
            -1e-30,
            -1e-310,
            -0.0,
            0.0,
            1e-310,
            1e-45,
            1e-30,
            0.5,
            1.0,
            1.0 + 1e-12,
            9.38,
            100.0,
            100.0 + 1e-9,
            287.9,
            1e5,
            3.4e38,
            1e39,
            f64::INFINITY,
        ];
        // A dense run inside a price range.
        v.extend((0..200).map(|i| 9.0 + f64::from(i) * 1.4));
        v
    }

    #[test]
    fn codes_never_reverse_the_order() {
        let values = palette();
        for scale in [
            BarScale::COARSE,
            BarScale::spanning(9.38, 287.9),
            BarScale::spanning(1.0, 1.0),
            BarScale::spanning(-5.0, 5.0),
            BarScale::spanning(f64::NEG_INFINITY, 5.0),
        ] {
            for &a in &values {
                for &b in &values {
                    let (ca, cb) = (scale.code(a), scale.code(b));
                    if ca < cb {
                        assert!(a < b, "{scale:?}: code({a}) < code({b})");
                    }
                    if a == b {
                        assert_eq!(ca, cb, "{scale:?}: {a} == {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_span_fills_the_codes_finely() {
        let scale = BarScale::spanning(9.38, 287.9);
        assert_eq!(scale.code(9.38), i16::MIN);
        let used = i32::from(scale.code(287.9)) - i32::from(i16::MIN);
        assert!(used >= 1 << 15, "{used} codes");
        // Relative steps of 1.3e-4 are told apart everywhere in the span.
        for price in [9.5, 15.9, 50.0, 120.0, 280.0] {
            assert!(
                scale.code(price) < scale.code(price * (1.0 + 1.3e-4)),
                "{price}"
            );
        }
        // Outside it the codes clamp.
        assert_eq!(scale.code(1.0), i16::MIN);
        assert_eq!(scale.code(1e6), i16::MAX);
    }

    #[test]
    fn each_bar_spans_its_own_values() {
        let nan = f64::NAN;
        let a = [1.0, 100.0, nan, 5.0];
        let b = [2.0, 100.5, nan, f64::INFINITY];
        let scale = CodeScale::spanning_each_bar(4, [&a[..], &b[..]]);
        assert_eq!(scale.bars[0], BarScale::spanning(1.0, 2.0));
        assert_eq!(scale.bars[1], BarScale::spanning(100.0, 100.5));
        assert_eq!(scale.bars[2], BarScale::COARSE);
        assert_eq!(scale.bars[3], BarScale::COARSE);
        // Bar 1's span is narrow: 10⁻⁵ of the value apart is told apart.
        assert!(scale.code(1, 100.2) < scale.code(1, 100.2 + 1e-3));
        assert_eq!(scale.code(7, 3.0), BarScale::COARSE.code(3.0));
    }

    #[test]
    fn codes_hold_after_the_last_nan() {
        let scale = CodeScale::spanning(5, 1.0, 10.0);
        let nan = f64::NAN;
        assert_eq!(scale.codes(&[1.0, 2.0]).from, 0);
        assert_eq!(scale.codes(&[nan, nan, 1.0, 2.0]).from, 2);
        let codes = scale.codes(&[nan, 3.0, nan, 4.0, 5.0]);
        assert_eq!(codes.from, 3);
        assert_eq!(codes.values.len(), 5 + PAST_END);
        assert_eq!(codes.values[3], scale.code(3, 4.0));
        assert_eq!(scale.codes(&[1.0, nan]).from, 2);
    }
}
