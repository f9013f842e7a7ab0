//! Bar time parsing. Accepted forms: `YYYY-MM-DD`,
//! `YYYY-MM-DD HH:MM[:SS[.fff]]` (a `T` separator too), RFC 3339 with an
//! offset, and integer unix seconds, milliseconds, microseconds or
//! nanoseconds (the unit told by the magnitude). Times without an offset are
//! UTC. Every time must lie in 1900..2200: anything else is a unit or typing
//! mistake, not market data.

use chrono::{DateTime, NaiveDate, NaiveDateTime};

pub use crate::format::MS_PER_DAY;

/// The unit of an integer time, by magnitude: below 1e11 seconds (1e11 s is
/// the year 5138), below 1e14 milliseconds (1e11 ms is March 1973), below
/// 1e17 microseconds (Binance since 2025), else nanoseconds. Each unit's
/// 1900..2200 span lies inside its band, away from the others.
/// Each entry: (magnitude limit, ms per unit, or −(units per ms)).
const UNIT_BANDS: [(u64, i64); 3] = [
    (100_000_000_000, 1000),
    (100_000_000_000_000, 1),
    (100_000_000_000_000_000, -1000),
];

/// 1900-01-01 and 2200-01-01 in unix milliseconds: the accepted span.
pub const EARLIEST_MS: i64 = -2_208_988_800_000;
pub const LATEST_MS: i64 = 7_258_118_400_000;

/// Parses one time value into unix milliseconds, or says what it expected.
pub fn parse_time(s: &str) -> Result<i64, String> {
    in_span(parse_any_time(s)?, s.trim())
}

/// An integer unix time (its unit told by magnitude) in milliseconds, as a
/// typed column of a Parquet or Arrow file holds it.
pub fn unix_time(n: i64) -> Result<i64, String> {
    let ms = unix_ms(n)
        .filter(|&ms| DateTime::from_timestamp_millis(ms).is_some())
        .ok_or_else(|| format!("time \"{n}\" is out of range"))?;
    // The written form only for a message: no text per row.
    match (EARLIEST_MS..LATEST_MS).contains(&ms) {
        true => Ok(ms),
        false => in_span(ms, &n.to_string()),
    }
}

/// `ms` if it lies in 1900..2200; else an error quoting the time as `written`.
pub fn in_span(ms: i64, written: &str) -> Result<i64, String> {
    if !(EARLIEST_MS..LATEST_MS).contains(&ms) {
        let shown = match chrono::DateTime::from_timestamp_millis(ms) {
            Some(_) => crate::format::time(ms),
            None if ms < 0 => "before any date".to_string(),
            None => "after any date".to_string(),
        };
        return Err(format!(
            "time \"{written}\" is {shown}, outside 1900..2200 (is the unit or the format wrong?)"
        ));
    }
    Ok(ms)
}

/// The integer unix time `n` in milliseconds, its unit told by magnitude;
/// `None` past any date.
pub(crate) fn unix_ms(n: i64) -> Option<i64> {
    let magnitude = n.unsigned_abs();
    for (limit, scale) in UNIT_BANDS {
        if magnitude < limit {
            return if scale > 0 {
                n.checked_mul(scale)
            } else {
                Some(n.div_euclid(-scale))
            };
        }
    }
    Some(n.div_euclid(1_000_000))
}

fn parse_any_time(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty time".into());
    }
    if let Some(ms) = iso_fast(s.as_bytes()) {
        return Ok(ms);
    }
    parse_general(s)
}

