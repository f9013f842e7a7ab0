//! Bars: loading (CSV), validation, and the synthetic series.

mod bars;
mod load;
mod synth;
mod time;

pub use bars::Bars;
pub use load::{load_csv, load_csv_with, parse_csv, parse_csv_with, LoadOptions, Loaded};
pub use synth::{synth, write_csv};
pub use time::{parse_time, EARLIEST_MS, LATEST_MS, MS_PER_DAY};
