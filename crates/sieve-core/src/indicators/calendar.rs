//! The calendar values of each bar's time (UTC): hour, minute, weekday,
//! day of the month, month, and whether the bar opens a new day.

use chrono::{DateTime, Datelike, Timelike};

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

/// The value of `what` for each time (Unix milliseconds, UTC); NaN for a
/// time outside chrono's range.
pub fn calendar(time: &[i64], what: Calendar) -> Vec<f64> {
    let mut previous_day: Option<i64> = None;
    time.iter()
        .map(|&ms| {
            let Some(t) = DateTime::from_timestamp_millis(ms) else {
                return f64::NAN;
            };
            match what {
                Calendar::Hour => f64::from(t.hour()),
                Calendar::Minute => f64::from(t.minute()),
                Calendar::Weekday => f64::from(t.weekday().num_days_from_monday()),
                Calendar::Day => f64::from(t.day()),
                Calendar::Month => f64::from(t.month()),
                Calendar::NewDay => {
                    let day = ms.div_euclid(86_400_000);
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
        assert_eq!(calendar(&times, Calendar::Hour), [23.0, 0.0, 10.0]);
        assert_eq!(calendar(&times, Calendar::Minute), [30.0, 15.0, 0.0]);
        assert_eq!(calendar(&times, Calendar::Weekday), [2.0, 3.0, 3.0]);
        assert_eq!(calendar(&times, Calendar::Day), [1.0, 2.0, 2.0]);
        assert_eq!(calendar(&times, Calendar::Month), [1.0, 1.0, 1.0]);
        assert_eq!(calendar(&times, Calendar::NewDay), [1.0, 1.0, 0.0]);
    }
}