/// Every accepted form, by chrono's parsers (`s` trimmed, not empty).
fn parse_general(s: &str) -> Result<i64, String> {
    if let Ok(n) = s.parse::<i64>() {
        // Checked: fuzzing found i64::MIN (no absolute value) and overflow.
        return unix_ms(n)
            .filter(|&ms| DateTime::from_timestamp_millis(ms).is_some())
            .ok_or_else(|| format!("time \"{s}\" is out of range"));
    }
    // MetaTrader writes dates as 2024.01.02.
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y.%m.%d"))
    {
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
        "%Y.%m.%d %H:%M:%S",
        "%Y.%m.%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    // pandas writes tz-aware times with a space: 2020-01-01 00:00:00+00:00.
    for fmt in ["%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%z"] {
        if let Ok(t) = DateTime::parse_from_str(s, fmt) {
            return Ok(t.timestamp_millis());
        }
    }
    Err(format!(
        "cannot parse time \"{s}\" (expected YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC 3339, or unix seconds/ms/µs/ns)"
    ))
}

/// The common forms read without chrono's format parser (a CSV of a
/// million bars is a million times): exactly `YYYY-MM-DD`, or that with
/// ` HH:MM` or ` HH:MM:SS` (a space or a `T` between), every field its
/// digits. Anything else, or a date or clock out of range, is `None` and
/// goes the general way, which gives the same instant for these forms.
fn iso_fast(b: &[u8]) -> Option<i64> {
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b.get(r)?.iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    if !matches!(b.len(), 10 | 16 | 19) || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(digits(0..4)? as i32, digits(5..7)?, digits(8..10)?)?;
    let (h, m, sec) = match b.len() {
        10 => (0, 0, 0),
        _ => {
            if !matches!(b[10], b' ' | b'T') || b[13] != b':' {
                return None;
            }
            let sec = match b.len() {
                19 if b[16] == b':' => digits(17..19)?,
                19 => return None,
                _ => 0,
            };
            (digits(11..13)?, digits(14..16)?, sec)
        }
    };
    // A leap second (:60) goes the general way.
    let t = date.and_hms_opt(h, m, sec)?;
    Some(t.and_utc().timestamp_millis())
}

/// The most common spacing of `time` (ms; 1 with fewer than two bars).
pub(crate) fn typical_spacing(time: &[i64]) -> i64 {
    let mut gaps: Vec<i64> = time.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let (mut best, mut best_count, mut k) = (1, 0, 0);
    while k < gaps.len() {
        let run = gaps[k..].partition_point(|&g| g == gaps[k]);
        if run > best_count {
            (best, best_count) = (gaps[k], run);
        }
        k += run;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time beyond any date is said to be on its own side of the
    /// calendar (−9.2e18 seconds was shown as +9223372036854775807).
    #[test]
    fn times_beyond_any_date_keep_their_sign() {
        let e = in_span(i64::MIN, "-9200000000000000000 s").unwrap_err();
        assert!(e.contains("is before any date"), "{e}");
        let e = in_span(i64::MAX, "9200000000000000000 s").unwrap_err();
        assert!(e.contains("is after any date"), "{e}");
        assert!(!e.contains("9223372036854775807"), "{e}");
    }

    /// The fast reading of the common forms gives what the general one
    /// gives; what it declines goes the general way, as before.
    #[test]
    fn the_fast_path_agrees_with_the_general_one() {
        let mut cases = Vec::new();
        for (y, m, d) in [
            (2020, 2, 29),
            (2021, 2, 29),
            (1999, 12, 31),
            (2020, 13, 1),
            (2020, 0, 10),
            (2024, 4, 31),
            (1900, 1, 1),
            (2199, 12, 31),
        ] {
            let date = format!("{y:04}-{m:02}-{d:02}");
            cases.push(date.clone());
            for sep in [" ", "T"] {
                for (h, mi, sec) in [
                    (0, 0, 0),
                    (23, 59, 59),
                    (24, 0, 0),
                    (12, 60, 0),
                    (23, 59, 60),
                    (9, 5, 7),
                ] {
                    cases.push(format!("{date}{sep}{h:02}:{mi:02}"));
                    cases.push(format!("{date}{sep}{h:02}:{mi:02}:{sec:02}"));
                }
            }
        }
        cases.extend(
            [
                "2020-1-05",
                "2020-01-05 1:02",
                "2020-01-05x10:00",
                "2020-01-05 10-00",
                "2020/01/05",
                "+020-01-05",
                "2020-01-05 10:00:0a",
            ]
            .map(String::from),
        );
        let mut fast = 0;
        for s in &cases {
            // Declined: the general way reads it or refuses it, as before.
            if let Some(ms) = iso_fast(s.as_bytes()) {
                fast += 1;
                assert_eq!(parse_general(s), Ok(ms), "{s}");
            }
        }
        assert_eq!(fast, 60, "every valid date and clock of the list read fast");
    }

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
        assert_eq!(parse_time("1546300800000000"), Ok(day), "microseconds");
        assert_eq!(parse_time("1546300800000000000"), Ok(day), "nanoseconds");
        assert_eq!(
            parse_time("1546300800123456"),
            Ok(day + 123),
            "µs floor to ms"
        );
        assert_eq!(parse_time("2019.01.01"), Ok(day), "MetaTrader date");
        assert_eq!(parse_time("2019.01.01 02:30:00"), Ok(day + 9_000_000));
        assert_eq!(parse_time("2019.01.01 02:30"), Ok(day + 9_000_000));
        assert_eq!(
            parse_time("2019-01-01 02:00:00+02:00"),
            Ok(day),
            "pandas tz-aware"
        );
        assert_eq!(parse_time("2018-12-31 19:00:00-0500"), Ok(day));
        assert!(parse_time("01/02/2019").is_err());
        assert!(parse_time("2019-13-01").is_err());
    }

    #[test]
    fn binance_microseconds_are_2025_not_49268() {
        // 2025-01-01T00:00:00Z in µs, as Binance spot klines write it.
        let t = parse_time("1735689600000000").unwrap();
        assert_eq!(crate::format::time(t), "2025-01-01");
        // 1e11..1e14 is ms, 1e14..1e17 µs: the band edges by hand.
        // 1e11 − 1 is seconds (the year 5138: refused), 1e11 is ms (1973).
        assert!(parse_time("99999999999").is_err());
        assert_eq!(parse_time("100000000000"), Ok(100_000_000_000));
        // 1e14 − 1 is ms (year 5138: refused), 1e14 is µs (1973).
        assert!(parse_time("99999999999999").is_err());
        assert_eq!(parse_time("100000000000000"), Ok(100_000_000_000));
    }

    #[test]
    fn times_outside_1900_2200_are_refused() {
        for s in [
            "1850-01-01",
            "2200-01-01",
            "9999-12-31 23:59",
            "-3000000000",
        ] {
            let e = parse_time(s).unwrap_err();
            assert!(e.contains("outside 1900..2200"), "{s}: {e}");
        }
        assert!(parse_time("1900-01-01").is_ok());
        assert!(parse_time("2199-12-31 23:59:59").is_ok());
    }
}
