//! The calendar values of each bar's time (in UTC or `data.timezone`):
//! hour, minute, weekday, day of the month, month, and whether the bar
//! opens a new day.

use chrono::{DateTime, Datelike, NaiveDateTime, Timelike};
use chrono_tz::Tz;

/// Which calendar value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calendar {
    Hour,
    Minute,
    /// 0 = Monday … 6 = Sunday.
    Weekday,
    /// Day of the month, 1–31.
    Day,
    /// 1–12.
    Month,
    /// 1 on each day's first bar (the first bar included), else 0.
    NewDay,
}

/// The value of `what` for each time (Unix milliseconds) on the clock of
/// `zone` (UTC when `None`); NaN for a time outside chrono's range.
pub fn calendar(time: &[i64], what: Calendar, zone: Option<Tz>) -> Vec<f64> {
    let mut previous_day: Option<(i32, u32)> = None;
    time.iter()
        .map(|&ms| {
            let Some(utc) = DateTime::from_timestamp_millis(ms) else {
                return f64::NAN;
            };
            let t: NaiveDateTime = match zone {
                Some(z) => utc.with_timezone(&z).naive_local(),
                None => utc.naive_utc(),
            };
            match what {
                Calendar::Hour => f64::from(t.hour()),
                Calendar::Minute => f64::from(t.minute()),
                Calendar::Weekday => f64::from(t.weekday().num_days_from_monday()),
                Calendar::Day => f64::from(t.day()),
                Calendar::Month => f64::from(t.month()),
                Calendar::NewDay => {
                    let day = (t.year(), t.ordinal());
                    let new = previous_day != Some(day);
                    previous_day = Some(day);
                    f64::from(u8::from(new))
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // 2020-01-01 was a Wednesday; 23:30 that day, then 00:15 and 10:00
        // on Thursday 2 January.
        let t0 = 1_577_836_800_000i64;
        let times = [
            t0 + 23 * 3_600_000 + 30 * 60_000,
            t0 + 86_400_000 + 15 * 60_000,
            t0 + 86_400_000 + 10 * 3_600_000,
        ];
        assert_eq!(calendar(&times, Calendar::Hour, None), [23.0, 0.0, 10.0]);
        assert_eq!(calendar(&times, Calendar::Minute, None), [30.0, 15.0, 0.0]);
        assert_eq!(calendar(&times, Calendar::Weekday, None), [2.0, 3.0, 3.0]);
        assert_eq!(calendar(&times, Calendar::Day, None), [1.0, 2.0, 2.0]);
        assert_eq!(calendar(&times, Calendar::Month, None), [1.0, 1.0, 1.0]);
        assert_eq!(calendar(&times, Calendar::NewDay, None), [1.0, 1.0, 0.0]);
    }

    /// New York is 5 hours behind UTC in January, 4 in July: the same UTC
    /// instants read as local hours, and the local day turns at midnight
    /// there (a bar at 03:00 UTC is still the previous day).
    #[test]
    fn in_a_time_zone() {
        let ny: Tz = "America/New_York".parse().unwrap();
        let jan = 1_577_836_800_000i64; // 2020-01-01 00:00 UTC
        let jul = 1_593_561_600_000i64; // 2020-07-01 00:00 UTC
        let h = 3_600_000;
        let times = [
            jan + 14 * h + 30 * 60_000,
            jul + 14 * h,
            jul + 27 * h,
            jul + 30 * h,
        ];
        assert_eq!(
            calendar(&times, Calendar::Hour, Some(ny)),
            [9.0, 10.0, 23.0, 2.0]
        );
        assert_eq!(
            calendar(&times, Calendar::Minute, Some(ny)),
            [30.0, 0.0, 0.0, 0.0]
        );
        // 2020-07-01 was a Wednesday; 03:00 UTC on the 2nd is Wednesday
        // 23:00 in New York, 06:00 UTC is Thursday 02:00.
        assert_eq!(
            calendar(&times, Calendar::Weekday, Some(ny)),
            [2.0, 2.0, 2.0, 3.0]
        );
        assert_eq!(
            calendar(&times, Calendar::Day, Some(ny)),
            [1.0, 1.0, 1.0, 2.0]
        );
        assert_eq!(
            calendar(&times, Calendar::NewDay, Some(ny)),
            [1.0, 1.0, 0.0, 1.0]
        );
        assert_eq!(
            calendar(&times, Calendar::NewDay, None),
            [1.0, 1.0, 1.0, 0.0]
        );
    }
}
