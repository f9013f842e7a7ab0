//! The page's charts, one file each, drawn as inline SVG with plotters;
//! what they share (result types, colours, fonts) is here.

pub(crate) mod equity;
pub(crate) mod heatmap;
pub(crate) mod history;
pub(crate) mod occupancy;
pub(crate) mod scatter;

use plotters::coord::Shift;
use plotters::prelude::*;
use sieve_core::Error;

pub(crate) type Chart = std::result::Result<String, Box<dyn std::error::Error>>;
pub(crate) type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

pub(crate) const EQUITY_COLOR: RGBColor = RGBColor(31, 90, 200);
pub(crate) const HOLD_COLOR: RGBColor = RGBColor(140, 140, 140);
pub(crate) const LONG_COLOR: RGBColor = RGBColor(0, 150, 60);
pub(crate) const SHORT_COLOR: RGBColor = RGBColor(200, 40, 40);
pub(crate) const EXIT_COLOR: RGBColor = RGBColor(50, 50, 50);
pub(crate) const SCORE_SHADE: RGBColor = RGBColor(200, 225, 255);
pub(crate) const HOLDOUT_SHADE: RGBColor = RGBColor(255, 200, 150);
/// Width of the plots beside the legend column of the equity chart.
pub(crate) const PLOT_WIDTH: u32 = 790;
/// Tick labels and axis names of every chart.
pub(crate) const LABEL_FONT: (&str, u32) = ("sans-serif", 16);
/// More trades than this and the equity curve gets no trade markers.
pub(crate) const MAX_MARKED_TRADES: usize = 500;

/// The largest magnitude a chart axis is drawn for. Past it (equity grown
/// from `initial_cash = 1e308`, a score of 1.8e308) plotters' search for
/// tick positions does not end; such a chart is replaced by a note.
pub(crate) const MAX_AXIS: f64 = 1e100;

/// Whether a value can stand on a chart axis: finite, within [`MAX_AXIS`].
pub(crate) fn within(v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_AXIS
}

/// Whether an axis from `lo` to `hi` can be drawn: both ends [`within`]
/// bounds, increasing.
pub(crate) fn drawable(lo: f64, hi: f64) -> bool {
    within(lo) && within(hi) && lo < hi
}

/// What stands in the page where a chart whose values cannot be drawn
/// would be.
pub(crate) fn not_drawn(what: &str, lo: f64, hi: f64) -> String {
    format!(
        "<p>{what}: not drawn; its values run from {} to {}, beyond what a chart axis can show.</p>\n",
        crate::text::human(lo),
        crate::text::human(hi)
    )
}

pub(crate) fn chart_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Invalid(format!("drawing a chart: {e}"))
}
