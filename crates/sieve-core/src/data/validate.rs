//! The checks every bar passes, whatever the file format. Each reader turns
//! its rows into [`Row`]s; the [`Validator`] applies the rules of the README's
//! data section and collects problems (the first few offenders, then a count)
//! so one run of the loader tells the user everything wrong with their file.

use crate::data::time::{in_span, parse_time, unix_time, EARLIEST_MS, LATEST_MS};
use crate::data::{Bars, ExtraColumn};

/// How many offending rows an error message lists before summarising.
const MAX_LISTED: usize = 5;

pub(crate) const PRICE_NAMES: [&str; 4] = ["open", "high", "low", "close"];

/// One cell as a reader found it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Cell<'a> {
    /// Text, parsed here (CSV, or a string column).
    Text(&'a str),
    /// A typed number (Parquet, Arrow).
    Number(f64),
    /// A null in a typed column.
    Null,
}

/// A time cell as a reader found it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TimeCell<'a> {
    /// Text in any of the accepted forms.
    Text(&'a str),
    /// An integer unix time, its unit told by magnitude.
    Unix(i64),
    /// Milliseconds from a typed timestamp or date; `written` shows the raw
    /// value in messages.
    Ms {
        ms: i64,
        raw: i64,
        unit: &'static str,
    },
    Null,
}

/// One row: where it is, its time, open/high/low/close, and the optional
/// adjusted close and volume.
pub(crate) struct Row<'a> {
    pub at: u64,
    pub time: TimeCell<'a>,
    pub ohlc: [Cell<'a>; 4],
    pub adj_close: Option<Cell<'a>>,
    pub volume: Option<Cell<'a>>,
    /// The extra columns' cells, in the validator's order.
    pub extra: &'a [Cell<'a>],
}

/// Builds [`Bars`] from rows, checking each.
pub(crate) struct Validator {
    bars: Bars,
    /// What a place in the file is called in messages: "line" or "row".
    place: &'static str,
    /// Scale open/high/low/close by adj_close / close.
    adjust: bool,
    /// The adjusted-close column's name, for messages.
    adj_name: String,
    listed: Vec<String>,
    total: usize,
    prev_time: Option<(i64, u64)>,
    /// The written form of the first text time; every other must match it.
    first_form: Option<(TimeForm, u64, String)>,
}

impl Validator {
    pub fn new(
        place: &'static str,
        adjust: bool,
        adj_name: &str,
        volume: bool,
        extra: Vec<&str>,
        unread: Vec<String>,
    ) -> Validator {
        Validator {
            bars: Bars {
                time: Vec::new(),
                open: Vec::new(),
                high: Vec::new(),
                low: Vec::new(),
                close: Vec::new(),
                volume: volume.then(Vec::new),
                timezone: None,
                extra: extra
                    .into_iter()
                    .map(|name| ExtraColumn {
                        name: name.to_string(),
                        values: Vec::new(),
                        problem: None,
                    })
                    .collect(),
                unread,
            },
            place,
            adjust,
            adj_name: adj_name.to_string(),
            listed: Vec::new(),
            total: 0,
            prev_time: None,
            first_form: None,
        }
    }

    /// Records a problem at `at`.
    pub fn problem(&mut self, at: u64, problem: String) {
        self.total += 1;
        if self.listed.len() < MAX_LISTED {
            self.listed.push(format!("{} {at}: {problem}", self.place));
        }
    }

    /// Records that extra column `k` cannot be read at all (its type).
    pub fn extra_problem(&mut self, k: usize, problem: String) {
        if let Some(column) = self.bars.extra.get_mut(k) {
            column.problem.get_or_insert(problem);
        }
    }

    /// Room for `rows` more bars, when the reader knows how many are
    /// coming (no copies as the columns grow).
    pub fn reserve(&mut self, rows: usize) {
        let b = &mut self.bars;
        b.time.reserve_exact(rows);
        for c in [&mut b.open, &mut b.high, &mut b.low, &mut b.close] {
            c.reserve_exact(rows);
        }
        if let Some(v) = &mut b.volume {
            v.reserve_exact(rows);
        }
        for c in &mut b.extra {
            c.values.reserve_exact(rows);
        }
    }

