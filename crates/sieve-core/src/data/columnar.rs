//! Arrow record batches (from Parquet or Arrow IPC/Feather) → rows for the
//! [`Validator`]. Only the needed columns are read; row numbers in messages
//! count data rows from 1.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use std::borrow::Cow;

use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, RecordBatch};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Schema, TimeUnit};

use crate::data::columns::{find_columns, Columns};
use crate::data::time::unix_ms;
use crate::data::time::MS_PER_DAY;
use crate::data::validate::{Cell, Plain, Row, TimeCell, Validator};
use crate::data::{Bars, LoadOptions, Loaded};
use crate::key::DATA_COLUMNS;

/// The columns chosen from a file's schema, and what to tell the user.
pub(crate) struct Plan {
    pub columns: Columns,
    /// Field names as written, in schema order.
    pub names: Vec<String>,
    pub notices: Vec<String>,
}

impl Plan {
    /// Chooses the columns of `schema` by the same rules as a CSV header.
    /// `kind` names the format in messages ("Parquet", "Arrow").
    pub fn new(schema: &Schema, options: &LoadOptions, kind: &str) -> Result<Plan, String> {
        if options.columns.is_some() {
            return Err(format!(
                "{DATA_COLUMNS} names the columns of a CSV file without a header; this {kind} file names its own columns (remove {DATA_COLUMNS})"
            ));
        }
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut columns = find_columns(&refs)?;
        let notices = columns.notices(&refs, options)?;
        columns.choose_extra(&refs, options);
        Ok(Plan {
            columns,
            names,
            notices,
        })
    }

