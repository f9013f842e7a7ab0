//! The page's charts, one file each, drawn as inline SVG with plotters;
//! what they share (result types, colours, fonts) is here.

pub(crate) mod equity;
pub(crate) mod heatmap;
pub(crate) mod history;
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

pub(crate) fn chart_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Invalid(format!("drawing a chart: {e}"))
}
