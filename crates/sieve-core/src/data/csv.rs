//! CSV (comma, semicolon or tab separated; with a header, or with the
//! names given by `data.columns`) → rows for the [`Validator`].

use std::io::Read;

use crate::data::columns::{find_columns, Columns};
use crate::data::validate::{Cell, Row, TimeCell, Validator};
use crate::data::{Bars, LoadOptions, Loaded};

/// The longest line a CSV file may have: a bar is a few dozen bytes, and a
/// header with every column a data file plausibly has is a few kilobytes.
/// A longer line is a corrupt or non-CSV file, refused before it is held
/// in memory whole.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most columns a CSV header may have.
pub const MAX_COLUMNS: usize = 10_000;

/// The field separator of a header holding each of [`SEPARATORS`] `counts`
/// times outside quotes (semicolon CSVs, MetaTrader's tab-separated
/// exports): the most frequent, `,` on a tie. A column name may hold another
/// (`a,b` in a semicolon file).
fn separator(counts: [usize; 3]) -> u8 {
    // The first of the most frequent: `,` wins a tie.
    let best = (0..3).fold(0, |best, k| if counts[k] > counts[best] { k } else { best });
    SEPARATORS[best]
}

const SEPARATORS: [u8; 3] = [b',', b';', b'\t'];

/// How often the header holds each of [`SEPARATORS`] outside quotes.
fn separator_counts(header: &[u8]) -> [usize; 3] {
    let mut quoted = false;
    let mut counts = [0usize; 3];
    for &b in header {
        if b == b'"' {
            quoted = !quoted;
        } else if !quoted {
            if let Some(k) = SEPARATORS.iter().position(|&s| s == b) {
                counts[k] += 1;
            }
        }
    }
    counts
}

/// Parses CSV bytes into bars; the error message names lines but not the file.
pub fn parse_csv(bytes: &[u8]) -> Result<Bars, String> {
    parse_csv_with(bytes, &LoadOptions::default()).map(|l| l.bars)
}

/// [`parse_csv`] with options, returning the notices too.
pub fn parse_csv_with(bytes: &[u8], options: &LoadOptions) -> Result<Loaded, String> {
    read_csv(bytes, options)
}

