//! Price bars in columns (time, OHLC, optional volume, the file's other
//! columns), with lookups by time and the bars per year of the data.

use crate::data::detail::{Detail, Prices};
use crate::data::time::MS_PER_DAY;
use chrono::Weekday;

/// Columnar price bars: one `Vec` per field, times in unix milliseconds (UTC),
/// strictly increasing. Loaded once and shared read-only by every worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub time: Vec<i64>,
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    pub close: Vec<f64>,
    pub volume: Option<Vec<f64>>,
    /// `data.timezone`: the zone the calendar values (`hour`, `new_day`, …)
    /// are read in; `None` is UTC.
    pub timezone: Option<chrono_tz::Tz>,
    /// The file's other columns, which rules read by name (`signal`,
    /// `col("My Signal")`), in file order. After loading every one is here;
    /// a study keeps only those its strategy reads.
    pub extra: Vec<ExtraColumn>,
    /// The names of the file's other columns that were not read (nothing
    /// asked for them): for messages that list what the data has.
    pub unread: Vec<String>,
    /// `data.detail`: finer bars under these, walked where a bar's order
    /// of fills is ambiguous.
    pub detail: Option<std::sync::Arc<Detail>>,
    /// How higher timeframes fall on these bars and the other
    /// instruments' bars rules read (`tf(…)`, `informative(…)`); `None`:
    /// the defaults and no informative series.
    pub frames: Option<std::sync::Arc<Frames>>,
}

/// A column of the data beyond time, prices and volume.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraColumn {
    /// The name as written (trimmed).
    pub name: String,
    /// One value per bar; an empty cell or null is NaN (undefined).
    pub values: Vec<f64>,
    /// Why the column cannot be read as numbers (text in a cell, a type
    /// that is not numeric); an error only if a rule reads it.
    pub problem: Option<String>,
}

/// What the rules' higher timeframes and other instruments' series read
/// beside the bars themselves (`[data]`'s `bar`, `week_start`,
/// `day_start`, `session_end` and `informative`).
#[derive(Debug, Clone, PartialEq)]
pub struct Frames {
    /// The first day of a week.
    pub week_start: Weekday,
    /// Minutes after local midnight at which a day starts.
    pub day_start: u32,
    /// Minutes after local midnight at which a day's session ends.
    pub session_end: Option<u32>,
    /// The bars' length (ms): `data.bar`, else their most common spacing,
    /// found once when the data is read.
    pub bar: Option<i64>,
    /// `data.informative`: other instruments' bars, by name.
    pub informative: Vec<Informative>,
}

impl Default for Frames {
    fn default() -> Self {
        Frames {
            week_start: Weekday::Mon,
            day_start: 0,
            session_end: None,
            bar: None,
            informative: Vec::new(),
        }
    }
}

/// One of `data.informative`'s instruments.
#[derive(Debug, Clone, PartialEq)]
pub struct Informative {
    /// The name rules read it by: `informative("btc", close)`.
    pub name: String,
    /// Its bars (their own `frames` give their length).
    pub bars: std::sync::Arc<Bars>,
}

impl Frames {
    /// The informative instrument `name`.
    pub fn informative(&self, name: &str) -> Option<&Informative> {
        self.informative.iter().find(|i| i.name == name)
    }
}

impl Bars {
    /// Bars of these times, prices and volume, on UTC's calendar, with no
    /// other column, detail bars or frames.
    pub fn new(
        time: Vec<i64>,
        [open, high, low, close]: [Vec<f64>; 4],
        volume: Option<Vec<f64>>,
    ) -> Bars {
        Bars {
            time,
            open,
            high,
            low,
            close,
            volume,
            timezone: None,
            extra: Vec::new(),
            unread: Vec::new(),
            detail: None,
            frames: None,
        }
    }

    pub fn len(&self) -> usize {
        self.close.len()
    }

    pub fn is_empty(&self) -> bool {
        self.close.is_empty()
    }

    /// Times, opens, highs and lows, for mapping detail bars.
    pub fn prices(&self) -> Prices<'_> {
        Prices {
            time: &self.time,
            open: &self.open,
            high: &self.high,
            low: &self.low,
        }
    }

    /// The names of every column beyond time, prices and volume, read or
    /// not, in file order (read ones first).
    pub fn other_columns(&self) -> Vec<&str> {
        let read = self.extra.iter().map(|c| c.name.as_str());
        read.chain(self.unread.iter().map(String::as_str)).collect()
    }

    /// The extra column named exactly `name`.
    pub fn extra(&self, name: &str) -> Option<&ExtraColumn> {
        self.extra.iter().find(|c| c.name == name)
    }

    /// The lowest and the highest of every open, high, low and close
    /// (+inf and 0 without bars; NaN is passed over).
    pub fn price_range(&self) -> (f64, f64) {
        [&self.open, &self.high, &self.low, &self.close]
            .into_iter()
            .map(|c| range_of(c))
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), (l, h)| {
                (lo.min(l), hi.max(h))
            })
    }

    /// Index of the first bar at or after `ms`; `len()` when there is none.
    pub fn index_at_or_after(&self, ms: i64) -> usize {
        self.time.partition_point(|&t| t < ms)
    }

    /// Bars per year measured from the data's own timestamps
    /// (`annualization = "auto"`): (bars − 1) / (calendar days / 365.25).
    pub fn bars_per_year(&self) -> f64 {
        let n = self.len();
        if n < 2 {
            return f64::NAN;
        }
        let days = (self.time[n - 1] as f64 - self.time[0] as f64) / MS_PER_DAY as f64;
        (n - 1) as f64 / (days / 365.25)
    }
}

/// The lowest and highest of `values` (+inf and 0 when empty, NaN passed
/// over), in lanes of 8: one long chain of min/max would wait on itself.
fn range_of(values: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = ([f64::INFINITY; 8], [0.0f64; 8]);
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for k in 0..8 {
            // As minpd/maxpd compare: a NaN keeps the lane's value.
            lo[k] = if chunk[k] < lo[k] { chunk[k] } else { lo[k] };
            hi[k] = if chunk[k] > hi[k] { chunk[k] } else { hi[k] };
        }
    }
    let rest = chunks.remainder().iter();
    let lowest = lo
        .iter()
        .chain(rest.clone())
        .fold(f64::INFINITY, |a, &b| a.min(b));
    let highest = hi.iter().chain(rest).fold(0.0f64, |a, &b| a.max(b));
    (lowest, highest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn price_range_is_the_plain_minimum_and_maximum() {
        for n in 0..20usize {
            // Each column's extreme at a different place, past the lanes.
            let column = |k: usize| -> Vec<f64> {
                (0..n)
                    .map(|i| {
                        50.0 + ((i * 7 + k * 3) % 11) as f64
                            - (i == (k * 5) % n.max(1)) as u8 as f64 * 40.0 * k as f64 / 3.0
                    })
                    .collect()
            };
            let bars = Bars {
                time: (0..n as i64).collect(),
                open: column(0),
                high: column(1),
                low: column(2),
                close: column(3),
                volume: None,
                timezone: None,
                extra: Vec::new(),
                unread: Vec::new(),
                detail: None,
                frames: None,
            };
            let all = || {
                [&bars.open, &bars.high, &bars.low, &bars.close]
                    .into_iter()
                    .flatten()
            };
            let lo = all().fold(f64::INFINITY, |a, &b| a.min(b));
            let hi = all().fold(0.0f64, |a, &b| a.max(b));
            assert_eq!(bars.price_range(), (lo, hi), "{n} bars");
        }
    }
}