    /// Schema positions to read, ascending.
    pub fn projection(&self) -> Vec<usize> {
        let mut all = self.columns.all();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Rows validated at a time by the row-by-row checks.
const SLICE_ROWS: usize = 8192;

/// Validates every batch into bars.
pub(crate) fn read(
    plan: Plan,
    options: &LoadOptions,
    total_rows: Option<usize>,
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
) -> Result<Loaded, String> {
    read_batches(plan, options, total_rows, batches, true)
}

/// [`read`], with `columnwise = false` checking every batch row by row (the
/// tests compare the two).
fn read_batches(
    plan: Plan,
    options: &LoadOptions,
    total_rows: Option<usize>,
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
    columnwise: bool,
) -> Result<Loaded, String> {
    let refs: Vec<&str> = plan.names.iter().map(String::as_str).collect();
    let mut rows = plan.columns.validator("row", &refs, options);
    if let Some(n) = total_rows {
        rows.reserve(n);
    }
    let mut first_row = 1u64;
    for batch in batches {
        let batch = batch?;
        // In slices (views, not copies): the cells of one stay in cache,
        // however large the batch (a DataFrame is one batch).
        // (An empty batch too: its columns' types are still checked.)
        let (rows_in, mut offset) = (batch.num_rows(), 0);
        // Typed columns without nulls are checked column by column; a batch
        // with anything else, or any bad row, goes row by row below.
        if rows_in > 0 && columnwise {
            if let Some(plain) = plain(&plan, &batch, options) {
                if plain.apply(first_row, &mut rows) {
                    first_row += rows_in as u64;
                    continue;
                }
            }
        }
        loop {
            let len = SLICE_ROWS.min(rows_in - offset);
            add_batch(&plan, &batch.slice(offset, len), first_row, &mut rows)?;
            first_row += len as u64;
            offset += len;
            if offset >= rows_in {
                break;
            }
        }
    }
    let bars: Bars = rows.finish("the file has no rows")?;
    Ok(Loaded {
        bars,
        notices: plan.notices,
    })
}

/// Validates one in-memory record batch (a pandas DataFrame's columns, say)
/// by the rules of every file format; `kind` names it in messages.
pub fn parse_batch(
    batch: RecordBatch,
    options: &LoadOptions,
    kind: &str,
) -> Result<Loaded, String> {
    let plan = Plan::new(&batch.schema(), options, kind)?;
    // Nothing reserved: the columns checked column by column move in
    // whole (the time column, converted) rather than being copied again.
    read(plan, options, None, std::iter::once(Ok(batch)))
}

fn add_batch(
    plan: &Plan,
    batch: &RecordBatch,
    first_row: u64,
    rows: &mut Validator,
) -> Result<(), String> {
    let cols = &plan.columns;
    let column = |i: usize| {
        let name = &plan.names[i];
        batch
            .column_by_name(name)
            .map(|a| (name.as_str(), a.as_ref()))
            .ok_or_else(|| format!("column '{name}' is missing from a record batch"))
    };
    // A `date` with a `time` column: text times of day are joined to the
    // dates (as MetaTrader writes them); a typed `time` column is the whole
    // time by itself.
    let typed_clock = match cols.clock {
        Some(c) => {
            let (_, array) = column(c)?;
            !matches!(
                array.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            )
        }
        None => false,
    };
    let time = {
        let at = match (cols.clock, typed_clock) {
            (Some(c), true) => c,
            _ => cols.time,
        };
        let (name, array) = column(at)?;
        times(name, array)?
    };
    let clock = match cols.clock.filter(|_| !typed_clock) {
        Some(c) => {
            let (name, array) = column(c)?;
            Some(strings(name, array)?)
        }
        None => None,
    };
    let mut ohlc = Vec::with_capacity(4);
    for &c in &cols.price {
        let (name, array) = column(c)?;
        ohlc.push(numbers(name, array)?);
    }
    let optional = |c: Option<usize>| -> Result<Option<Vec<Cell<'_>>>, String> {
        c.map(|c| column(c).and_then(|(name, array)| numbers(name, array)))
            .transpose()
    };
    let adj_close = optional(cols.adj_close)?;
    let volume = optional(cols.volume)?;
    // An extra column of another type is read as all-undefined with the
    // reason kept: an error only if a rule reads it.
    let mut extra: Vec<Vec<Cell<'_>>> = Vec::with_capacity(cols.extra.len());
    for &c in &cols.extra {
        let (name, array) = column(c)?;
        extra.push(extra_cells(name, array).unwrap_or_else(|e| {
            rows.extra_problem(extra.len(), e);
            vec![Cell::Null; array.len()]
        }));
    }
    let mut cells: Vec<Cell<'_>> = Vec::with_capacity(extra.len());
    let mut joined = String::new();
    for i in 0..batch.num_rows() {
        let at = first_row + i as u64;
        let time = match (&clock, time[i]) {
            (Some(clock), TimeCell::Text(date)) => {
                joined.clear();
                joined.push_str(date);
                joined.push(' ');
                joined.push_str(clock[i].unwrap_or(""));
                TimeCell::Text(&joined)
            }
            // A typed date (date32/64, or a timestamp at midnight) and a text
            // time of day.
            (Some(clock), TimeCell::Ms { ms, .. }) if ms.rem_euclid(MS_PER_DAY) == 0 => {
                joined.clear();
                joined.push_str(&crate::format::TimeStyle::Date.format(ms));
                joined.push(' ');
                joined.push_str(clock[i].unwrap_or(""));
                TimeCell::Text(&joined)
            }
            (_, t) => t,
        };
        cells.clear();
        cells.extend(extra.iter().map(|v| v[i]));
        rows.push(Row {
            at,
            time,
            ohlc: [ohlc[0][i], ohlc[1][i], ohlc[2][i], ohlc[3][i]],
            adj_close: adj_close.as_ref().map(|v| v[i]),
            volume: volume.as_ref().map(|v| v[i]),
            extra: &cells,
        });
    }
    Ok(())
}

/// A numeric column's cells: any integer, float or decimal type.
fn numbers<'a>(name: &str, array: &'a dyn Array) -> Result<Vec<Cell<'a>>, String> {
    let values = f64_values(name, array)?;
    Ok(match array.logical_nulls() {
        None => values.iter().map(|&v| Cell::Number(v)).collect(),
        Some(nulls) => values
            .iter()
            .zip(nulls.iter())
            .map(|(&v, valid)| if valid { Cell::Number(v) } else { Cell::Null })
            .collect(),
    })
}

/// A primitive column's values (under its nulls too), each through `f`.
fn converted<T: ArrowPrimitiveType, U: Clone>(
    array: &dyn Array,
    f: impl Fn(T::Native) -> U,
) -> Cow<'static, [U]> {
    let values = array.as_primitive::<T>().values();
    Cow::Owned(values.iter().map(|&x| f(x)).collect())
}

