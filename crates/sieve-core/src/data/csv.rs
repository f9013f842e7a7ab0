//! CSV (comma, semicolon or tab separated; with a header, or with the
//! names given by `data.columns`) → rows for the [`Validator`].

use crate::data::columns::find_columns;
use crate::data::validate::{Cell, Row, TimeCell};
use crate::data::{Bars, LoadOptions, Loaded};

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
    let names: Vec<&str> = header.iter().collect();
    let cols = find_columns(&names).map_err(|e| match options.columns {
        Some(_) => format!("data.columns: {e}"),
        None if names.len() == 1 && (names[0].contains(';') || names[0].contains('\t')) => {
            format!("line 1: {e} (the file does not look comma-separated)")
        }
        None => format!("line 1: {e}"),
    })?;
    let notices = cols
        .notices(&names, options)
        .map_err(|e| format!("line 1: {e}"))?;
    let mut rows = cols.validator("line", &names, options);
    let mut record = csv::StringRecord::new();
    let mut joined = String::new();
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
            rows.problem(
                line,
                "every field is empty (a row of separators only)".into(),
            );
            continue;
        }
        if record.len() < header.len() {
            rows.problem(
                line,
                format!(
                    "{} fields where the header has {}",
                    record.len(),
                    header.len()
                ),
            );
            continue;
        }
        let time = match cols.clock {
            Some(c) => {
                joined.clear();
                joined.push_str(&record[cols.time]);
                joined.push(' ');
                joined.push_str(&record[c]);
                joined.as_str()
            }
            None => &record[cols.time],
        };
        rows.push(Row {
            at: line,
            time: TimeCell::Text(time),
            ohlc: cols.price.map(|c| Cell::Text(&record[c])),
            adj_close: cols.adj_close.map(|c| Cell::Text(&record[c])),
            volume: cols.volume.map(|c| Cell::Text(&record[c])),
        });
    }
    let bars = rows.finish("line 1: the file has a header but no bars")?;
    Ok(Loaded { bars, notices })
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
