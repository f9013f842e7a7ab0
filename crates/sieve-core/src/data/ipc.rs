//! Arrow IPC (Feather v2, `.arrow`) → rows: the file format and the stream
//! format, compressed (lz4, zstd) or not, reading only the needed columns.

use std::io::Cursor;

use arrow_buffer::Buffer;
use arrow_ipc::reader::{FileDecoder, FileReader, StreamReader};
use arrow_ipc::Block;

use crate::data::columnar::{self, Plan};
use crate::data::{LoadOptions, Loaded};

/// The first bytes of an Arrow IPC file.
pub(crate) const FILE_MAGIC: &[u8] = b"ARROW1";
/// The first bytes of an Arrow IPC stream (a continuation marker).
pub(crate) const STREAM_MAGIC: &[u8] = &[0xff, 0xff, 0xff, 0xff];

/// The most bytes one compressed buffer may claim to hold uncompressed.
/// arrow-ipc allocates what a buffer claims before decompressing it, so a
/// corrupt length could abort the process; no honest bar file has a single
/// column buffer this large in one record batch (134 million f64 values).
const MAX_BUFFER_BYTES: i64 = 1 << 30;

/// Reads Arrow IPC bytes into bars; messages name rows but not the file.
pub fn parse_arrow(bytes: &[u8], options: &LoadOptions) -> Result<Loaded, String> {
    read_arrow(bytes.to_vec(), options)
}

/// [`parse_arrow`] on bytes it owns: an IPC file's uncompressed columns are
/// then read in place (the arrays are views of `bytes`), not copied.
pub(crate) fn read_arrow(bytes: Vec<u8>, options: &LoadOptions) -> Result<Loaded, String> {
    check_buffer_lengths(&bytes)?;
    let unreadable = |e: arrow_schema::ArrowError| format!("not a readable Arrow file: {e}");
    if bytes.starts_with(FILE_MAGIC) {
        // The reader checks the footer (and says what is wrong with it); the
        // batches are then decoded from the file's own buffer.
        let schema = FileReader::try_new(Cursor::new(&bytes[..]), None)
            .map_err(unreadable)?
            .schema();
        let plan = Plan::new(&schema, options, "Arrow")?;
        let file = Buffer::from_vec(bytes);
        let (decoder, blocks) = file_blocks(&file, plan.projection()).map_err(unreadable)?;
        let batches = blocks.iter().filter_map(|b| {
            let read = block_bytes(&file, b).and_then(|bytes| decoder.read_record_batch(b, &bytes));
            read.map_err(unreadable).transpose()
        });
        columnar::read(plan, options, None, batches)
    } else {
        let schema = StreamReader::try_new(Cursor::new(&bytes[..]), None)
            .map_err(unreadable)?
            .schema();
        let plan = Plan::new(&schema, options, "Arrow")?;
        let reader = StreamReader::try_new(Cursor::new(&bytes[..]), Some(plan.projection()))
            .map_err(unreadable)?;
        columnar::read(plan, options, None, reader.map(|b| b.map_err(unreadable)))
    }
}

/// An IPC file's decoder (its schema, dictionaries and `projection`) and
/// its record batches' blocks, as arrow-ipc's own file reader sets them up;
/// every block was checked to lie inside the file ([`check_buffer_lengths`]).
fn file_blocks(
    file: &Buffer,
    projection: Vec<usize>,
) -> Result<(FileDecoder, Vec<Block>), arrow_schema::ArrowError> {
    let corrupt = || arrow_schema::ArrowError::ParseError("the footer is corrupt".into());
    let at = file.len().checked_sub(10).ok_or_else(corrupt)?;
    let tail: [u8; 10] = file[at..].try_into().map_err(|_| corrupt())?;
    let footer_len = arrow_ipc::reader::read_footer_length(tail)?;
    let start = at.checked_sub(footer_len).ok_or_else(corrupt)?;
    let footer = arrow_ipc::root_as_footer(&file[start..at]).map_err(|_| corrupt())?;
    let schema = footer.schema().ok_or_else(corrupt)?;
    let schema = std::sync::Arc::new(arrow_ipc::convert::fb_to_schema(schema));
    let mut decoder = FileDecoder::new(schema, footer.version()).with_projection(projection);
    for b in footer.dictionaries().iter().flat_map(|d| d.iter()) {
        decoder.read_dictionary(b, &block_bytes(file, b)?)?;
    }
    let blocks = footer.recordBatches().ok_or_else(corrupt)?;
    Ok((decoder, blocks.iter().copied().collect()))
}

/// A block of an IPC file (its message and body), a view of the file;
/// a block the file does not hold fails as arrow-ipc's file reader fails
/// on it (it seeks to the offset and reads the lengths, which it unwraps).
fn block_bytes(file: &Buffer, b: &Block) -> Result<Buffer, arrow_schema::ArrowError> {
    let (Ok(meta), Ok(body)) = (
        usize::try_from(b.metaDataLength()),
        usize::try_from(b.bodyLength()),
    ) else {
        // Where arrow-ipc's reader panics: the guard's message.
        panic!("a block's length is negative");
    };
    let len = meta.checked_add(body).expect("a block's length overflows");
    // A negative offset is a seek far past the end, as u64 is to the reader.
    let start = b.offset() as u64;
    match start.checked_add(len as u64) {
        Some(end) if end <= file.len() as u64 => Ok(file.slice_with_length(start as usize, len)),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "failed to fill whole buffer",
        )
        .into()),
    }
}