/// A numeric column's values as f64 (any integer, float or decimal type),
/// whatever is under its nulls; borrowed when they are f64 already.
fn f64_values<'a>(name: &str, array: &'a dyn Array) -> Result<Cow<'a, [f64]>, String> {
    Ok(match array.data_type() {
        DataType::Float64 => Cow::Borrowed(array.as_primitive::<Float64Type>().values()),
        DataType::Float32 => converted::<Float32Type, f64>(array, f64::from),
        DataType::Int8 => converted::<Int8Type, f64>(array, f64::from),
        DataType::Int16 => converted::<Int16Type, f64>(array, f64::from),
        DataType::Int32 => converted::<Int32Type, f64>(array, f64::from),
        DataType::Int64 => converted::<Int64Type, f64>(array, |x| x as f64),
        DataType::UInt8 => converted::<UInt8Type, f64>(array, f64::from),
        DataType::UInt16 => converted::<UInt16Type, f64>(array, f64::from),
        DataType::UInt32 => converted::<UInt32Type, f64>(array, f64::from),
        DataType::UInt64 => converted::<UInt64Type, f64>(array, |x| x as f64),
        &DataType::Decimal128(_, scale) => {
            // An exact integer over an exact power of ten rounds once, like
            // parsing the decimal text.
            let unit = 10f64.powi(i32::from(scale));
            converted::<Decimal128Type, f64>(array, move |x| x as f64 / unit)
        }
        other => {
            return Err(format!(
                "column '{name}' holds {other}; expected numbers (integer, float or decimal)"
            ))
        }
    })
}

/// An extra column's cells: numbers as [`numbers`] reads them, true/false
/// as 1/0, text parsed cell by cell.
fn extra_cells<'a>(name: &str, array: &'a dyn Array) -> Result<Vec<Cell<'a>>, String> {
    Ok(match array.data_type() {
        DataType::Boolean => array
            .as_boolean()
            .iter()
            .map(|v| v.map_or(Cell::Null, |b| Cell::Number(f64::from(u8::from(b)))))
            .collect(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => strings(name, array)?
            .into_iter()
            .map(|v| v.map_or(Cell::Null, Cell::Text))
            .collect(),
        _ => numbers(name, array)?,
    })
}

/// A string column's values (a MetaTrader-style clock column).
fn strings<'a>(name: &str, array: &'a dyn Array) -> Result<Vec<Option<&'a str>>, String> {
    Ok(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => array.as_string::<i64>().iter().collect(),
        DataType::Utf8View => array.as_string_view().iter().collect(),
        other => return Err(format!("column '{name}' holds {other}; expected text")),
    })
}

/// The time column's cells: a timestamp of any unit (stored in UTC), a date,
/// integer unix time, or text in the accepted forms.
fn times<'a>(name: &str, array: &'a dyn Array) -> Result<Vec<TimeCell<'a>>, String> {
    let nulls = array.logical_nulls();
    let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
    if let Some((values, unit, to_ms)) = typed_times(array) {
        let cells = values.iter().enumerate().map(|(i, &raw)| match to_ms(raw) {
            _ if !valid(i) => TimeCell::Null,
            Some(ms) => TimeCell::Ms { ms, raw, unit },
            // Beyond any date (on the side of its sign): the span check
            // refuses it by name.
            None => TimeCell::Ms {
                ms: if raw < 0 { i64::MIN } else { i64::MAX },
                raw,
                unit,
            },
        });
        return Ok(cells.collect());
    }
    if let Some(values) = unix_times(array) {
        let cells = values.iter().enumerate().map(|(i, &n)| match valid(i) {
            true => TimeCell::Unix(n),
            false => TimeCell::Null,
        });
        return Ok(cells.collect());
    }
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(strings(name, array)?
            .into_iter()
            .map(|s| s.map_or(TimeCell::Null, TimeCell::Text))
            .collect()),
        other => Err(format!(
            "column '{name}' holds {other}; expected a timestamp, a date, integer unix time or text"
        )),
    }
}

