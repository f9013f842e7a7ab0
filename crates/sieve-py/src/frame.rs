//! A pandas DataFrame's columns → an Arrow record batch → bars, validated by
//! the same code as a Parquet file (column names, aliases, every row rule).
//!
//! `sieve/__init__.py` hands each column over as one of:
//! * `("f64" | "i64", array)`: a C-contiguous float64 / int64 numpy array,
//!   read in place: the Arrow array is a view of numpy's memory;
//! * `("time_ns", array, nulls)`: datetime64[ns] as int64 UTC nanoseconds,
//!   with the positions of NaT;
//! * `("str", values)`: text (`None` for missing).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampNanosecondArray,
};
use arrow_buffer::{ArrowNativeType, BooleanBufferBuilder, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use sieve_core::data::{Bars, LoadOptions};
use sieve_core::Error;

/// Where a DataFrame's rows come from, in messages.
const KIND: &str = "DataFrame";

/// The columns of a DataFrame, Arrow arrays over numpy's own memory
/// (text copied).
pub(crate) struct Frame {
    names: Vec<String>,
    columns: Vec<ArrayRef>,
}

impl Frame {
    /// Reads `[(name, kind, ...), ...]` as described in the module docs.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Frame> {
        let mut names = Vec::new();
        let mut columns: Vec<ArrayRef> = Vec::new();
        for item in obj.try_iter()? {
            let item = item?;
            let item = item.cast::<PyTuple>()?;
            let name: String = item.get_item(0)?.extract()?;
            let kind: String = item.get_item(1)?.extract()?;
            let column: ArrayRef = match kind.as_str() {
                "f64" => Arc::new(Float64Array::new(numpy_view(&item.get_item(2)?)?, None)),
                "i64" => Arc::new(Int64Array::new(numpy_view(&item.get_item(2)?)?, None)),
                "time_ns" => {
                    let values = numpy_view::<i64>(&item.get_item(2)?)?;
                    let nat: Vec<usize> = item.get_item(3)?.extract()?;
                    // NaT as nulls; none (the usual index): no null buffer.
                    let nulls = (!nat.is_empty()).then(|| {
                        let mut valid = BooleanBufferBuilder::new(values.len());
                        valid.append_n(values.len(), true);
                        for i in nat.into_iter().filter(|&i| i < values.len()) {
                            valid.set_bit(i, false);
                        }
                        NullBuffer::new(valid.finish())
                    });
                    Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone("UTC"))
                }
                "str" => {
                    let values: Vec<Option<String>> = item.get_item(2)?.extract()?;
                    Arc::new(StringArray::from(values))
                }
                other => {
                    return Err(crate::SieveError::new_err(format!(
                        "column '{name}': unsupported column kind \"{other}\""
                    )))
                }
            };
            names.push(name);
            columns.push(column);
        }
        Ok(Frame { names, columns })
    }

    /// Validated bars, by the rules of every file format.
    /// The bars, and what the loader noticed (an unused adjusted close,
    /// a single price column), one line each.
    pub(crate) fn bars(&self, options: &LoadOptions) -> Result<(Bars, Vec<String>), Error> {
        let fields: Vec<Field> = self
            .names
            .iter()
            .zip(&self.columns)
            .map(|(n, c)| Field::new(n, c.data_type().clone(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let data = |message: String| Error::Data {
            path: KIND.into(),
            message,
        };
        if self.columns.is_empty() {
            return Err(data("the DataFrame has no columns".into()));
        }
        let batch =
            RecordBatch::try_new(schema, self.columns.clone()).map_err(|e| data(e.to_string()))?;
        let loaded = sieve_core::data::parse_batch(batch, options, KIND).map_err(data)?;
        Ok((loaded.bars, loaded.notices))
    }
}

/// A one-dimensional, C-contiguous numpy array of `T`, checked (an internal
/// error otherwise): its length and the address of its first element.
fn numpy_memory<T: Element>(array: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let py = array.py();
    let bad = |why: &str| crate::SieveError::new_err(format!("internal error: a column {why}"));
    // Exactly numpy's ndarray (a subclass could describe itself otherwise),
    // one-dimensional, C-contiguous, of this element type.
    let ndarray = py.import("numpy")?.getattr("ndarray")?;
    if !array.get_type().is(&ndarray) {
        return Err(bad("is not a numpy array"));
    }
    let interface = array.getattr("__array_interface__")?;
    let typestr: String = interface.get_item("typestr")?.extract()?;
    let shape: Vec<usize> = interface.get_item("shape")?.extract()?;
    let contiguous = interface.get_item("strides")?.is_none();
    let (address, _read_only): (usize, bool) = interface.get_item("data")?.extract()?;
    if typestr != T::TYPESTR || shape.len() != 1 || !contiguous {
        return Err(bad(
            "is not a one-dimensional contiguous array of the right type",
        ));
    }
    let length = shape[0];
    if length > 0 && (address == 0 || address % std::mem::align_of::<T>() != 0) {
        return Err(bad("is not aligned"));
    }
    Ok((length, address))
}

/// A copy of a one-dimensional, C-contiguous numpy array of `T`.
pub(crate) fn numpy_vec<T: Copy + Element>(array: &Bound<'_, PyAny>) -> PyResult<Vec<T>> {
    let (length, address) = numpy_memory::<T>(array)?;
    if length == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: `array` is a numpy ndarray (exact type) whose own interface
    // says it holds `length` contiguous, aligned elements of type `T` at
    // `address`; it is referenced (by the caller) and the GIL is held for the
    // whole copy, so no Python code can resize or free it meanwhile.
    let values = unsafe { std::slice::from_raw_parts(address as *const T, length) };
    Ok(values.to_vec())
}

/// Keeps a numpy array alive while Arrow reads its memory.
struct NumpyOwner(#[allow(dead_code)] std::panic::AssertUnwindSafe<Py<PyAny>>);

/// An Arrow buffer over a numpy array's own memory: no copy. The buffer
/// holds a reference to the array, which keeps it alive (and, numpy
/// refusing to resize an array others reference, its memory in place).
fn numpy_view<T: Element + ArrowNativeType>(array: &Bound<'_, PyAny>) -> PyResult<ScalarBuffer<T>> {
    let (length, address) = numpy_memory::<T>(array)?;
    let Some(start) = std::ptr::NonNull::new(address as *mut u8).filter(|_| length > 0) else {
        return Ok(ScalarBuffer::from(Vec::new()));
    };
    let owner = Arc::new(NumpyOwner(std::panic::AssertUnwindSafe(
        array.clone().unbind(),
    )));
    let bytes = length * std::mem::size_of::<T>();
    // SAFETY: numpy's interface says `bytes` bytes of aligned `T`s start at
    // `address`; `owner` references the array for as long as the buffer
    // lives. The buffer is read only while the GIL is held (the bars are
    // copied out of it in `DataSpec::study_noticed` and the `indicator`
    // call, before any work without the GIL), so no Python code can resize
    // or free the array while it is read.
    let buffer = unsafe { Buffer::from_custom_allocation(start, bytes, owner) };
    Ok(ScalarBuffer::new(buffer, 0, length))
}

/// The numpy type string of an element type (little-endian machines).
pub(crate) trait Element {
    const TYPESTR: &'static str;
}

impl Element for f64 {
    const TYPESTR: &'static str = "<f8";
}

impl Element for i64 {
    const TYPESTR: &'static str = "<i8";
}

impl Element for u8 {
    const TYPESTR: &'static str = "|u1";
}
