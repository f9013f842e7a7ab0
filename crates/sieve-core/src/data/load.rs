//! CSV → [`Bars`], with every validation rule of DESIGN §2. Row problems are
//! collected (first few offenders, then a count) so one run of the loader
//! tells the user everything wrong with their file.

use std::path::Path;

use crate::data::{parse_time, Bars};
use crate::error::{Error, Result};

/// How many offending lines an error message lists before summarising.
const MAX_LISTED: usize = 5;

const TIME_NAMES: [&str; 4] = ["date", "datetime", "time", "timestamp"];
const PRICE_NAMES: [&str; 4] = ["open", "high", "low", "close"];

/// Reads and validates a CSV file of bars.
pub fn load_csv(path: &Path) -> Result<Bars> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_csv(&bytes).map_err(|message| Error::Data {
        path: path.to_path_buf(),
        message,
    })
}

struct Columns {
    time: usize,
    price: [usize; 4],
    volume: Option<usize>,
}

fn find_columns(header: &csv::StringRecord) -> Result<Columns, String> {
    let names: Vec<String> = header.iter().map(|h| h.trim().to_lowercase()).collect();
    let find = |want: &str| names.iter().position(|n| n == want);
    let time = TIME_NAMES
        .iter()
        .find_map(|n| find(n))
        // pandas writes its index as an unnamed first column.
        .or_else(|| (names.first().map(String::as_str) == Some("")).then_some(0));
    let mut missing: Vec<&str> = Vec::new();
    if time.is_none() {
        missing.push("a time column (date, datetime, time or timestamp)");
    }
    let mut price = [0; 4];
    for (slot, name) in price.iter_mut().zip(PRICE_NAMES) {
        match find(name) {
            Some(i) => *slot = i,
            None => missing.push(name),
        }
    }
    if !missing.is_empty() {
        let found = header.iter().collect::<Vec<_>>().join(", ");
        let hint = if header.len() == 1 && (found.contains(';') || found.contains('\t')) {
            " (the file does not look comma-separated)"
        } else {
            ""
        };
        return Err(format!(
            "line 1: missing column(s) {}; found: {found}{hint}",
            missing.join(", ")
        ));
    }
    Ok(Columns {
        time: time.unwrap_or_default(),
        price,
        volume: find("volume"),
    })
}

/// Collects row problems; the final message lists the first few.
#[derive(Default)]
struct Problems {
    listed: Vec<String>,
    total: usize,
}

impl Problems {
    fn add(&mut self, line: u64, problem: String) {
        self.total += 1;
        if self.listed.len() < MAX_LISTED {
            self.listed.push(format!("line {line}: {problem}"));
        }
    }

    fn into_result(self) -> Result<(), String> {
        if self.total == 0 {
            return Ok(());
        }
        let mut msg = self.listed.join("; ");
        if self.total > self.listed.len() {
            msg.push_str(&format!(
                "; and {} more problem(s)",
                self.total - self.listed.len()
            ));
        }
        Err(msg)
    }
}

/// Parses CSV bytes into bars; the error message names lines but not the file.
pub fn parse_csv(bytes: &[u8]) -> Result<Bars, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err("empty file: expected a header line and at least one bar".into());
    }
    if bytes.contains(&0) {
        return Err("line 1: the file contains NUL bytes; is it a binary file, not a CSV?".into());
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let header = reader.headers().map_err(csv_error)?.clone();
    let cols = find_columns(&header)?;

    let mut bars = Bars {
        time: Vec::new(),
        open: Vec::new(),
        high: Vec::new(),
        low: Vec::new(),
        close: Vec::new(),
        volume: cols.volume.map(|_| Vec::new()),
    };
    let mut problems = Problems::default();
    let mut record = csv::StringRecord::new();
    let mut prev_time: Option<(i64, u64)> = None;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(e)),
        }
        let line = record.position().map_or(0, |p| p.line());
        if record.iter().all(str::is_empty) {
            continue; // a blank line is not a bar
        }
        let time = match parse_time(&record[cols.time]) {
            Ok(t) => t,
            Err(e) => {
                problems.add(line, e);
                continue;
            }
        };
        if let Some((prev, prev_line)) = prev_time {
            if time == prev {
                problems.add(line, format!("duplicate time (same as line {prev_line})"));
            } else if time < prev {
                problems.add(
                    line,
                    format!("time goes backwards (earlier than line {prev_line}); times must be strictly increasing"),
                );
            }
        }
        prev_time = Some((time, line));

        let mut ohlc = [0.0; 4];
        let mut row_ok = true;
        for ((value, &col), name) in ohlc.iter_mut().zip(&cols.price).zip(PRICE_NAMES) {
            match parse_price(&record[col]) {
                Ok(v) => *value = v,
                Err(e) => {
                    problems.add(line, format!("column '{name}': {e}"));
                    row_ok = false;
                }
            }
        }
        let [open, high, low, close] = ohlc;
        if row_ok {
            if high < open.max(close) {
                problems.add(
                    line,
                    format!(
                        "high {high} is below max(open, close) = {}",
                        open.max(close)
                    ),
                );
            }
            if low > open.min(close) {
                problems.add(
                    line,
                    format!("low {low} is above min(open, close) = {}", open.min(close)),
                );
            }
        }
        if let (Some(col), Some(volumes)) = (cols.volume, bars.volume.as_mut()) {
            match record[col].parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => volumes.push(v),
                Ok(v) => problems.add(
                    line,
                    format!("column 'volume': {v} is not a finite number ≥ 0"),
                ),
                Err(_) => problems.add(
                    line,
                    format!(
                        "column 'volume': cannot parse \"{}\" as a number",
                        &record[col]
                    ),
                ),
            }
        }
        bars.time.push(time);
        bars.open.push(open);
        bars.high.push(high);
        bars.low.push(low);
        bars.close.push(close);
    }
    problems.into_result()?;
    if bars.is_empty() {
        return Err("line 1: the file has a header but no bars".into());
    }
    Ok(bars)
}

fn parse_price(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("cannot parse \"{s}\" as a number"))?;
    if !v.is_finite() {
        return Err(format!("{s} is not a finite number"));
    }
    if v <= 0.0 {
        return Err(format!("price {s} is not positive"));
    }
    Ok(v)
}

fn csv_error(e: csv::Error) -> String {
    let line = e.position().map(|p| p.line());
    let what = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("expected {expected_len} fields like the header, found {len}"),
        csv::ErrorKind::Utf8 { .. } => "invalid UTF-8; is this a text CSV file?".to_string(),
        _ => e.to_string(),
    };
    match line {
        Some(l) => format!("line {l}: {what}"),
        None => what,
    }
}
