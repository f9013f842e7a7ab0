//! Bars → a file, in the format its extension names: CSV (the default),
//! Parquet (`.parquet`, `.pq`) or Arrow IPC (`.feather`, `.arrow`, `.ipc`).
//! Loading a written file gives back exactly the same bars.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, TimestampMillisecondArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};

use crate::data::load::Format;
use crate::data::Bars;
use crate::error::{Error, Result};
use crate::format;

/// Writes `bars` to `path` (atomically) in the format of its extension.
pub fn write_bars(bars: &Bars, path: &Path) -> Result<()> {
    let bytes = match Format::of_extension(path) {
        Some(Format::Parquet) => to_parquet(bars),
        Some(Format::Arrow) => to_arrow(bars),
        Some(Format::Csv) | None => Ok(to_csv(bars).into_bytes()),
    }
    .map_err(|message| Error::Data {
        path: path.to_path_buf(),
        message,
    })?;
    format::write_atomic(path, &bytes)
}

/// `date,open,high,low,close[,volume][,extra…]`, floats in shortest round-trip form.
fn to_csv(bars: &Bars) -> String {
    let mut out = String::with_capacity(bars.len() * 96);
    out.push_str("date,open,high,low,close");
    if bars.volume.is_some() {
        out.push_str(",volume");
    }
    for column in &bars.extra {
        out.push(',');
        out.push_str(&csv_field(&column.name));
    }
    out.push('\n');
    // One style for the whole column: a reader refuses a mix of dates and date-times.
    let style = format::TimeStyle::for_times(&bars.time);
    for i in 0..bars.len() {
        out.push_str(&style.format(bars.time[i]));
        for v in [bars.open[i], bars.high[i], bars.low[i], bars.close[i]] {
            out.push(',');
            format::push_float(&mut out, v);
        }
        if let Some(v) = &bars.volume {
            out.push(',');
            format::push_float(&mut out, v[i]);
        }
        for column in &bars.extra {
            out.push(',');
            // An undefined value is an empty cell.
            if !column.values[i].is_nan() {
                format::push_float(&mut out, column.values[i]);
            }
        }
        out.push('\n');
    }
    out
}

/// A CSV header field, quoted when it holds a separator, quote or line end.
fn csv_field(name: &str) -> String {
    match name.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", name.replace('"', "\"\"")),
        false => name.to_string(),
    }
}

/// One record batch: a UTC millisecond timestamp `date`, then float64 prices.
fn to_batch(bars: &Bars) -> std::result::Result<RecordBatch, String> {
    let time = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
    let mut fields = vec![Field::new("date", time, false)];
    let mut columns: Vec<ArrayRef> = vec![Arc::new(
        TimestampMillisecondArray::from(bars.time.clone()).with_timezone("UTC"),
    )];
    let mut prices = vec![
        ("open", &bars.open),
        ("high", &bars.high),
        ("low", &bars.low),
        ("close", &bars.close),
    ];
    if let Some(v) = &bars.volume {
        prices.push(("volume", v));
    }
    for (name, values) in prices {
        fields.push(Field::new(name, DataType::Float64, false));
        columns.push(Arc::new(Float64Array::from(values.clone())));
    }
    for column in &bars.extra {
        fields.push(Field::new(&column.name, DataType::Float64, false));
        columns.push(Arc::new(Float64Array::from(column.values.clone())));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| e.to_string())
}

fn to_parquet(bars: &Bars) -> std::result::Result<Vec<u8>, String> {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;
    let batch = to_batch(bars)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut out = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props))
        .map_err(|e| e.to_string())?;
    writer.write(&batch).map_err(|e| e.to_string())?;
    writer.close().map_err(|e| e.to_string())?;
    Ok(out)
}

fn to_arrow(bars: &Bars) -> std::result::Result<Vec<u8>, String> {
    let batch = to_batch(bars)?;
    let mut out = Vec::new();
    let mut writer = arrow_ipc::writer::FileWriter::try_new(&mut out, &batch.schema())
        .map_err(|e| e.to_string())?;
    writer.write(&batch).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    drop(writer);
    Ok(out)
}
