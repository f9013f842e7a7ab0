//! Number and time formatting shared by every file sieve writes.

use chrono::{DateTime, Timelike};

/// Milliseconds in a day (times are milliseconds since the Unix epoch, UTC).
pub const MS_PER_DAY: i64 = 86_400_000;

/// Shortest round-trip form of a float (the digits of Rust's `Display` for
/// f64: no exponent, no trailing ".0"), with `NaN`, `inf` and `-inf` spelled
/// the way pandas reads them.
pub fn float(x: f64) -> String {
    let mut s = String::new();
    push_float(&mut s, x);
    s
}

/// A number for a message: as [`float`] writes it, but in scientific
/// notation (`1e300`, `1.5e-12`) where that would run past 16 digits, so no
/// error prints a number hundreds of digits long.
pub fn short(x: f64) -> String {
    let plain = float(x);
    if plain.len() <= 16 || !x.is_finite() {
        plain
    } else {
        format!("{x:e}")
    }
}

/// [`float`] appended to `out` without allocating: files hold millions of
/// floats, and `format!` was most of the time spent writing them.
pub fn push_float(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
    } else if x == 0.0 {
        // Avoid "-0", which round-trips but surprises readers.
        out.push('0');
    } else {
        let mut buf = ryu::Buffer::new();
        let s = buf.format_finite(x);
        if s.contains('e') {
            // ryu switches to exponents where Display does not.
            out.push_str(&format!("{x}"));
        } else {
            out.push_str(s.strip_suffix(".0").unwrap_or(s));
        }
    }
}

/// A bar time (unix milliseconds, UTC): a plain date at midnight, else
/// `YYYY-MM-DD HH:MM:SS[.fff]`.
pub fn time(ms: i64) -> String {
    let Some(t) = DateTime::from_timestamp_millis(ms) else {
        return ms.to_string();
    };
    let t = t.naive_utc();
    if t.time().num_seconds_from_midnight() == 0 && t.time().nanosecond() == 0 {
        t.format("%Y-%m-%d").to_string()
    } else if t.time().nanosecond() == 0 {
        t.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%d %H:%M:%S%.3f").to_string()
    }
}

/// One way of writing every time of a file or table, so that a column
/// parses as one format (pandas refuses a mix of dates and date-times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeStyle {
    /// `YYYY-MM-DD`: every time is a midnight (UTC).
    Date,
    /// `YYYY-MM-DD HH:MM:SS` (UTC).
    Seconds,
    /// `YYYY-MM-DD HH:MM:SS.fff` (UTC): some time has milliseconds.
    Millis,
}

impl TimeStyle {
    /// The plainest style that writes every one of `times` exactly.
    pub fn for_times(times: &[i64]) -> TimeStyle {
        let mut style = TimeStyle::Date;
        for &t in times {
            if t.rem_euclid(1000) != 0 {
                return TimeStyle::Millis;
            }
            if t.rem_euclid(MS_PER_DAY) != 0 {
                style = TimeStyle::Seconds;
            }
        }
        style
    }

    /// `ms` (unix milliseconds, UTC) in this style.
    pub fn format(self, ms: i64) -> String {
        let Some(t) = DateTime::from_timestamp_millis(ms) else {
            return ms.to_string();
        };
        let t = t.naive_utc();
        match self {
            TimeStyle::Date => t.format("%Y-%m-%d"),
            TimeStyle::Seconds => t.format("%Y-%m-%d %H:%M:%S"),
            TimeStyle::Millis => t.format("%Y-%m-%d %H:%M:%S%.3f"),
        }
        .to_string()
    }
}

/// Writes `bytes` to a temporary name beside `path`, then renames it, so a
/// crash never leaves a half-written file under the final name.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> crate::Result<()> {
    use std::io::Write;
    let tmp = temp_name(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::Error::io(path, e)
    })
}

/// The temporary name used while `path` is being written.
pub fn temp_name(path: &std::path::Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_as_display_and_round_trips() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut values = vec![
            1.0,
            20.0,
            0.1,
            0.3,
            1e21,
            1e-7,
            123456.789,
            -2.5,
            1e15,
            1e16,
            5e-324,
            f64::MAX,
        ];
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            values.push(f64::from_bits(state >> 2)); // positive finite bit patterns
            values.push((state % 100_000) as f64 / 7.0);
        }
        for x in values.into_iter().filter(|x| x.is_finite() && *x != 0.0) {
            let s = float(x);
            assert_eq!(s, format!("{x}"), "{x:e}");
            assert_eq!(s.parse::<f64>().unwrap(), x);
        }
        assert_eq!(
            (float(f64::NAN), float(f64::NEG_INFINITY), float(-0.0)),
            ("NaN".into(), "-inf".into(), "0".into())
        );
    }
}

#[cfg(test)]
mod time_style_tests {
    use super::TimeStyle;

    const DAY: i64 = 86_400_000;

    #[test]
    fn one_style_per_file() {
        // Hourly bars that include midnight: every row gets a time.
        let hourly: Vec<i64> = (0..30).map(|h| 1_492_646_400_000 + h * 3_600_000).collect();
        let style = TimeStyle::for_times(&hourly);
        assert_eq!(style, TimeStyle::Seconds);
        assert_eq!(style.format(hourly[0]), "2017-04-20 00:00:00");
        assert_eq!(style.format(hourly[25]), "2017-04-21 01:00:00");
        // Daily bars: dates only.
        let daily: Vec<i64> = (0..5).map(|d| 1_492_646_400_000 + d * DAY).collect();
        assert_eq!(TimeStyle::for_times(&daily), TimeStyle::Date);
        assert_eq!(TimeStyle::Date.format(daily[1]), "2017-04-21");
        // One time with milliseconds: every row gets them.
        let mut ms = daily.clone();
        ms.push(daily[4] + DAY + 1);
        let style = TimeStyle::for_times(&ms);
        assert_eq!(style, TimeStyle::Millis);
        assert_eq!(style.format(daily[0]), "2017-04-20 00:00:00.000");
    }
}
