//! Arrow IPC (Feather v2, `.arrow`) → rows: the file format and the stream
//! format, compressed (lz4, zstd) or not, reading only the needed columns.

use std::io::Cursor;

use arrow_ipc::reader::{FileReader, StreamReader};

use crate::data::columnar::{self, Plan};
use crate::data::{LoadOptions, Loaded};

/// The first bytes of an Arrow IPC file.
pub(crate) const FILE_MAGIC: &[u8] = b"ARROW1";
/// The first bytes of an Arrow IPC stream (a continuation marker).
pub(crate) const STREAM_MAGIC: &[u8] = &[0xff, 0xff, 0xff, 0xff];

/// Reads Arrow IPC bytes into bars; messages name rows but not the file.
pub fn parse_arrow(bytes: &[u8], options: &LoadOptions) -> Result<Loaded, String> {
    let unreadable = |e: arrow_schema::ArrowError| format!("not a readable Arrow file: {e}");
    if bytes.starts_with(FILE_MAGIC) {
        let schema = FileReader::try_new(Cursor::new(bytes), None)
            .map_err(unreadable)?
            .schema();
        let plan = Plan::new(&schema, options, "Arrow")?;
        let reader =
            FileReader::try_new(Cursor::new(bytes), Some(plan.projection())).map_err(unreadable)?;
        columnar::read(plan, options, reader.map(|b| b.map_err(unreadable)))
    } else {
        let schema = StreamReader::try_new(Cursor::new(bytes), None)
            .map_err(unreadable)?
            .schema();
        let plan = Plan::new(&schema, options, "Arrow")?;
        let reader = StreamReader::try_new(Cursor::new(bytes), Some(plan.projection()))
            .map_err(unreadable)?;
        columnar::read(plan, options, reader.map(|b| b.map_err(unreadable)))
    }
}