    /// Checks `row` and, when its time is readable, appends it.
    pub fn push(&mut self, row: Row<'_>) {
        let at = row.at;
        let Some(time) = self.time(at, row.time) else {
            return;
        };
        if let Some((prev, prev_at)) = self.prev_time {
            let place = self.place;
            if time == prev {
                self.problem(at, format!("duplicate time (same as {place} {prev_at})"));
            } else if time < prev {
                self.problem(
                    at,
                    format!("time goes backwards (earlier than {place} {prev_at}); times must be strictly increasing"),
                );
            }
        }
        self.prev_time = Some((time, at));

        let mut ohlc = [0.0; 4];
        let mut row_ok = true;
        for ((value, cell), name) in ohlc.iter_mut().zip(row.ohlc).zip(PRICE_NAMES) {
            match price(cell) {
                Ok(v) => *value = v,
                Err(e) => {
                    self.problem(at, format!("column '{name}': {e}"));
                    row_ok = false;
                }
            }
        }
        if let Some(cell) = row.adj_close.filter(|_| self.adjust) {
            match price(cell) {
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
                    self.problem(at, format!("column '{}': {e}", self.adj_name));
                    row_ok = false;
                }
            }
        }
        let [open, high, low, close] = ohlc;
        if row_ok {
            if high < open.max(close) {
                self.problem(
                    at,
                    format!(
                        "high {high} is below max(open, close) = {}",
                        open.max(close)
                    ),
                );
            }
            if low > open.min(close) {
                self.problem(
                    at,
                    format!("low {low} is above min(open, close) = {}", open.min(close)),
                );
            }
        }
        if let Some(cell) = row.volume.filter(|_| self.bars.volume.is_some()) {
            match volume(cell) {
                Ok(v) => self.bars.volume.get_or_insert_with(Vec::new).push(v),
                Err(e) => self.problem(at, format!("column 'volume': {e}")),
            }
        }
        let place = self.place;
        for (column, &cell) in self.bars.extra.iter_mut().zip(row.extra) {
            let value = match extra_value(cell) {
                Ok(v) => v,
                Err(e) => {
                    // Only a rule that reads the column makes this an error.
                    if column.problem.is_none() {
                        column.problem = Some(format!("{place} {at}: {e}"));
                    }
                    f64::NAN
                }
            };
            column.values.push(value);
        }
        self.bars.time.push(time);
        self.bars.open.push(open);
        self.bars.high.push(high);
        self.bars.low.push(low);
        self.bars.close.push(close);
    }

    /// The row's time in ms, or `None` after recording why it is unreadable.
    fn time(&mut self, at: u64, cell: TimeCell<'_>) -> Option<i64> {
        let parsed = match cell {
            TimeCell::Text(written) => {
                let parsed = parse_time(written).map_err(|e| {
                    if written.chars().count() > 40 {
                        format!("cannot parse time {}", quote(written))
                    } else {
                        e
                    }
                });
                if parsed.is_ok() {
                    self.check_form(at, written);
                }
                parsed
            }
            TimeCell::Unix(n) => unix_time(n),
            // The written form only for a message: no text per row.
            TimeCell::Ms { ms, raw, unit } => match (EARLIEST_MS..LATEST_MS).contains(&ms) {
                true => Ok(ms),
                false => in_span(ms, &format!("{raw} {unit}")),
            },
            TimeCell::Null => Err("the time is empty (null)".into()),
        };
        parsed.map_err(|e| self.problem(at, e)).ok()
    }

    /// A file must write every time the same way.
    fn check_form(&mut self, at: u64, written: &str) {
        let form = TimeForm::of(written);
        match &self.first_form {
            None => self.first_form = Some((form, at, written.to_string())),
            Some((f, first_at, first_text)) if *f != form => {
                let message = format!(
                    "time {} is written differently from {} {first_at} ({}); mixed time formats are ambiguous",
                    quote(written),
                    self.place,
                    quote(first_text)
                );
                self.problem(at, message);
            }
            Some(_) => {}
        }
    }

    /// The bars, or every problem found; `empty` is the message for no rows.
    pub fn finish(self, empty: &str) -> Result<Bars, String> {
        if self.total > 0 {
            let mut msg = self.listed.join("; ");
            if self.total > self.listed.len() {
                msg.push_str(&format!(
                    "; and {} more problem(s)",
                    self.total - self.listed.len()
                ));
            }
            return Err(msg);
        }
        if self.bars.is_empty() {
            return Err(empty.to_string());
        }
        Ok(self.bars)
    }
}

/// A value quoted in a message, cut short when very long.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((at, _)) => format!("\"{}…\" ({} characters)", &s[..at], s.chars().count()),
        None => format!("\"{s}\""),
    }
}

/// A price: a finite number above zero. Formats nothing unless the cell
/// is bad (a million rows are four million prices).
#[inline]
fn price(cell: Cell<'_>) -> Result<f64, String> {
    let v = match cell {
        Cell::Text(s) => number(s)?,
        Cell::Number(v) => v,
        Cell::Null => return Err("the value is empty (null)".into()),
    };
    if v.is_finite() && v > 0.0 {
        return Ok(v);
    }
    let shown = match cell {
        Cell::Text(s) => quote(s),
        _ => v.to_string(),
    };
    if !v.is_finite() {
        return Err(format!("{shown} is not a finite number"));
    }
    Err(format!("price {shown} is not positive"))
}

/// A volume: a finite number, zero or more.
fn volume(cell: Cell<'_>) -> Result<f64, String> {
    let v = match cell {
        Cell::Text(s) => s
            .parse::<f64>()
            .map_err(|_| format!("cannot parse \"{s}\" as a number"))?,
        Cell::Number(v) => v,
        Cell::Null => return Err("the value is empty (null)".into()),
    };
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} is not a finite number ≥ 0"))
    }
}

/// A value of an extra column: a number, true/false as 1/0; an empty cell,
/// a null, a NaN, ±inf or a missing-value mark (NA, N/A, null, None) is
/// undefined (NaN).
fn extra_value(cell: Cell<'_>) -> Result<f64, String> {
    let v = match cell {
        // What spreadsheets, R and pandas write for a missing value.
        Cell::Text("" | "NA" | "N/A" | "#N/A" | "null" | "NULL" | "None") => f64::NAN,
        // pandas writes a true/false column as True / False.
        Cell::Text(s) if s.eq_ignore_ascii_case("true") => 1.0,
        Cell::Text(s) if s.eq_ignore_ascii_case("false") => 0.0,
        Cell::Text(s) => number(s)?,
        Cell::Number(v) => v,
        Cell::Null => f64::NAN,
    };
    // ±inf (a division by zero in pandas) is undefined, as `x / 0` is in
    // the rules.
    Ok(if v.is_infinite() { f64::NAN } else { v })
}

fn number(s: &str) -> Result<f64, String> {
    s.parse().map_err(|_| {
        let hint = if s.contains(',') && s.chars().any(|c| c.is_ascii_digit()) {
            " (thousands separators and decimal commas are not supported)"
        } else {
            ""
        };
        format!("cannot parse {} as a number{hint}", quote(s))
    })
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