/// Refuses a file whose compressed buffers claim more than
/// [`MAX_BUFFER_BYTES`] uncompressed. Walks the record batches the reader
/// will decode: the footer's blocks of a file, the messages of a stream.
/// Structure it cannot follow is left for the reader to report.
fn check_buffer_lengths(bytes: &[u8]) -> Result<(), String> {
    for (meta, body) in messages(bytes)? {
        let Ok(message) = arrow_ipc::root_as_message(meta) else {
            continue;
        };
        let batch = message
            .header_as_record_batch()
            .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
        let Some(batch) = batch.filter(|b| b.compression().is_some()) else {
            continue;
        };
        for buffer in batch.buffers().iter().flatten() {
            let at = usize::try_from(buffer.offset()).ok();
            let claimed = at
                .and_then(|at| body.get(at..at.checked_add(8)?))
                .and_then(|b| b.try_into().ok())
                .map(i64::from_le_bytes);
            // -1 marks a buffer stored uncompressed; arrow-ipc allocates any
            // other length as given (a negative one becomes a huge size).
            if let Some(claimed) = claimed.filter(|c| !(-1..=MAX_BUFFER_BYTES).contains(c)) {
                return Err(format!(
                    "not a readable Arrow file: a compressed buffer claims {claimed} bytes uncompressed (more than {MAX_BUFFER_BYTES}); the file is corrupt"
                ));
            }
        }
    }
    Ok(())
}

/// A message's metadata flatbuffer and its body.
type Message<'a> = (&'a [u8], &'a [u8]);

/// (metadata flatbuffer, body) of each message the reader will decode. A
/// message that claims more bytes than the file holds is an error here:
/// arrow-ipc allocates what it claims before reading it.
fn messages(bytes: &[u8]) -> Result<Vec<Message<'_>>, String> {
    let mut out = Vec::new();
    let past_the_end = |claimed: usize| {
        format!(
            "not a readable Arrow file: a message claims {claimed} bytes, more than the {} the file holds; the file is corrupt",
            bytes.len()
        )
    };
    if bytes.starts_with(FILE_MAGIC) {
        let Some(tail) = bytes.len().checked_sub(10).and_then(|at| bytes.get(at..)) else {
            return Ok(out);
        };
        let Ok(tail) = <[u8; 10]>::try_from(tail) else {
            return Ok(out);
        };
        let Ok(footer_len) = arrow_ipc::reader::read_footer_length(tail) else {
            return Ok(out);
        };
        let Some(footer) = bytes
            .len()
            .checked_sub(10 + footer_len)
            .and_then(|start| bytes.get(start..start + footer_len))
        else {
            // arrow-ipc allocates the footer's claimed length first.
            return Err(past_the_end(footer_len));
        };
        let Ok(footer) = arrow_ipc::root_as_footer(footer) else {
            return Ok(out);
        };
        let blocks = footer
            .recordBatches()
            .into_iter()
            .chain(footer.dictionaries());
        for block in blocks.flat_map(|b| b.iter()) {
            let (Ok(offset), Ok(meta_len), Ok(body_len)) = (
                usize::try_from(block.offset()),
                usize::try_from(block.metaDataLength()),
                usize::try_from(block.bodyLength()),
            ) else {
                continue;
            };
            // The slices arrow-ipc's FileDecoder reads: the message is parsed
            // from the whole block after its prefix (so its flatbuffer may
            // reach past `metaDataLength`), the body starts at `metaDataLength`.
            let end = offset.saturating_add(meta_len).saturating_add(body_len);
            let Some(block) = bytes.get(offset..end) else {
                return Err(past_the_end(end));
            };
            let skip = if block.starts_with(STREAM_MAGIC) {
                8
            } else {
                4
            };
            if let (Some(meta), Some(body)) = (block.get(skip..), block.get(meta_len..)) {
                out.push((meta, body));
            }
        }
    } else {
        let mut at = 0usize;
        loop {
            let word = |at: usize| -> Option<u32> {
                Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
            };
            let Some(mut len) = word(at) else { break };
            at += 4;
            if len == u32::MAX {
                let Some(l) = word(at) else { break };
                len = l;
                at += 4;
            }
            if len == 0 || len > i32::MAX as u32 {
                break;
            }
            let Some(meta) = bytes.get(at..at + len as usize) else {
                return Err(past_the_end(len as usize));
            };
            at += len as usize;
            let Ok(message) = arrow_ipc::root_as_message(meta) else {
                break;
            };
            let Ok(body_len) = usize::try_from(message.bodyLength()) else {
                break;
            };
            let Some(body) = bytes.get(at..at.saturating_add(body_len)) else {
                return Err(past_the_end(body_len));
            };
            at += body_len;
            out.push((meta, body));
        }
    }
    Ok(out)
}
