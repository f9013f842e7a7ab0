//! The best candidate's equity and drawdown, against buy-and-hold, with
//! the score and holdout windows shaded and the trades marked.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sieve_core::engine::{Backtest, Side, Trade};
use sieve_core::market::Instrument;
use sieve_core::metrics::{Window, WindowKind};

use super::{
    not_drawn, within, Area, Chart, Drawn, EQUITY_COLOR, EXIT_COLOR, HOLDOUT_SHADE, HOLD_COLOR,
    LABEL_FONT, LONG_COLOR, MAX_MARKED_TRADES, PLOT_WIDTH, SCORE_SHADE, SHORT_COLOR,
};
use crate::report::labels::TimeAxis;
use crate::text::axis_label;

/// Equity of putting all of `cash` in at the first close and holding.
pub(crate) fn buy_and_hold(close: &[f64], cash: f64) -> Vec<f64> {
    let first = close.first().copied().unwrap_or(f64::NAN);
    close.iter().map(|&c| cash * c / first).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    LongEntry,
    ShortEntry,
    Exit,
}

impl Marker {
    const ALL: [Marker; 3] = [Marker::LongEntry, Marker::ShortEntry, Marker::Exit];

    pub(crate) fn color(self) -> RGBColor {
        match self {
            Marker::LongEntry => LONG_COLOR,
            Marker::ShortEntry => SHORT_COLOR,
            Marker::Exit => EXIT_COLOR,
        }
    }

    /// A triangle around (0, 0) in pixels: up for a long entry, else down.
    pub(crate) fn shape(self) -> Vec<(i32, i32)> {
        match self {
            Marker::LongEntry => vec![(0, -5), (5, 4), (-5, 4)],
            _ => vec![(0, 5), (5, -4), (-5, -4)],
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Marker::LongEntry => "long entry",
            Marker::ShortEntry => "short entry",
            Marker::Exit => "exit",
        }
    }
}

/// (bar, marker) of every entry and every exit of `trades`.
pub(crate) fn trade_markers(trades: &[Trade]) -> Vec<(usize, Marker)> {
    let mut out = Vec::with_capacity(trades.len() * 2);
    for t in trades {
        let entry = match t.side {
            Side::Long => Marker::LongEntry,
            Side::Short => Marker::ShortEntry,
        };
        out.push((t.entry_bar, entry));
        if let Some(bar) = t.exit_bar {
            out.push((bar, Marker::Exit));
        }
    }
    out
}

pub(crate) enum Swatch {
    Line(RGBColor),
    Band(RGBColor),
    Marker(Marker),
}

/// Shaded windows: the score and holdout windows (the full one is not shaded).
pub(crate) fn shaded_windows(instrument: &Instrument) -> Vec<(Window, RGBColor)> {
    instrument
        .scoring
        .windows
        .all()
        .filter(|w| w.kind != WindowKind::Full)
        .map(|w| {
            let color = if w.kind == WindowKind::Holdout {
                HOLDOUT_SHADE
            } else {
                SCORE_SHADE
            };
            (w, color)
        })
        .collect()
}

pub(crate) fn equity_legend(
    instrument: &Instrument,
    markers: &[(usize, Marker)],
) -> Vec<(Swatch, String)> {
    let mut items = vec![
        (Swatch::Line(EQUITY_COLOR), "strategy equity".to_string()),
        (Swatch::Line(HOLD_COLOR), "buy and hold".to_string()),
    ];
    for (w, color) in shaded_windows(instrument) {
        items.push((Swatch::Band(color), format!("{} window", w.kind)));
    }
    for kind in Marker::ALL {
        if markers.iter().any(|&(_, m)| m == kind) {
            items.push((Swatch::Marker(kind), kind.name().to_string()));
        }
    }
    items
}

