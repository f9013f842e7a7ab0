//! Arrow record batches (from Parquet or Arrow IPC/Feather) → rows for the
//! [`Validator`]. Only the needed columns are read; row numbers in messages
//! count data rows from 1.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Schema, TimeUnit};

use crate::data::columns::{find_columns, Columns};
use crate::data::time::MS_PER_DAY;
use crate::data::validate::{Cell, Row, TimeCell, Validator};
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

/// Validates every batch into bars.
/// Rows validated at a time.
const SLICE_ROWS: usize = 8192;

pub(crate) fn read(
    plan: Plan,
    options: &LoadOptions,
    total_rows: Option<usize>,
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
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
    let rows = batch.num_rows();
    read(plan, options, Some(rows), std::iter::once(Ok(batch)))
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
    fn cells<T>(
        values: impl Iterator<Item = Option<T>>,
        f: impl Fn(T) -> f64,
    ) -> Vec<Cell<'static>> {
        values
            .map(|v| v.map_or(Cell::Null, |x| Cell::Number(f(x))))
            .collect()
    }
    Ok(match array.data_type() {
        DataType::Float64 => cells(array.as_primitive::<Float64Type>().iter(), |x| x),
        DataType::Float32 => cells(array.as_primitive::<Float32Type>().iter(), f64::from),
        DataType::Int8 => cells(array.as_primitive::<Int8Type>().iter(), f64::from),
        DataType::Int16 => cells(array.as_primitive::<Int16Type>().iter(), f64::from),
        DataType::Int32 => cells(array.as_primitive::<Int32Type>().iter(), f64::from),
        DataType::Int64 => cells(array.as_primitive::<Int64Type>().iter(), |x| x as f64),
        DataType::UInt8 => cells(array.as_primitive::<UInt8Type>().iter(), f64::from),
        DataType::UInt16 => cells(array.as_primitive::<UInt16Type>().iter(), f64::from),
        DataType::UInt32 => cells(array.as_primitive::<UInt32Type>().iter(), f64::from),
        DataType::UInt64 => cells(array.as_primitive::<UInt64Type>().iter(), |x| x as f64),
        &DataType::Decimal128(_, scale) => {
            // An exact integer over an exact power of ten rounds once, like
            // parsing the decimal text.
            let unit = 10f64.powi(i32::from(scale));
            cells(array.as_primitive::<Decimal128Type>().iter(), move |x| {
                x as f64 / unit
            })
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
    fn scaled<'a>(
        values: impl Iterator<Item = Option<i64>>,
        unit: &'static str,
        to_ms: impl Fn(i64) -> Option<i64>,
    ) -> Vec<TimeCell<'a>> {
        values
            .map(|v| match v {
                None => TimeCell::Null,
                Some(raw) => match to_ms(raw) {
                    Some(ms) => TimeCell::Ms { ms, raw, unit },
                    // Beyond any date (on the side of its sign): the span
                    // check refuses it by name.
                    None => TimeCell::Ms {
                        ms: if raw < 0 { i64::MIN } else { i64::MAX },
                        raw,
                        unit,
                    },
                },
            })
            .collect()
    }
    let text = |v: Vec<Option<&'a str>>| {
        v.into_iter()
            .map(|s| s.map_or(TimeCell::Null, TimeCell::Text))
            .collect()
    };
    let unix = |v: Vec<Option<i64>>| {
        v.into_iter()
            .map(|n| n.map_or(TimeCell::Null, TimeCell::Unix))
            .collect()
    };
    Ok(match array.data_type() {
        // Arrow stores every timestamp in UTC; a time zone is display only.
        DataType::Timestamp(unit, _) => match unit {
            TimeUnit::Second => scaled(
                array.as_primitive::<TimestampSecondType>().iter(),
                "s",
                |x| x.checked_mul(1000),
            ),
            TimeUnit::Millisecond => scaled(
                array.as_primitive::<TimestampMillisecondType>().iter(),
                "ms",
                Some,
            ),
            TimeUnit::Microsecond => scaled(
                array.as_primitive::<TimestampMicrosecondType>().iter(),
                "µs",
                |x| Some(x.div_euclid(1000)),
            ),
            TimeUnit::Nanosecond => scaled(
                array.as_primitive::<TimestampNanosecondType>().iter(),
                "ns",
                |x| Some(x.div_euclid(1_000_000)),
            ),
        },
        DataType::Date32 => scaled(
            array
                .as_primitive::<Date32Type>()
                .iter()
                .map(|d| d.map(i64::from)),
            "days",
            |d| d.checked_mul(MS_PER_DAY),
        ),
        DataType::Date64 => scaled(array.as_primitive::<Date64Type>().iter(), "ms", Some),
        DataType::Int64 => unix(array.as_primitive::<Int64Type>().iter().collect()),
        DataType::Int32 => unix(
            array
                .as_primitive::<Int32Type>()
                .iter()
                .map(|v| v.map(i64::from))
                .collect(),
        ),
        DataType::UInt32 => unix(
            array
                .as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map(i64::from))
                .collect(),
        ),
        DataType::UInt64 => unix(
            array
                .as_primitive::<UInt64Type>()
                .iter()
                .map(|v| v.map(|x| i64::try_from(x).unwrap_or(i64::MAX)))
                .collect(),
        ),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => text(strings(name, array)?),
        other => {
            return Err(format!(
                "column '{name}' holds {other}; expected a timestamp, a date, integer unix time or text"
            ))
        }
    })
}
