//! Expressions read on other bars — `tf("1d", x)` (these bars resampled)
//! and `informative("btc", x)` (another instrument's bars) — and how each
//! of their values reaches the strategy's bars: as of the bar's close,
//! from the last of the other bars that has ended by then, never earlier.

use std::borrow::Cow;

use super::ir::{FrameGraph, FrameOn};
use crate::data::timeframe::{as_of, calendar_of, length_of, resample, visible};
use crate::data::Bars;
use crate::error::{Error, Result};

/// The bars `on` reads beside `bars`, and when each of them ends (its
/// value is known from then on); `None` for an informative instrument the
/// data does not have (refused by [`columns_of`] first).
pub(super) fn bars_of<'a>(on: &FrameOn, bars: &'a Bars) -> Option<(Cow<'a, Bars>, Vec<i64>)> {
    match on {
        FrameOn::Timeframe(tf) => {
            let r = resample(bars, *tf, &calendar_of(bars), length_of(bars));
            Some((Cow::Owned(r.bars), r.end))
        }
        FrameOn::Informative(name) => {
            let other = &bars.frames.as_ref()?.informative(name)?.bars;
            let length = length_of(other);
            let ends = other.time.iter().map(|t| t.saturating_add(length));
            Some((Cow::Borrowed(&**other), ends.collect()))
        }
    }
}

/// `values` of bars ending at `ends`, on `bars`: each bar's the value of
/// the last of them that has ended by its close (NaN before the first).
pub(super) fn as_of_close(bars: &Bars, ends: &[i64], values: &[f64]) -> Vec<f64> {
    as_of(values, &visible(&bars.time, length_of(bars), ends))
}

/// The bars `frame` reads beside `bars`, as far as their columns go (its
/// rules check those); an informative instrument `bars` lack is an error.
pub(super) fn columns_of<'a>(frame: &FrameGraph, bars: &'a Bars) -> Result<&'a Bars> {
    let FrameOn::Informative(name) = &frame.on else {
        // Resampled bars have a volume where these have one, and no
        // other column (refused inside tf).
        return Ok(bars);
    };
    if let Some(i) = bars.frames.as_ref().and_then(|f| f.informative(name)) {
        return Ok(&i.bars);
    }
    let names: Vec<&str> = (bars.frames.iter())
        .flat_map(|f| f.informative.iter().map(|i| i.name.as_str()))
        .collect();
    let has = match names.is_empty() {
        true => "the data names no informative instrument (name its file in data.informative, e.g. informative = { btc = \"btc-5m.csv\" })".to_string(),
        false => format!("data.informative names {}", names.join(", ")),
    };
    Err(Error::config(
        "strategy",
        format!(
            "{} reads the informative instrument '{name}', but {has}",
            frame.text
        ),
    ))
}
