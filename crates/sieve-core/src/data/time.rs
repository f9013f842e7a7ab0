//! Bar time parsing. Accepted forms (DESIGN §2): `YYYY-MM-DD`,
//! `YYYY-MM-DD HH:MM[:SS[.fff]]` (a `T` separator too), RFC 3339 with an
//! offset, and integer unix seconds or milliseconds. Times without an offset
//! are UTC.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

pub const MS_PER_DAY: i64 = 86_400_000;

/// Integers at or above this magnitude are milliseconds, below it seconds:
/// 1e11 seconds is the year 5138, 1e11 ms is March 1973.
const MS_THRESHOLD: i64 = 100_000_000_000;

/// Parses one time value into unix milliseconds, or says what it expected.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty time".into());
    }
    if let Ok(n) = s.parse::<i64>() {
        // Checked: fuzzing found i64::MIN (no absolute value) and overflow.
        let ms = if n.unsigned_abs() >= MS_THRESHOLD as u64 {
            Some(n)
        } else {
            n.checked_mul(1000)
        };
        return ms
            .filter(|&ms| DateTime::from_timestamp_millis(ms).is_some())
            .ok_or_else(|| format!("time \"{s}\" is out of range"));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(d
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis())
            .unwrap_or_default());
    }
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    Err(format!(
        "cannot parse time \"{s}\" (expected YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC 3339, or unix seconds/milliseconds)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_agree_on_one_instant() {
        let day = 1_546_300_800_000; // 2019-01-01T00:00:00Z
        assert_eq!(parse_time("2019-01-01"), Ok(day));
        assert_eq!(parse_time("2019-01-01 00:00"), Ok(day));
        assert_eq!(parse_time("2019-01-01 00:00:00.000"), Ok(day));
        assert_eq!(parse_time("2019-01-01T00:00:00Z"), Ok(day));
        assert_eq!(parse_time("2019-01-01T02:00:00+02:00"), Ok(day));
        assert_eq!(parse_time("1546300800"), Ok(day));
        assert_eq!(parse_time("1546300800000"), Ok(day));
        assert_eq!(parse_time("2019-01-01 00:00:01.5"), Ok(day + 1500));
        assert!(parse_time("01/02/2019").is_err());
        assert!(parse_time("2019-13-01").is_err());
    }
}
