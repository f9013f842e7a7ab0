//! The one loader seam: a file's format is told by its first bytes (and its
//! extension, to catch a mislabelled file); each format's reader feeds the
//! same [`Validator`](crate::data::validate), so every format gives the same
//! validated [`Bars`] for the same prices.

use std::path::Path;

use crate::data::guard::guarded;
use crate::data::ipc::{FILE_MAGIC, STREAM_MAGIC};
use crate::data::options::{LoadOptions, Loaded};
use crate::data::{parse_csv_with, parse_parquet};
use crate::error::{Error, Result};

/// A data file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Parquet,
    /// Arrow IPC: Feather v2, `.arrow`.
    Arrow,
}

const PARQUET_MAGIC: &[u8] = b"PAR1";
const FEATHER_V1_MAGIC: &[u8] = b"FEA1";

impl Format {
    /// The format `path`'s extension names, if it names one.
    pub fn of_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(Format::Parquet),
            "feather" | "arrow" | "ipc" => Some(Format::Arrow),
            "csv" | "txt" | "tsv" => Some(Format::Csv),
            _ => None,
        }
    }

    /// The format of a file starting with `bytes`: binary formats by their
    /// magic bytes, anything else is read as CSV text.
    pub fn of_content(bytes: &[u8]) -> Format {
        if bytes.starts_with(PARQUET_MAGIC) {
            Format::Parquet
        } else if bytes.starts_with(FILE_MAGIC) || bytes.starts_with(STREAM_MAGIC) {
            Format::Arrow
        } else {
            Format::Csv
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Parquet => "Parquet",
            Format::Arrow => "Arrow/Feather",
        }
    }
}

/// Reads and validates a data file of bars, in any supported format.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Loaded> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // The first bytes tell the format; CSV text streams from there, Parquet
    // is read a page at a time, Arrow needs the whole file.
    let mut head = Vec::with_capacity(8);
    (&mut file)
        .take(8)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    let in_file = |read: std::result::Result<Loaded, String>| {
        read.map(|loaded| in_file(loaded, path))
            .map_err(|message| Error::Data {
                path: path.to_path_buf(),
                message,
            })
    };
    let named = Format::of_extension(path);
    let content = Format::of_content(&head);
    let text = content == Format::Csv && !head.starts_with(FEATHER_V1_MAGIC) && !is_utf16(&head);
    if text && named.is_none_or(|f| f == Format::Csv) {
        let input = std::io::BufReader::new(std::io::Cursor::new(head).chain(file));
        return in_file(crate::data::csv::read_csv(input, options));
    }
    // A regular file is read a page at a time; a pipe is read whole.
    let regular = file.metadata().ok().filter(|m| m.is_file());
    if let Some(meta) =
        regular.filter(|_| content == Format::Parquet && named.is_none_or(|f| f == Format::Parquet))
    {
        let chunks = crate::data::parquet::FileChunks::new(file, meta.len());
        return in_file(guarded("Parquet", || {
            crate::data::parquet::read_parquet(chunks, options)
        }));
    }
    let mut bytes = head;
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    in_file(match named {
        Some(named)
            if named != Format::Csv
                && named != Format::of_content(&bytes)
                && !bytes.starts_with(FEATHER_V1_MAGIC) =>
        {
            Err(format!(
                "the name says {} but the content does not start like {} data",
                named.name(),
                named.name()
            ))
        }
        _ => parse(bytes, options),
    })
}

/// Names the file in the problems of its columns (reported later, when a
/// rule reads one).
fn in_file(mut loaded: Loaded, path: &Path) -> Loaded {
    for column in &mut loaded.bars.extra {
        if let Some(p) = &mut column.problem {
            *p = format!("{}, {p}", path.display());
        }
    }
    loaded
}

/// Parses a whole file's bytes; messages name rows or lines, not the file.
pub fn parse(bytes: Vec<u8>, options: &LoadOptions) -> std::result::Result<Loaded, String> {
    if is_utf16(&bytes) {
        return Err(
            "this is UTF-16 text (as some Windows programs export); save it as UTF-8".into(),
        );
    }
    if bytes.starts_with(FEATHER_V1_MAGIC) {
        return Err("this is a Feather version 1 file, which is not supported; write it again as Feather v2 (pandas ≥ 1.1 and pyarrow do by default) or Parquet".into());
    }
    match Format::of_content(&bytes) {
        Format::Parquet => guarded("Parquet", || parse_parquet(bytes.into(), options)),
        Format::Arrow => guarded("Arrow", || crate::data::ipc::read_arrow(bytes, options)),
        Format::Csv => parse_csv_with(&bytes, options),
    }
}

/// Whether `bytes` start with a UTF-16 byte order mark.
fn is_utf16(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF")
}
