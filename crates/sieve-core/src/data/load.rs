//! CSV → [`Bars`], with every validation rule of the README's data section. Row problems are
//! collected (first few offenders, then a count) so one run of the loader
//! tells the user everything wrong with their file.

use std::path::Path;

use crate::data::{parse_time, Bars};
use crate::error::{Error, Result};

/// How many offending lines an error message lists before summarising.
const MAX_LISTED: usize = 5;

const TIME_NAMES: [&str; 5] = ["date", "datetime", "time", "timestamp", "open_time"];
const PRICE_NAMES: [&str; 4] = ["open", "high", "low", "close"];
/// Names of an adjusted-close column (Yahoo's `Adj Close` and its kin).
const ADJ_CLOSE_NAMES: [&str; 5] = [
    "adj close",
    "adj_close",
    "adjclose",
    "adjusted_close",
    "adjusted close",
];

/// How to read the bars (`[data]` keys that change the values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Scale open/high/low/close by adj_close / close per bar.
    pub adjust: bool,
    /// `data.columns`: the file has no header; these name its columns.
    pub columns: Option<Vec<String>>,
}

/// Names of a volume column, preferred first (MetaTrader writes `<TICKVOL>`
/// and `<VOL>`, the latter often all zero for currencies).
const VOLUME_NAMES: [&str; 4] = ["volume", "tickvol", "tick_volume", "vol"];

/// The field separator: `,` unless the header has no comma and exactly one
/// of `;` and tab (semicolon CSVs, MetaTrader's tab-separated exports).
fn separator(bytes: &[u8]) -> u8 {
    let header = bytes.split(|&b| b == b'\n').next().unwrap_or(bytes);
    let count = |c: u8| header.iter().filter(|&&b| b == c).count();
    match (count(b','), count(b';'), count(b'\t')) {
        (0, s, 0) if s > 0 => b';',
        (0, 0, t) if t > 0 => b'\t',
        _ => b',',
    }
}

/// A header name as compared: trimmed, lower case, MetaTrader's `<…>` dropped.
fn column_name(h: &str) -> String {
    let h = h.trim();
    let h = h
        .strip_prefix('<')
        .and_then(|x| x.strip_suffix('>'))
        .unwrap_or(h);
    h.to_lowercase()
}

/// Validated bars plus notices worth one line each to the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub bars: Bars,
    pub notices: Vec<String>,
}

/// Reads and validates a CSV file of bars.
pub fn load_csv(path: &Path) -> Result<Bars> {
    load_csv_with(path, &LoadOptions::default()).map(|l| l.bars)
}

/// Reads and validates a CSV file of bars with `options`.
pub fn load_csv_with(path: &Path, options: &LoadOptions) -> Result<Loaded> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_csv_with(&bytes, options).map_err(|message| Error::Data {
        path: path.to_path_buf(),
        message,
    })
}

struct Columns {
    time: usize,
    /// A separate clock-time column joined to a `date` column (MetaTrader).
    clock: Option<usize>,
    price: [usize; 4],
    volume: Option<usize>,
    adj_close: Option<usize>,
}

