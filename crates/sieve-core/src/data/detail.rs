//! Finer bars under the data's bars (`data.detail`): where OHLC cannot say
//! which of two levels a bar reached first, the engine walks the bar's
//! detail bars in order instead.
//!
//! Both files' bars are stamped at their open. A bar's detail bars are
//! those stamped from its open up to its end: the next bar's open, or,
//! where the next bar is more than 1.5 typical spacings away (a weekend, a
//! holiday, missing bars), one typical spacing after its own open.

use super::time::typical_spacing;

/// The times and prices of bars that detail is mapped with
/// ([`crate::data::Bars::prices`]).
#[derive(Debug, Clone, Copy)]
pub struct Prices<'a> {
    pub time: &'a [i64],
    pub open: &'a [f64],
    pub high: &'a [f64],
    pub low: &'a [f64],
}

impl Prices<'_> {
    fn len(&self) -> usize {
        self.time.len()
    }
}

/// The detail bars of every bar: their opens, highs and lows, and which
/// of them lie under which bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    /// Bar t's detail bars are `start[t]..end[t]`; an empty range where
    /// the bar is not covered.
    start: Vec<u32>,
    end: Vec<u32>,
    /// Bars with detail bars whose highest high and lowest low are not the
    /// bar's own (left to the OHLC rule).
    pub mismatched: usize,
}

/// How the detail bars were used on a run: the bars walked, and the
/// ambiguous bars left to the OHLC rule because no detail covers them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetailCounts {
    pub walked: u64,
    pub uncovered: u64,
}

/// How close a detail extreme must be to the bar's (relative): the same
/// prices written by two programs may differ in the last digits.
const SPAN_TOLERANCE: f64 = 1e-9;

impl Detail {
    /// Maps `fine`'s bars under `bars`. A bar is covered where it has
    /// detail bars whose highest high and lowest low are its own; the
    /// error names a detail file too coarse to be detail.
    pub fn map(bars: Prices<'_>, fine: Prices<'_>) -> Result<Detail, String> {
        let n = bars.len();
        if u32::try_from(fine.len()).is_err() {
            return Err(format!(
                "{} detail bars: more than {} are not supported",
                fine.len(),
                u32::MAX
            ));
        }
        // One bar: every detail bar from its open on is its.
        let spacing = match n {
            0 | 1 => i64::MAX / 4,
            _ => typical_spacing(bars.time),
        };
        let fine_spacing = typical_spacing(fine.time);
        if fine.len() > 1 && n > 1 && fine_spacing >= spacing {
            return Err(format!(
                "its bars are {} apart, the data's {}: detail bars must be finer than the data's",
                span(fine_spacing),
                span(spacing)
            ));
        }
        if fine.len() > 1 && n > 1 && spacing % fine_spacing != 0 {
            return Err(format!(
                "its bars are {} apart, which does not divide the data's {}: each bar must hold whole detail bars",
                span(fine_spacing),
                span(spacing)
            ));
        }
        let (mut start, mut end) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut mismatched = 0;
        let mut j = fine
            .time
            .partition_point(|&s| s < bars.time.first().copied().unwrap_or(0));
        for t in 0..n {
            let open = bars.time[t];
            let until = match bars.time.get(t + 1) {
                Some(&next) if (next - open) as f64 <= 1.5 * spacing as f64 => next,
                _ => open.saturating_add(spacing),
            };
            // Detail bars before this bar's open (inside a gap) belong to no bar.
            while j < fine.len() && fine.time[j] < open {
                j += 1;
            }
            let from = j;
            while j < fine.len() && fine.time[j] < until {
                j += 1;
            }
            let spans = from < j && {
                let hi = fine.high[from..j].iter().fold(f64::MIN, |a, &b| a.max(b));
                let lo = fine.low[from..j].iter().fold(f64::MAX, |a, &b| a.min(b));
                close_to(hi, bars.high[t]) && close_to(lo, bars.low[t])
            };
            if from < j && !spans {
                mismatched += 1;
            }
            let to = if spans { j } else { from };
            start.push(from as u32);
            end.push(to as u32);
        }
        Ok(Detail {
            open: fine.open.to_vec(),
            high: fine.high.to_vec(),
            low: fine.low.to_vec(),
            start,
            end,
            mismatched,
        })
    }

    /// The detail bars of bar `t` (`None`: not covered).
    #[inline]
    pub fn of_bar(&self, t: usize) -> Option<std::ops::Range<usize>> {
        let range = self.start[t] as usize..self.end[t] as usize;
        (!range.is_empty()).then_some(range)
    }

