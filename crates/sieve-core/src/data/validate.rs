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
                detail: None,
                frames: None,
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
        self.bars.time.reserve_exact(rows);
        for c in number_columns(&mut self.bars) {
            c.reserve_exact(rows);
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

    /// Appends a batch of plain columns (typed, without nulls) and checks
    /// them column by column, as [`Validator::push`] checks rows; `false`,
    /// with nothing kept, when any row breaks a rule: the caller then pushes
    /// the batch row by row, so that messages are exactly those of `push`.
    /// Formats nothing and allocates nothing per row.
    pub fn extend(&mut self, first_at: u64, plain: Plain<'_>) -> bool {
        let b = &self.bars;
        let start = b.len();
        let wants_volume = b.volume.is_some();
        if self.total > 0
            || plain.volume.is_some() != wants_volume
            || plain.extra.len() != b.extra.len()
            || plain.adj_close.is_some() && !self.adjust
        {
            return false;
        }
        let b = &mut self.bars;
        let n = plain.time.len();
        append(&mut b.time, plain.time);
        for (column, values) in b.extra.iter_mut().zip(plain.extra) {
            append(&mut column.values, values);
        }
        let prev = self.prev_time.map(|(t, _)| t);
        let mut ok = times_ok(prev, &b.time[start..]);
        // Prices and volume copied a slice at a time and checked while the
        // slice is still in cache.
        for column in [&mut b.open, &mut b.high, &mut b.low, &mut b.close] {
            column.reserve(n);
        }
        let mut volume = b.volume.as_mut().zip(plain.volume);
        if let Some((column, _)) = &mut volume {
            column.reserve(n);
        }
        for at in (0..n).step_by(CHECK_ROWS) {
            if !ok {
                break;
            }
            let rows = at..(at + CHECK_ROWS).min(n);
            let here = start + rows.start..start + rows.end;
            let prices = [&mut b.open, &mut b.high, &mut b.low, &mut b.close];
            for (column, values) in prices.into_iter().zip(plain.ohlc) {
                column.extend_from_slice(&values[rows.clone()]);
                ok &= all_of(&column[here.clone()], is_price);
            }
            if let Some((column, values)) = &mut volume {
                column.extend_from_slice(&values[rows.clone()]);
                ok &= all_of(&column[here.clone()], |v| v >= 0.0 && v.is_finite());
            }
            if let Some(adj) = plain.adj_close.filter(|_| ok) {
                ok &= adjust(
                    &adj[rows],
                    &mut b.open[here.clone()],
                    &mut b.high[here.clone()],
                    &mut b.low[here.clone()],
                    &mut b.close[here.clone()],
                );
            }
            ok = ok
                && ranges_ok(
                    &b.open[here.clone()],
                    &b.high[here.clone()],
                    &b.low[here.clone()],
                    &b.close[here],
                );
        }
        if !ok {
            b.time.truncate(start);
            for c in number_columns(b) {
                c.truncate(start);
            }
            return false;
        }
        if let Some(&last) = b.time.last().filter(|_| b.len() > start) {
            self.prev_time = Some((last, first_at + (b.len() - start - 1) as u64));
        }
        true
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

/// A batch of columns without nulls, for [`Validator::extend`]: times in
/// ms, prices as read (before any adjustment), extra columns as rules read
/// them (NaN where undefined).
pub(crate) struct Plain<'a> {
    pub time: Vec<i64>,
    pub ohlc: [&'a [f64]; 4],
    pub adj_close: Option<&'a [f64]>,
    pub volume: Option<&'a [f64]>,
    pub extra: Vec<Vec<f64>>,
}

/// Every column of `bars` but the time: prices, volume, extra columns.
fn number_columns(bars: &mut Bars) -> impl Iterator<Item = &mut Vec<f64>> {
    let prices = [
        &mut bars.open,
        &mut bars.high,
        &mut bars.low,
        &mut bars.close,
    ];
    let extra = bars.extra.iter_mut().map(|c| &mut c.values);
    prices.into_iter().chain(bars.volume.as_mut()).chain(extra)
}

/// Rows copied and checked at a time by [`Validator::extend`].
const CHECK_ROWS: usize = 2048;

/// Appends `values` to `column`: moved in when the column is empty and
/// has no room reserved for them (a file's later batches then copy into the
/// room its row count reserved, never regrowing).
fn append<T: Copy>(column: &mut Vec<T>, values: Vec<T>) {
    match column.is_empty() && column.capacity() < values.len() {
        true => *column = values,
        false => column.extend_from_slice(&values),
    }
}

/// What [`price`] accepts: finite and above zero.
#[inline]
fn is_price(v: f64) -> bool {
    v > 0.0 && v <= f64::MAX
}

/// Whether `ok(i)` holds for every `i` in `0..n`, checked in lanes of 8
/// without an early exit, which the compiler turns into vector code.
#[inline]
fn all_rows(n: usize, ok: impl Fn(usize) -> bool) -> bool {
    let mut lanes = [true; 8];
    let whole = n - n % 8;
    for base in (0..whole).step_by(8) {
        for (k, lane) in lanes.iter_mut().enumerate() {
            *lane &= ok(base + k);
        }
    }
    lanes.iter().all(|&l| l) && (whole..n).all(ok)
}

/// Whether `ok` holds for every value (see [`all_rows`]).
#[inline]
fn all_of<T: Copy>(values: &[T], ok: impl Fn(T) -> bool) -> bool {
    all_rows(values.len(), |i| ok(values[i]))
}

/// Times in 1900..2200, strictly increasing (after `prev`).
fn times_ok(prev: Option<i64>, times: &[i64]) -> bool {
    let after = match (prev, times.first()) {
        (Some(p), Some(&t)) => p < t,
        _ => true,
    };
    let (earlier, later) = match times.len() {
        0 => (times, times),
        n => (&times[..n - 1], &times[1..]),
    };
    after
        && all_of(times, |t| (EARLIEST_MS..LATEST_MS).contains(&t))
        && all_rows(earlier.len(), |i| earlier[i] < later[i])
}

/// Scales each bar's prices by adj / close, as [`Validator::push`] does;
/// `false` when an adjusted close is not a price.
fn adjust(
    adj: &[f64],
    open: &mut [f64],
    high: &mut [f64],
    low: &mut [f64],
    close: &mut [f64],
) -> bool {
    if !all_of(adj, is_price) {
        return false;
    }
    for i in 0..adj.len() {
        let factor = adj[i] / close[i];
        open[i] *= factor;
        high[i] *= factor;
        low[i] *= factor;
        close[i] *= factor;
    }
    true
}

/// Every high at or above max(open, close), every low at or below
/// min(open, close), compared as [`Validator::push`] compares them.
fn ranges_ok(open: &[f64], high: &[f64], low: &[f64], close: &[f64]) -> bool {
    let n = close.len();
    let (open, high, low) = (&open[..n], &high[..n], &low[..n]);
    all_rows(n, |i| {
        let (o, c) = (open[i], close[i]);
        // No NaN here (every price passed `is_price`, and an adjustment
        // by a positive factor makes none): >= is the negation of <.
        (high[i] >= o.max(c)) & (low[i] <= o.min(c))
    })
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