pub(crate) fn equity_svg(instrument: &Instrument, bt: &Backtest) -> Chart {
    let hold = buy_and_hold(
        &instrument.bars.close,
        instrument.scoring.engine.initial_cash,
    );
    let markers = if bt.trades.len() <= MAX_MARKED_TRADES {
        trade_markers(&bt.trades)
    } else {
        Vec::new()
    };
    let axis = TimeAxis::new(&instrument.bars.time);
    let values = || bt.equity.iter().chain(&hold).filter(|v| !v.is_nan());
    if !values().all(|&v| within(v)) {
        let (a, b) = values().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
        return Ok(not_drawn("The equity chart", a, b));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 580)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, bottom) = root.split_vertically(370);
        let (top_plot, top_legend) = top.split_horizontally(PLOT_WIDTH);
        let (bottom_plot, _) = bottom.split_horizontally(PLOT_WIDTH);
        draw_equity(&top_plot, instrument, &bt.equity, &hold, &markers, &axis)?;
        draw_legend(&top_legend, &equity_legend(instrument, &markers))?;
        draw_drawdown(&bottom_plot, &bt.equity, &axis)?;
        root.present()?;
    }
    Ok(svg)
}

/// The lowest and highest finite value of `series`, padded by 5 % of the
/// range.
pub(crate) fn padded_range<'a>(series: impl IntoIterator<Item = &'a [f64]>) -> (f64, f64) {
    let series: Vec<&[f64]> = series.into_iter().collect();
    let (lo, hi) = finite_bounds(&series);
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-6).max(1e-9);
    (lo - pad, hi + pad)
}

pub(crate) fn draw_equity(
    area: &Area,
    instrument: &Instrument,
    equity: &[f64],
    hold: &[f64],
    markers: &[(usize, Marker)],
    axis: &TimeAxis,
) -> Drawn {
    let n = equity.len() as f64;
    let (lo, hi) = padded_range([equity, hold]);
    let log = log_scale(&[equity, hold]);
    let mut chart = ChartBuilder::on(area);
    chart
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .caption(
            if log { "Equity (log scale)" } else { "Equity" },
            ("sans-serif", 18),
        );
    let curves = Curves {
        instrument,
        equity,
        hold,
        markers,
        axis,
    };
    // When the curves span more than 10× (buy-and-hold up a hundredfold
    // beside a strategy that doubled), a linear axis flattens the smaller
    // one.
    match log {
        true => {
            // Padded by a factor, as a log axis pads: 5 % of the range
            // below the lowest value could reach 0.
            let (lo, hi) = finite_bounds(&[equity, hold]);
            let (lo, hi) = (lo / 1.1, hi * 1.1);
            let mut chart = chart.build_cartesian_2d(0f64..n, (lo..hi).log_scale())?;
            curves.draw(&mut chart, lo, hi)
        }
        false => {
            let mut chart = chart.build_cartesian_2d(0f64..n, lo..hi)?;
            curves.draw(&mut chart, lo, hi)
        }
    }
}

/// What the equity chart draws, on a linear or a logarithmic value axis.
struct Curves<'a> {
    instrument: &'a Instrument,
    equity: &'a [f64],
    hold: &'a [f64],
    markers: &'a [(usize, Marker)],
    axis: &'a TimeAxis<'a>,
}

impl Curves<'_> {
    fn draw<'b, Y>(
        &self,
        chart: &mut ChartContext<'b, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>,
        lo: f64,
        hi: f64,
    ) -> Drawn
    where
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let n = self.equity.len();
        chart
            .configure_mesh()
            .label_style(LABEL_FONT)
            .axis_desc_style(LABEL_FONT)
            .x_label_formatter(&|x| self.axis.label(*x))
            .y_label_formatter(&|y| axis_label(*y, hi - lo))
            .x_labels(8)
            .draw()?;
        for (w, color) in shaded_windows(self.instrument) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(w.start as f64, lo), (w.end as f64, hi)],
                color.mix(0.5).filled(),
            )))?;
        }
        let finite = |s: &[f64]| -> Vec<(f64, f64)> {
            s.iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .map(|(i, &v)| (i as f64, v))
                .collect()
        };
        chart.draw_series(LineSeries::new(
            finite(self.hold),
            HOLD_COLOR.stroke_width(1),
        ))?;
        chart.draw_series(LineSeries::new(
            finite(self.equity),
            EQUITY_COLOR.stroke_width(2),
        ))?;
        chart.draw_series(self.markers.iter().filter(|&&(bar, _)| bar < n).map(
            |&(bar, kind)| {
                EmptyElement::at((bar as f64, self.equity[bar]))
                    + Polygon::new(kind.shape(), kind.color().filled())
            },
        ))?;
        Ok(())
    }
}