    /// How many bars are covered.
    pub fn covered(&self) -> usize {
        self.start
            .iter()
            .zip(&self.end)
            .filter(|(s, e)| e > s)
            .count()
    }

    /// Every value the runs depend on, for the data hash.
    pub fn hashed(&self, mut value: impl FnMut([u8; 8])) {
        for (s, e) in self.start.iter().zip(&self.end) {
            value((u64::from(*s) | u64::from(*e) << 32).to_le_bytes());
        }
        for col in [&self.open, &self.high, &self.low] {
            col.iter().for_each(|v| value(v.to_bits().to_le_bytes()));
        }
    }

    /// One line for the user: how much of the data the detail covers.
    pub fn summary(&self, bars: usize) -> String {
        let mut line = format!(
            "data.detail: {} detail bars; {} of {bars} bars covered",
            self.open.len(),
            self.covered()
        );
        if self.mismatched > 0 {
            line.push_str(&format!(
                "; {} whose detail bars do not reach the bar's high and low keep the OHLC rule",
                self.mismatched
            ));
        }
        if 2 * self.covered() < bars {
            line.push_str(
                ". Fewer than half the bars are covered: are both files stamped at each bar's open (not its close), from the same source, over the same dates?",
            );
        }
        line
    }
}

fn close_to(a: f64, b: f64) -> bool {
    (a - b).abs() <= SPAN_TOLERANCE * b.abs().max(1e-300)
}

/// A spacing in words ("1 minute", "4 hours").
fn span(ms: i64) -> String {
    let units = [
        (86_400_000, "day"),
        (3_600_000, "hour"),
        (60_000, "minute"),
        (1_000, "second"),
    ];
    for (size, name) in units {
        if ms >= size && ms % size == 0 {
            let k = ms / size;
            return format!("{k} {name}{}", if k == 1 { "" } else { "s" });
        }
    }
    format!("{ms} ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars<'a>(time: &'a [i64], high: &'a [f64], low: &'a [f64]) -> Prices<'a> {
        Prices {
            time,
            open: low,
            high,
            low,
        }
    }

    #[test]
    fn detail_bars_fall_under_the_bar_they_open_in() {
        // Hourly bars at 0, 1, 2 and (after a gap) 5 hours; minute-ish
        // detail every 20 minutes, some inside the gap.
        let h = 3_600_000;
        let m = 60_000;
        let hours = [0, h, 2 * h, 5 * h];
        let base = bars(&hours, &[12.0, 13.0, 14.0, 15.0], &[10.0, 11.0, 12.0, 13.0]);
        let times: Vec<i64> = (0..18).map(|k| k * 20 * m).collect();
        // Each hour's three detail bars span its high and low, except the
        // second hour's (high 12.5, not 13).
        let high: Vec<f64> = (0..18)
            .map(|k| match k / 3 {
                0 => [11.0, 12.0, 11.5][k as usize % 3],
                1 => 12.5,
                2 => [14.0, 13.0, 13.0][k as usize % 3],
                _ => 15.0,
            })
            .collect();
        let low: Vec<f64> = (0..18)
            .map(|k| match k / 3 {
                0 => 10.0,
                1 => 11.0,
                2 => [12.0, 12.5, 12.5][k as usize % 3],
                _ => 13.0,
            })
            .collect();
        let fine = bars(&times, &high, &low);
        let d = Detail::map(base, fine).unwrap();
        assert_eq!(d.of_bar(0), Some(0..3));
        assert_eq!(d.of_bar(1), None, "its detail does not reach its high");
        assert_eq!(d.of_bar(2), Some(6..9));
        // Hours 3 and 4 lie in the gap: bar 3 (5 h) has bars 15..18.
        assert_eq!(d.of_bar(3), Some(15..18));
        assert_eq!((d.covered(), d.mismatched), (3, 1));
    }

    #[test]
    fn detail_coarser_than_the_data_is_refused() {
        let base = bars(&[0, 60, 120], &[1.0; 3], &[1.0; 3]);
        let fine = bars(&[0, 120], &[1.0; 2], &[1.0; 2]);
        let e = Detail::map(base, fine).unwrap_err();
        assert!(e.contains("finer"), "{e}");
    }

    #[test]
    fn the_typical_spacing_is_the_most_common_gap() {
        assert_eq!(typical_spacing(&[0, 5, 10, 30, 35, 36]), 5);
        assert_eq!(typical_spacing(&[7]), 1);
    }
}