/// Reads CSV text from `input` as it streams (memory: the bars, and one
/// line of at most [`MAX_LINE_BYTES`]).
pub fn read_csv(input: impl Read + Send, options: &LoadOptions) -> Result<Loaded, String> {
    let mut input = LineGuard::new(input);
    // The lines up to the first that is not blank: the header (or, with
    // `data.columns`, the first bar), which decides the separator.
    let mut head = Vec::new();
    let first = loop {
        let start = head.len();
        let n = read_line(&mut input, &mut head)?;
        if n == 0 {
            return Err("empty file: expected a header line and at least one bar".into());
        }
        let line = &head[start..];
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if !line.iter().all(|b| b.is_ascii_whitespace()) {
            break start;
        }
    };
    let kinds = separator_counts(&head[first..]);
    let delimiter = separator(kinds);
    let mixed = kinds.iter().filter(|&&c| c > 0).count() > 1;
    // The csv reader counts a record after a CRLF line ending one line
    // early (it takes the `\n` as the next record's start); see `line_of`.
    let crlf = head.ends_with(b"\r\n");
    let head = match head.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => rest.to_vec(),
        None => head,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(options.columns.is_none())
        .delimiter(delimiter)
        // Headers trimmed by the reader; fields as they are read (the
        // reader's own trimming copies every record).
        .trim(csv::Trim::Headers)
        .buffer_capacity(1 << 18)
        .from_reader(std::io::Cursor::new(head).chain(input));
    let header = match &options.columns {
        Some(names) => csv::StringRecord::from(names.clone()),
        None => reader.headers().map_err(|e| csv_error(e, crlf))?.clone(),
    };
    if header.len() > MAX_COLUMNS {
        return Err(format!(
            "line 1: {} columns; a data file has at most {MAX_COLUMNS}",
            header.len()
        ));
    }
    let names: Vec<&str> = header.iter().collect();
    let cols = find_columns(&names).map_err(|e| match options.columns {
        Some(_) => format!("{}: {e}", crate::key::DATA_COLUMNS),
        None if names.len() == 1 && (names[0].contains(';') || names[0].contains('\t')) => {
            format!("line 1: {e} (the file does not look comma-separated)")
        }
        None if mixed => {
            format!("line 1: {e} (the header mixes separators; a file is comma-separated, semicolon-separated or tab-separated, not several)")
        }
        None => format!("line 1: {e}"),
    })?;
    let notices = cols
        .notices(&names, options)
        .map_err(|e| format!("line 1: {e}"))?;
    let mut cols = cols;
    cols.choose_extra(&names, options);
    let mut rows = cols.validator("line", &names, options);
    // Two stages on two threads: this one reads the records (the csv
    // tokenizer and the UTF-8 check), the caller's parses and checks them, a
    // batch at a time, in order.
    let (full, records) = std::sync::mpsc::sync_channel::<Batch>(2);
    let (recycle, spent) = std::sync::mpsc::channel::<Vec<csv::StringRecord>>();
    std::thread::scope(|scope| {
        scope.spawn(move || loop {
            // A spent batch back from the checks: its records' buffers are
            // reused, not allocated again.
            let mut batch = spent.try_recv().unwrap_or_default();
            let mut used = 0;
            let end = loop {
                if used == BATCH_RECORDS {
                    break None;
                }
                if batch.len() == used {
                    batch.push(csv::StringRecord::new());
                }
                match reader.read_record(&mut batch[used]) {
                    Ok(true) => used += 1,
                    Ok(false) => break Some(Ok(())),
                    Err(e) => break Some(Err(csv_error(e, crlf))),
                }
            };
            // The checks have stopped (an error) when a send fails.
            if full.send(Batch::Records(batch, used)).is_err() {
                return;
            }
            if let Some(end) = end {
                let _ = full.send(Batch::End(end));
                return;
            }
        });
        for batch in records {
            match batch {
                Batch::Records(batch, used) => {
                    for record in &batch[..used] {
                        check_record(record, &cols, header.len(), crlf, &mut rows);
                    }
                    let _ = recycle.send(batch);
                }
                Batch::End(end) => return end,
            }
        }
        Ok(())
    })?;
    let bars = rows.finish("line 1: the file has a header but no bars")?;
    Ok(Loaded { bars, notices })
}

/// Records read at a time by the reading thread.
const BATCH_RECORDS: usize = 4096;

/// What the reading thread hands over: records (a batch and how many of
/// its records are filled), then how the file ended.
enum Batch {
    Records(Vec<csv::StringRecord>, usize),
    End(Result<(), String>),
}

/// Checks one record and, when it is a bar, pushes it.
fn check_record(
    record: &csv::StringRecord,
    cols: &Columns,
    fields: usize,
    crlf: bool,
    rows: &mut Validator,
) {
    let line = record.position().map_or(0, |p| line_of(p, crlf));
    if record.iter().all(|f| f.trim().is_empty()) {
        // The csv reader skips truly blank lines; a row of empty fields
        // is a bar with no values, refused like any other bad row.
        rows.problem(
            line,
            "every field is empty (a row of separators only)".into(),
        );
        return;
    }
    if record.len() < fields {
        rows.problem(
            line,
            format!("{} fields where the header has {fields}", record.len()),
        );
        return;
    }
    let mut joined = String::new();
    let time = match cols.clock {
        Some(c) => {
            joined.push_str(record[cols.time].trim());
            joined.push(' ');
            joined.push_str(record[c].trim());
            joined.as_str()
        }
        None => record[cols.time].trim(),
    };
    let extra: Vec<Cell<'_>> = cols
        .extra
        .iter()
        .map(|&c| Cell::Text(record[c].trim()))
        .collect();
    rows.push(Row {
        at: line,
        time: TimeCell::Text(time),
        ohlc: cols.price.map(|c| Cell::Text(record[c].trim())),
        adj_close: cols.adj_close.map(|c| Cell::Text(record[c].trim())),
        volume: cols.volume.map(|c| Cell::Text(record[c].trim())),
        extra: &extra,
    });
}