/// Whether `series` (all finite values above 0) span more than a factor
/// of 10: then the equity chart's axis is logarithmic.
pub(crate) fn log_scale(series: &[&[f64]]) -> bool {
    let (lo, hi) = finite_bounds(series);
    lo > 0.0 && hi / lo > 10.0
}

/// The lowest and highest finite value of `series`.
fn finite_bounds(series: &[&[f64]]) -> (f64, f64) {
    series
        .iter()
        .flat_map(|s| s.iter())
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

pub(crate) fn draw_drawdown(area: &Area, equity: &[f64], axis: &TimeAxis) -> Drawn {
    let mut peak = f64::NEG_INFINITY;
    let dd: Vec<f64> = equity
        .iter()
        .map(|&e| {
            peak = peak.max(e);
            -(1.0 - e / peak)
        })
        .collect();
    let worst = dd.iter().cloned().fold(0.0f64, f64::min);
    let low = worst * 1.05 - 1e-9;
    let mut chart = ChartBuilder::on(area)
        .caption("Drawdown", ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..equity.len() as f64, low..0f64)?;
    chart
        .configure_mesh()
        .label_style(LABEL_FONT)
        .axis_desc_style(LABEL_FONT)
        .x_label_formatter(&|x| axis.label(*x))
        .y_label_formatter(&|y| format!("{}%", axis_label(y * 100.0, -low * 100.0)))
        .x_labels(8)
        .y_labels(5)
        .draw()?;
    chart.draw_series(
        AreaSeries::new(
            dd.iter().enumerate().map(|(i, &d)| (i as f64, d)),
            0.0,
            RED.mix(0.3),
        )
        .border_style(RED),
    )?;
    Ok(())
}

/// A legend in its own column, beside (not over) the plot.
pub(crate) fn draw_legend(area: &Area, items: &[(Swatch, String)]) -> Drawn {
    let font = ("sans-serif", 16)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (swatch, text)) in items.iter().enumerate() {
        let y = 50 + 22 * i as i32;
        match swatch {
            Swatch::Line(c) => {
                area.draw(&PathElement::new(vec![(8, y), (30, y)], c.stroke_width(2)))?
            }
            Swatch::Band(c) => area.draw(&Rectangle::new([(8, y - 6), (30, y + 6)], c.filled()))?,
            Swatch::Marker(m) => area
                .draw(&(EmptyElement::at((19, y)) + Polygon::new(m.shape(), m.color().filled())))?,
        }
        area.draw(&Text::new(text.as_str(), (38, y), font.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod log_tests {
    use super::log_scale;

    /// Log scale once the curves span more than 10× and all are positive.
    #[test]
    fn log_scale_when_the_curves_span_a_decade() {
        let flat = [10_000.0, 12_000.0, 15_000.0];
        let hundredfold = [10_000.0, 200_000.0, 1_000_000.0];
        assert!(!log_scale(&[&flat, &flat]));
        assert!(log_scale(&[&flat, &hundredfold]));
        assert!(
            !log_scale(&[&[-1.0, 50.0], &hundredfold]),
            "not with values ≤ 0"
        );
        assert!(log_scale(&[&[f64::NAN, 1.0], &[20.0]]), "NaN is left out");
    }
}
