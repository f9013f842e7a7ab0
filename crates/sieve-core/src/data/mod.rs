//! Bars: loading (CSV), validation, and the synthetic series.

mod bars;
mod load;
mod synth;
mod time;

pub use bars::Bars;
pub use load::{load_csv, parse_csv};
pub use synth::{synth, write_csv};
pub use time::{parse_time, MS_PER_DAY};
