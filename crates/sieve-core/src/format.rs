//! Number and time formatting shared by every file sieve writes.

use chrono::{DateTime, Timelike};

/// Shortest round-trip form of a float (Rust's `Display` for f64), with
/// `NaN`, `inf` and `-inf` spelled the way pandas reads them.
pub fn float(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if x == 0.0 {
        // Avoid "-0", which round-trips but surprises readers.
        "0".to_string()
    } else {
        format!("{x}")
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
