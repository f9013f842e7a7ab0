//! Parquet → rows, reading only the needed columns.

use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;

use crate::data::columnar::{self, Plan};
use crate::data::{LoadOptions, Loaded};

/// Rows per record batch: large enough to amortise decoding, small enough
/// that a batch's cells stay in cache.
const BATCH_ROWS: usize = 8192;

/// Reads Parquet bytes into bars; messages name rows but not the file.
pub fn parse_parquet(bytes: Bytes, options: &LoadOptions) -> Result<Loaded, String> {
    read_parquet(bytes, options)
}

/// Reads Parquet from bytes or an open file (which streams its pages, never
/// holding the whole file).
pub(crate) fn read_parquet<R: ChunkReader + Send + 'static>(
    input: R,
    options: &LoadOptions,
) -> Result<Loaded, String> {
    let unreadable = |e: parquet::errors::ParquetError| format!("not a readable Parquet file: {e}");
    let builder = ParquetRecordBatchReaderBuilder::try_new(input).map_err(unreadable)?;
    let plan = Plan::new(builder.schema(), options, "Parquet")?;
    let total = usize::try_from(builder.metadata().file_metadata().num_rows()).ok();
    let mask = ProjectionMask::roots(builder.parquet_schema(), plan.projection());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(unreadable)?;
    // Decoded on a second thread while this one checks the batches before,
    // in order. A decoder panic there ends its batches early; the scope
    // then panics here, where the loader's guard turns it into an error.
    std::thread::scope(|scope| {
        let (batch, batches) = std::sync::mpsc::sync_channel(4);
        scope.spawn(move || {
            crate::data::guard::quietly(|| {
                for b in reader {
                    // The reader may panic if asked again after an error.
                    let last = b.is_err();
                    // The checks have stopped (an error) when a send fails.
                    if batch.send(b).is_err() || last {
                        return;
                    }
                }
            })
        });
        let batches = batches
            .into_iter()
            .map(|b| b.map_err(|e| format!("not a readable Parquet file: {e}")));
        columnar::read(plan, options, total, batches)
    })
}

/// An open regular file read as Parquet reads bytes in memory: the same
/// bounds checks and messages (a truncated file says what bytes were
/// expected where), then a page at a time from the file.
pub(crate) struct FileChunks {
    file: std::fs::File,
    len: u64,
}

impl FileChunks {
    pub(crate) fn new(file: std::fs::File, len: u64) -> Self {
        FileChunks { file, len }
    }
}

impl parquet::file::reader::Length for FileChunks {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for FileChunks {
    type T = <std::fs::File as ChunkReader>::T;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        if start > self.len {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "Expected to read at offset {start}, while file has length {}",
                self.len
            )));
        }
        self.file.get_read(start)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let end = start.checked_add(length as u64);
        if start > self.len || end.is_none_or(|end| end > self.len) {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "Expected to read {length} bytes at offset {start}, while file has length {}",
                self.len
            )));
        }
        self.file.get_bytes(start, length)
    }
}