/// A timestamp or date column's raw values (under its nulls too), its
/// unit's name for messages and the conversion to ms (`None` past any
/// date); `None` for another type. Arrow stores every timestamp in UTC; a
/// time zone is display only.
type ToMs = fn(i64) -> Option<i64>;
fn typed_times(array: &dyn Array) -> Option<(Cow<'_, [i64]>, &'static str, ToMs)> {
    fn raw(values: &ScalarBuffer<i64>) -> Cow<'_, [i64]> {
        Cow::Borrowed(values.as_ref())
    }
    Some(match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => (
            raw(array.as_primitive::<TimestampSecondType>().values()),
            "s",
            |x| x.checked_mul(1000),
        ),
        DataType::Timestamp(TimeUnit::Millisecond, _) => (
            raw(array.as_primitive::<TimestampMillisecondType>().values()),
            "ms",
            Some,
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => (
            raw(array.as_primitive::<TimestampMicrosecondType>().values()),
            "µs",
            |x| Some(x.div_euclid(1000)),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => (
            raw(array.as_primitive::<TimestampNanosecondType>().values()),
            "ns",
            |x| Some(x.div_euclid(1_000_000)),
        ),
        DataType::Date32 => (
            Cow::Owned(
                array
                    .as_primitive::<Date32Type>()
                    .values()
                    .iter()
                    .map(|&d| i64::from(d))
                    .collect(),
            ),
            "days",
            |d| d.checked_mul(MS_PER_DAY),
        ),
        DataType::Date64 => (raw(array.as_primitive::<Date64Type>().values()), "ms", Some),
        _ => return None,
    })
}

/// An integer column's values as unix times (their unit told by
/// magnitude), under its nulls too; `None` for another type.
fn unix_times(array: &dyn Array) -> Option<Cow<'_, [i64]>> {
    Some(match array.data_type() {
        DataType::Int64 => Cow::Borrowed(array.as_primitive::<Int64Type>().values().as_ref()),
        DataType::Int32 => converted::<Int32Type, i64>(array, i64::from),
        DataType::UInt32 => converted::<UInt32Type, i64>(array, i64::from),
        DataType::UInt64 => {
            converted::<UInt64Type, i64>(array, |x| i64::try_from(x).unwrap_or(i64::MAX))
        }
        _ => return None,
    })
}

/// A batch's columns when every one the plan reads is typed and without
/// nulls (extra columns may have nulls): `None` sends the batch row by row.
fn plain<'a>(plan: &Plan, batch: &'a RecordBatch, options: &LoadOptions) -> Option<PlainBatch<'a>> {
    let cols = &plan.columns;
    let column = |i: usize| batch.column_by_name(&plan.names[i]).map(|a| a.as_ref());
    let no_nulls = |a: &dyn Array| a.logical_null_count() == 0;
    if cols.clock.is_some() {
        return None;
    }
    let time = column(cols.time).filter(|a| no_nulls(*a))?;
    // A time past any date becomes i64::MIN, which the span check refuses
    // (the rows then say which). Mapped, not collected into an Option: one
    // allocation of the right size.
    let time: Vec<i64> = match typed_times(time) {
        Some((values, _, to_ms)) => values
            .iter()
            .map(|&x| to_ms(x).unwrap_or(i64::MIN))
            .collect(),
        None => unix_times(time)?
            .iter()
            .map(|&n| unix_ms(n).unwrap_or(i64::MIN))
            .collect(),
    };
    let numbers = |i: usize| -> Option<Cow<'a, [f64]>> {
        let a = column(i).filter(|a| no_nulls(*a))?;
        f64_values("", a).ok()
    };
    let mut prices: Vec<(usize, Cow<'a, [f64]>)> = Vec::with_capacity(4);
    for &c in &cols.price {
        if !prices.iter().any(|(p, _)| *p == c) {
            prices.push((c, numbers(c)?));
        }
    }
    let adj_close = match cols.adj_close.filter(|_| options.adjust) {
        Some(c) => Some(numbers(c)?),
        None => None,
    };
    let volume = match cols.volume {
        Some(c) => Some(numbers(c)?),
        None => None,
    };
    let mut extra = Vec::with_capacity(cols.extra.len());
    for &c in &cols.extra {
        extra.push(extra_values(column(c)?)?);
    }
    Some(PlainBatch {
        time,
        prices,
        price_at: cols.price,
        adj_close,
        volume,
        extra,
    })
}

