//! A pandas DataFrame's columns → an Arrow record batch → bars, validated by
//! the same code as a Parquet file (column names, aliases, every row rule).
//!
//! `sieve/__init__.py` hands each column over as one of:
//! * `("f64" | "i64", array)`: a C-contiguous float64 / int64 numpy array,
//!   read straight from numpy's memory;
//! * `("time_ns", array, nulls)`: datetime64[ns] as int64 UTC nanoseconds,
//!   with the positions of NaT;
//! * `("str", values)`: text (`None` for missing).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampNanosecondArray,
};
use arrow_schema::{Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use sieve_core::data::{Bars, LoadOptions};
use sieve_core::Error;

/// Where a DataFrame's rows come from, in messages.
const KIND: &str = "DataFrame";

/// The columns of a DataFrame, copied out of numpy while the GIL is held.
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
                "f64" => Arc::new(Float64Array::from(numpy_copy::<f64>(item)?)),
                "i64" => Arc::new(Int64Array::from(numpy_copy::<i64>(item)?)),
                "time_ns" => {
                    let values = numpy_copy::<i64>(item)?;
                    let nulls: Vec<usize> = item.get_item(3)?.extract()?;
                    // No NaT (the usual index): the values move in as they are.
                    let array = if nulls.is_empty() {
                        TimestampNanosecondArray::from(values)
                    } else {
                        let mut cells: Vec<Option<i64>> = values.into_iter().map(Some).collect();
                        for i in nulls {
                            if let Some(c) = cells.get_mut(i) {
                                *c = None;
                            }
                        }
                        TimestampNanosecondArray::from(cells)
                    };
                    Arc::new(array.with_timezone("UTC"))
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

/// A copy of the numpy array of a `(name, kind, array, ...)` column.
fn numpy_copy<T: Copy + Element>(item: &Bound<'_, PyTuple>) -> PyResult<Vec<T>> {
    numpy_vec(&item.get_item(2)?)
}

/// A copy of a one-dimensional, C-contiguous numpy array of `T`.
pub(crate) fn numpy_vec<T: Copy + Element>(array: &Bound<'_, PyAny>) -> PyResult<Vec<T>> {
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
    if length == 0 {
        return Ok(Vec::new());
    }
    if address == 0 || address % std::mem::align_of::<T>() != 0 {
        return Err(bad("is not aligned"));
    }
    // SAFETY: `array` is a numpy ndarray (exact type) whose own interface
    // says it holds `length` contiguous, aligned elements of type `T` at
    // `address`; it is referenced (by the caller) and the GIL is held for the
    // whole copy, so no Python code can resize or free it meanwhile.
    let values = unsafe { std::slice::from_raw_parts(address as *const T, length) };
    Ok(values.to_vec())
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