fn find_columns(header: &csv::StringRecord) -> Result<Columns, String> {
    let names: Vec<String> = header.iter().map(column_name).collect();
    for (i, n) in names.iter().enumerate() {
        let wanted =
            TIME_NAMES.contains(&n.as_str()) || PRICE_NAMES.contains(&n.as_str()) || n == "volume";
        if wanted && names[..i].contains(n) {
            return Err(format!(
                "line 1: column '{n}' appears twice; which one is meant is ambiguous"
            ));
        }
    }
    let find = |want: &str| names.iter().position(|n| n == want);
    let adj_close = ADJ_CLOSE_NAMES.iter().find_map(|n| find(n));
    let time = TIME_NAMES
        .iter()
        .find_map(|n| find(n))
        // pandas writes its index as an unnamed first column.
        .or_else(|| (names.first().map(String::as_str) == Some("")).then_some(0));
    let mut missing: Vec<&str> = Vec::new();
    if time.is_none() {
        missing.push("a time column (date, datetime, time, timestamp or open_time)");
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
    let time = time.unwrap_or_default();
    let clock = find("time").filter(|&c| names[time] == "date" && c != time);
    Ok(Columns {
        time,
        clock,
        price,
        volume: VOLUME_NAMES.iter().find_map(|n| find(n)),
        adj_close,
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
    parse_csv_with(bytes, &LoadOptions::default()).map(|l| l.bars)
}

/// [`parse_csv`] with options, returning the notices too.
pub fn parse_csv_with(bytes: &[u8], options: &LoadOptions) -> Result<Loaded, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err("empty file: expected a header line and at least one bar".into());
    }
    if bytes.contains(&0) {
        return Err("line 1: the file contains NUL bytes; is it a binary file, not a CSV?".into());
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(options.columns.is_none())
        .delimiter(separator(bytes))
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let header = match &options.columns {
        Some(names) => csv::StringRecord::from(names.clone()),
        None => reader.headers().map_err(csv_error)?.clone(),
    };
    let cols = find_columns(&header).map_err(|e| match options.columns {
        Some(_) => e.replacen("line 1: ", "data.columns: ", 1),
        None => e,
    })?;
    if options.adjust && cols.adj_close.is_none() {
        return Err(format!(
            "line 1: data.adjust = true needs an adjusted-close column (Adj Close, adj_close, adjclose or adjusted_close); found: {}",
            header.iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let mut notices = Vec::new();
    if let (Some(col), false) = (cols.adj_close, options.adjust) {
        notices.push(format!(
            "note: column '{}' (adjusted close) is ignored: prices are used as written; set data.adjust = true to scale open/high/low/close by adj_close/close",
            header[col].trim()
        ));
    }

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
    // The written form of the first time; every other must match it.
    let mut first_form: Option<(TimeForm, u64, String)> = None;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(e)),
        }
        let line = record.position().map_or(0, |p| p.line());
        if record.iter().all(str::is_empty) {
            // The csv reader skips truly blank lines; a row of empty fields
            // is a bar with no values, refused like any other bad row.
            problems.add(
                line,
                "every field is empty (a row of separators only)".into(),
            );
            continue;
        }
        if record.len() < header.len() {
            problems.add(
                line,
                format!(
                    "{} fields where the header has {}",
                    record.len(),
                    header.len()
                ),
            );
            continue;
        }
        let written = match cols.clock {
            Some(c) => format!("{} {}", &record[cols.time], &record[c]),
            None => record[cols.time].to_string(),
        };
        let time = match parse_time(&written) {
            Ok(t) => t,
            Err(e) => {
                let e = if written.chars().count() > 40 {
                    format!("cannot parse time {}", quote(&written))
                } else {
                    e
                };
                problems.add(line, e);
                continue;
            }
        };
        let form = TimeForm::of(&written);
        match &first_form {
            None => first_form = Some((form, line, written.clone())),
            Some((f, first_line, first_text)) if *f != form => problems.add(
                line,
                format!(
                    "time {} is written differently from line {first_line} ({}); mixed time formats are ambiguous",
                    quote(&written),
                    quote(first_text)
                ),
            ),
            Some(_) => {}
        }
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
        if let Some(col) = cols.adj_close.filter(|_| options.adjust) {
            match parse_price(&record[col]) {
                Ok(adj) if row_ok => {
                    // The usual split/dividend adjustment: every price of
                    // the bar scaled by the same factor.
                    let factor = adj / ohlc[3];
                    for v in &mut ohlc {
                        *v *= factor;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    problems.add(line, format!("column '{}': {e}", header[col].trim()));
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
    Ok(Loaded { bars, notices })
}

/// A value quoted in a message, cut short when very long.
fn quote(s: &str) -> String {
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((at, _)) => format!("\"{}…\" ({} characters)", &s[..at], s.chars().count()),
        None => format!("\"{s}\""),
    }
}

fn parse_price(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| {
        let hint = if s.contains(',') && s.chars().any(|c| c.is_ascii_digit()) {
            " (thousands separators and decimal commas are not supported)"
        } else {
            ""
        };
        format!("cannot parse {} as a number{hint}", quote(s))
    })?;
    if !v.is_finite() {
        return Err(format!("{} is not a finite number", quote(s)));
    }
    if v <= 0.0 {
        return Err(format!("price {} is not positive", quote(s)));
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

/// How a time value is written: unix numbers, plain dates, date-times, or
/// date-times with an offset. A file must stick to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeForm {
    Unix,
    Date,
    DateTime,
    WithOffset,
}

impl TimeForm {
    fn of(s: &str) -> TimeForm {
        let s = s.trim();
        if s.parse::<i64>().is_ok() {
            TimeForm::Unix
        } else if s.len() <= 10 {
            TimeForm::Date
        } else if s.ends_with(['Z', 'z']) || s.get(11..).is_some_and(|t| t.contains(['+', '-'])) {
            TimeForm::WithOffset
        } else {
            TimeForm::DateTime
        }
    }
}
