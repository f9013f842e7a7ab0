//! `[data]`'s keys for higher timeframes and other instruments' series:
//! `bar`, `week_start`, `day_start`, `session_end` and `informative`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::Weekday;

use super::RawData;
use crate::data::Frames;
use crate::error::{Error, Result};

/// The frames' settings of `data` (no informative bars yet: the loader
/// reads them), and the informative files by name, sorted.
pub(super) fn frames(
    data: &RawData,
    resolve: &dyn Fn(PathBuf) -> PathBuf,
) -> Result<(Frames, Vec<(String, PathBuf)>)> {
    let bar = match &data.bar {
        Some(text) => Some(bar_length(text).map_err(|m| Error::config("data.bar", m))?),
        None => None,
    };
    let week_start = match &data.week_start {
        Some(text) => text.trim().parse::<Weekday>().map_err(|_| {
            Error::config(
                "data.week_start",
                format!("\"{text}\" is not a day of the week (e.g. \"monday\", \"sunday\")"),
            )
        })?,
        None => Weekday::Mon,
    };
    let day_start = match &data.day_start {
        Some(text) => time_of_day(text).map_err(|m| Error::config("data.day_start", m))?,
        None => 0,
    };
    let session_end = match &data.session_end {
        Some(text) => Some(time_of_day(text).map_err(|m| Error::config("data.session_end", m))?),
        None => None,
    };
    let mut informative = Vec::new();
    let named: &BTreeMap<String, PathBuf> = &data.informative.clone().unwrap_or_default();
    for (name, path) in named {
        let key = format!("data.informative.{name}");
        if !crate::rules::is_name(name) {
            return Err(Error::config(
                key,
                "an informative instrument's name is letters, digits and _, not starting with a digit",
            ));
        }
        if path.as_os_str().is_empty() {
            return Err(Error::config(key, "needs the path of a data file"));
        }
        informative.push((name.clone(), resolve(path.clone())));
    }
    let frames = Frames {
        week_start,
        day_start,
        session_end,
        bar,
        informative: Vec::new(),
    };
    Ok((frames, informative))
}

/// `5m`, `1h`, `30s`, `1d`, `1w` → milliseconds.
fn bar_length(text: &str) -> std::result::Result<i64, String> {
    let t = text.trim();
    let bad =
        || format!("\"{t}\": expected a bar length such as \"30s\", \"5m\", \"1h\" or \"1d\"");
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (count, unit) = t.split_at(split);
    let n: i64 = count.parse().map_err(|_| bad())?;
    let unit_ms = match unit {
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return Err(bad()),
    };
    match n.checked_mul(unit_ms) {
        Some(ms) if ms > 0 => Ok(ms),
        _ => Err(bad()),
    }
}

/// `"16:00"` → minutes after midnight.
fn time_of_day(text: &str) -> std::result::Result<u32, String> {
    let t = text.trim();
    let bad = || format!("\"{t}\": expected a local time of day as HH:MM, e.g. \"16:00\"");
    let (h, m) = t.split_once(':').ok_or_else(bad)?;
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 || t.len() > 5 {
        return Err(bad());
    }
    Ok(h * 60 + m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_times_of_day_parse_and_bad_ones_are_refused() {
        assert_eq!(bar_length("5m"), Ok(300_000));
        assert_eq!(bar_length("1h"), Ok(3_600_000));
        assert_eq!(bar_length("30s"), Ok(30_000));
        assert_eq!(bar_length("1d"), Ok(86_400_000));
        for bad in ["", "5", "m", "0m", "5x", "-5m", "99999999999999999d"] {
            assert!(bar_length(bad).is_err(), "{bad}");
        }
        assert_eq!(time_of_day("16:00"), Ok(960));
        assert_eq!(time_of_day("09:30"), Ok(570));
        for bad in ["24:00", "9", "12:60", "ab:cd", "12:00:00"] {
            assert!(time_of_day(bad).is_err(), "{bad}");
        }
    }
}
