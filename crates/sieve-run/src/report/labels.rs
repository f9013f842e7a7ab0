//! Times as the page writes them: in tables, and on a chart's time axis.

use sieve_core::format;

pub(crate) const DAY_MS: i64 = 86_400_000;

/// How bar times are written in tables: the date only when every bar of the
/// data is at midnight UTC, else date and time (UTC) on every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeFormat {
    Date,
    DateTime,
}

impl TimeFormat {
    pub(crate) fn of(times: &[i64]) -> TimeFormat {
        if times.iter().all(|t| t.rem_euclid(DAY_MS) == 0) {
            TimeFormat::Date
        } else {
            TimeFormat::DateTime
        }
    }

    pub(crate) fn format(self, ms: i64) -> String {
        match self {
            TimeFormat::Date => date_utc(ms),
            TimeFormat::DateTime => format!("{} {}", date_utc(ms), clock_utc(ms, true)),
        }
    }
}

/// `YYYY-MM-DD` of the UTC day holding `ms`.
pub(crate) fn date_utc(ms: i64) -> String {
    format::time(ms - ms.rem_euclid(DAY_MS))
}

/// `HH:MM:SS` (or `HH:MM`) of `ms` in UTC.
pub(crate) fn clock_utc(ms: i64, seconds: bool) -> String {
    let s = ms.rem_euclid(DAY_MS) / 1000;
    let (h, m) = (s / 3600, s / 60 % 60);
    if seconds {
        format!("{h:02}:{m:02}:{:02}", s % 60)
    } else {
        format!("{h:02}:{m:02}")
    }
}

/// Tick labels of a bar-index axis: dates over long spans (or daily data),
/// `MM-DD HH:MM` over short intraday ones.
pub(crate) struct TimeAxis<'a> {
    times: &'a [i64],
    clock: bool,
}

impl<'a> TimeAxis<'a> {
    pub(crate) fn new(times: &'a [i64]) -> TimeAxis<'a> {
        let span = times.last().copied().unwrap_or(0) - times.first().copied().unwrap_or(0);
        let clock = TimeFormat::of(times) == TimeFormat::DateTime && span < 30 * DAY_MS;
        TimeAxis { times, clock }
    }

    pub(crate) fn label(&self, x: f64) -> String {
        let Some(last) = self.times.len().checked_sub(1) else {
            return String::new();
        };
        let ms = self.times[(x.round().max(0.0) as usize).min(last)];
        if self.clock {
            let date = date_utc(ms);
            format!(
                "{} {}",
                date.get(5..).unwrap_or(&date),
                clock_utc(ms, false)
            )
        } else {
            date_utc(ms)
        }
    }
}
