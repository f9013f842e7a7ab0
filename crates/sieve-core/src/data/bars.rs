//! Price bars in columns (time, OHLC, optional volume, the file's other
//! columns), with lookups by time and the bars per year of the data.

use crate::data::time::MS_PER_DAY;

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

impl Bars {
    pub fn len(&self) -> usize {
        self.close.len()
    }

    pub fn is_empty(&self) -> bool {
        self.close.is_empty()
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
