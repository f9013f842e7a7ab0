//! Bars: loading (CSV, Parquet, Arrow IPC/Feather), validation, writing, and
//! the synthetic series.

mod bars;
mod columnar;
mod columns;
mod csv;
mod detail;
mod guard;
mod ipc;
mod load;
mod options;
mod parquet;
mod synth;
mod time;
pub mod timeframe;
mod validate;
mod write;

pub use bars::{Bars, ExtraColumn, Frames, Informative};
pub use columnar::parse_batch;
pub use columns::{column_role, TIME_NAMES};
pub use csv::{parse_csv, parse_csv_with};
pub use detail::{Detail, DetailCounts, Prices};
pub use ipc::parse_arrow;
pub use load::{load, parse, Format};
pub use options::{LoadOptions, Loaded};
pub use parquet::parse_parquet;
pub use synth::{coarsen, synth};
pub use time::{parse_time, EARLIEST_MS, LATEST_MS, MS_PER_DAY};
pub use write::write_bars;