/// The file line of a record's position: the csv reader's own count, which
/// is one short for every record but the first in a file whose lines end
/// in CRLF.
fn line_of(p: &csv::Position, crlf: bool) -> u64 {
    p.line() + u64::from(crlf && p.record() > 0)
}

fn csv_error(e: csv::Error, crlf: bool) -> String {
    // The guard's errors name their line themselves.
    if let csv::ErrorKind::Io(io) = e.kind() {
        return io.to_string();
    }
    let line = e.position().map(|p| line_of(p, crlf));
    let what = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("expected {expected_len} fields like the header, found {len}"),
        csv::ErrorKind::Utf8 { .. } => {
            "invalid UTF-8; is this a text CSV file, not a binary one?".to_string()
        }
        _ => e.to_string(),
    };
    match line {
        Some(l) => format!("line {l}: {what}"),
        None => what,
    }
}

/// Reads one line (through its `\n`) onto `buf`; 0 at the end.
fn read_line(input: &mut impl Read, buf: &mut Vec<u8>) -> Result<usize, String> {
    let mut byte = [0u8; 1];
    let mut n = 0;
    loop {
        match input.read(&mut byte) {
            Ok(0) => return Ok(n),
            Ok(_) => {
                buf.push(byte[0]);
                n += 1;
                if byte[0] == b'\n' {
                    return Ok(n);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// A reader that refuses, naming the line, a line longer than
/// [`MAX_LINE_BYTES`] (a quoted field spanning lines counts as one line: an
/// unclosed quote must not swallow the file) and a NUL byte (a binary
/// file), as the bytes pass.
struct LineGuard<R> {
    inner: R,
    /// The line being read, from 1.
    line: u64,
    /// Bytes of that line (or of the quoted stretch) so far.
    length: usize,
    /// Inside a quoted field, and the line its quote opened on.
    quoted: Option<u64>,
}

impl<R: Read> LineGuard<R> {
    fn new(inner: R) -> Self {
        LineGuard {
            inner,
            line: 1,
            length: 0,
            quoted: None,
        }
    }

    fn refuse(&self, what: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, what)
    }

    /// Refuses the line (or the quoted stretch) once it is too long.
    #[inline]
    fn check_length(&self) -> std::io::Result<()> {
        if self.length <= MAX_LINE_BYTES {
            return Ok(());
        }
        let mib = MAX_LINE_BYTES >> 20;
        Err(self.refuse(match self.quoted {
            Some(from) => format!(
                "line {from}: a quoted field runs on for more than {mib} MiB; is a \" quote left unclosed?"
            ),
            None => format!(
                "line {}: longer than {mib} MiB; a CSV line of bars is a few dozen bytes (is this a CSV file?)",
                self.line
            ),
        }))
    }
}

impl<R: Read> Read for LineGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if crate::cancel::requested() {
            // Not ErrorKind::Interrupted: readers retry that one.
            return Err(std::io::Error::other("interrupted"));
        }
        let n = self.inner.read(buf)?;
        // Up to the first NUL byte (an error once the bytes before it pass),
        // a stretch of plain bytes at a time between the bytes that matter:
        // the same checks, in the same order, as byte by byte.
        let data = &buf[..n];
        let nul = memchr::memchr(0, data);
        let mut rest = &data[..nul.unwrap_or(n)];
        while !rest.is_empty() {
            let plain = memchr::memchr3(b'"', b'\n', b'\r', rest).unwrap_or(rest.len());
            self.length += plain;
            self.check_length()?;
            let Some(&b) = rest.get(plain) else {
                break;
            };
            rest = &rest[plain + 1..];
            // A doubled quote inside a field toggles twice.
            if b == b'"' {
                self.quoted = match self.quoted {
                    Some(_) => None,
                    None => Some(self.line),
                };
            }
            if b == b'\n' {
                self.line += 1;
            }
            // A line ends at \n or a lone \r (old Mac files), outside quotes.
            if (b == b'\n' || b == b'\r') && self.quoted.is_none() {
                self.length = 0;
                continue;
            }
            self.length += 1;
            self.check_length()?;
        }
        if nul.is_some() {
            return Err(self.refuse(format!(
                "line {}: the file contains NUL bytes; is it a binary file, not a CSV?",
                self.line
            )));
        }
        Ok(n)
    }
}