/// An extra column's values as rules read them (NaN for a null or ±inf,
/// true/false as 1/0); `None` for text or a type that is not numeric.
fn extra_values(array: &dyn Array) -> Option<Vec<f64>> {
    let mut values = match array.data_type() {
        DataType::Boolean => array
            .as_boolean()
            .values()
            .iter()
            .map(|b| f64::from(u8::from(b)))
            .collect(),
        _ => f64_values("", array).ok()?.into_owned(),
    };
    let nulls = array.logical_nulls();
    for (i, v) in values.iter_mut().enumerate() {
        if v.is_infinite() || nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            *v = f64::NAN;
        }
    }
    Some(values)
}

/// The columns of [`plain`], owned or borrowed from the batch.
struct PlainBatch<'a> {
    time: Vec<i64>,
    /// Each distinct price column once, by schema position.
    prices: Vec<(usize, Cow<'a, [f64]>)>,
    price_at: [usize; 4],
    adj_close: Option<Cow<'a, [f64]>>,
    volume: Option<Cow<'a, [f64]>>,
    extra: Vec<Vec<f64>>,
}

impl PlainBatch<'_> {
    /// Appends the batch to `rows` if every row passes (see
    /// [`Validator::extend`]).
    fn apply(self, first_row: u64, rows: &mut Validator) -> bool {
        let PlainBatch {
            time,
            prices,
            price_at,
            adj_close,
            volume,
            extra,
        } = self;
        let price = |c: usize| -> &[f64] {
            prices
                .iter()
                .find(|(p, _)| *p == c)
                .map_or(&[], |(_, v)| v.as_ref())
        };
        let plain = Plain {
            time,
            ohlc: price_at.map(price),
            adj_close: adj_close.as_deref(),
            volume: volume.as_deref(),
            extra,
        };
        rows.extend(first_row, plain)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, TimestampNanosecondArray};
    use arrow_schema::Field;
    use proptest::prelude::*;

    use super::*;

    /// A defect planted in one row, or none.
    #[derive(Debug, Clone, Copy)]
    enum Defect {
        None,
        Price(usize, f64),
        HighBelow,
        LowAbove,
        SameTime,
        Backwards,
        OutOfSpan,
        NullPrice(usize),
        NullTime,
        Volume(f64),
        Adjusted(f64),
    }

    fn defect() -> impl Strategy<Value = Defect> {
        let bad = prop_oneof![
            Just(-1.0),
            Just(0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0)
        ];
        prop_oneof![
            Just(Defect::None),
            (0..4usize, bad.clone()).prop_map(|(c, v)| Defect::Price(c, v)),
            Just(Defect::HighBelow),
            Just(Defect::LowAbove),
            Just(Defect::SameTime),
            Just(Defect::Backwards),
            Just(Defect::OutOfSpan),
            (0..4usize).prop_map(Defect::NullPrice),
            Just(Defect::NullTime),
            prop_oneof![Just(-1.0), Just(f64::NAN), Just(f64::INFINITY)].prop_map(Defect::Volume),
            bad.prop_map(Defect::Adjusted),
        ]
    }

    /// `rows` bars of a random walk with `defect` at row `at`, as one
    /// record batch with a nanosecond index, an adjusted close, a volume
    /// and two extra columns (one with nulls and ±inf).
    fn batch(rows: usize, at: usize, defect: Defect, seed: u64) -> RecordBatch {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64 / 1000.0
        };
        let mut time: Vec<Option<i64>> = (0..rows as i64)
            .map(|i| Some(1_600_000_000_000_000_000 + i * 60_000_000_000))
            .collect();
        let mut p: [Vec<Option<f64>>; 4] = Default::default();
        let (mut adj, mut volume, mut signal, mut flag) = (vec![], vec![], vec![], vec![]);
        let mut close = 100.0;
        for _ in 0..rows {
            let open = close;
            close = open * (1.0 + (next() - 0.5) / 50.0);
            let high = open.max(close) * (1.0 + next() / 100.0);
            let low = open.min(close) * (1.0 - next() / 100.0);
            for (c, v) in p.iter_mut().zip([open, high, low, close]) {
                c.push(Some(v));
            }
            adj.push(Some(close * 0.5));
            volume.push(Some(next() * 1000.0));
            let s = next();
            signal.push(match s {
                s if s < 0.1 => None,
                s if s < 0.2 => Some(f64::INFINITY),
                s => Some(s),
            });
            flag.push(Some(s < 0.5));
        }
        match defect {
            Defect::None => {}
            Defect::Price(c, v) => p[c][at] = Some(v),
            Defect::HighBelow => p[1][at] = Some(p[0][at].unwrap().max(p[3][at].unwrap()) * 0.99),
            Defect::LowAbove => p[2][at] = Some(p[0][at].unwrap().min(p[3][at].unwrap()) * 1.01),
            Defect::SameTime if at > 0 => time[at] = time[at - 1],
            Defect::Backwards if at > 0 => time[at] = Some(time[at - 1].unwrap() - 1_000_000),
            Defect::SameTime | Defect::Backwards => {}
            Defect::OutOfSpan => time[at] = Some(i64::MIN + 5),
            Defect::NullPrice(c) => p[c][at] = None,
            Defect::NullTime => time[at] = None,
            Defect::Volume(v) => volume[at] = Some(v),
            Defect::Adjusted(v) => adj[at] = Some(v),
        }
        let [o, h, l, c] = p;
        let columns: Vec<(&str, ArrayRef)> = vec![
            (
                "time",
                Arc::new(TimestampNanosecondArray::from(time).with_timezone("UTC")),
            ),
            ("open", Arc::new(Float64Array::from(o))),
            ("high", Arc::new(Float64Array::from(h))),
            ("low", Arc::new(Float64Array::from(l))),
            ("close", Arc::new(Float64Array::from(c))),
            ("adj close", Arc::new(Float64Array::from(adj))),
            ("volume", Arc::new(Float64Array::from(volume))),
            ("signal", Arc::new(Float64Array::from(signal))),
            ("flag", Arc::new(BooleanArray::from(flag))),
            (
                "count",
                Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            ),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect();
        let arrays = columns.into_iter().map(|(_, a)| a).collect();
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays).unwrap()
    }

    fn load(
        batch: &RecordBatch,
        adjust: bool,
        split: usize,
        columnwise: bool,
    ) -> Result<Bars, String> {
        let options = LoadOptions {
            adjust,
            ..LoadOptions::default()
        };
        let plan = Plan::new(&batch.schema(), &options, "test")?;
        // The batch in two, as a file's record batches come.
        let split = split.min(batch.num_rows());
        let parts = [
            batch.slice(0, split),
            batch.slice(split, batch.num_rows() - split),
        ];
        let loaded = read_batches(plan, &options, None, parts.into_iter().map(Ok), columnwise)?;
        Ok(loaded.bars)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The column-by-column checks accept exactly what the row-by-row
        /// ones accept, with the same bars, and a bad row gives the row
        /// checks' very message.
        #[test]
        fn columnwise_checks_equal_row_checks(
            // Past one slice of the column checks (2,048 rows) too.
            rows in prop_oneof![1usize..40, 2000usize..4500],
            at in 0usize..4500,
            split in 0usize..4500,
            defect in defect(),
            adjust in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let b = batch(rows, at % rows, defect, seed);
            let fast = load(&b, adjust, split, true);
            let rowwise = load(&b, adjust, split, false);
            // Compared as printed: NaN (an undefined extra value) is not
            // equal to itself.
            prop_assert_eq!(format!("{fast:?}"), format!("{rowwise:?}"));
            if matches!(defect, Defect::None) {
                prop_assert!(fast.is_ok());
            }
        }
    }

    #[test]
    fn a_bad_row_is_found_in_both_batches() {
        // The plain checks see the second batch's first row against the
        // first batch's last.
        let b = batch(20, 10, Defect::SameTime, 7);
        let e = load(&b, false, 10, true).unwrap_err();
        assert_eq!(e, "row 11: duplicate time (same as row 10)");
        // A bad price, caught by the plain checks, is named by the row ones.
        let b = batch(20, 3, Defect::Price(2, -1.0), 7);
        let e = load(&b, false, 10, true).unwrap_err();
        assert_eq!(e, "row 4: column 'low': price -1 is not positive");
    }
}
