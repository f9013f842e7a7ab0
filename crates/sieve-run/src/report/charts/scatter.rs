//! A scatter of two quantities (screen vs verified rank; score vs
//! holdout objective).

use plotters::prelude::*;

use super::{drawable, not_drawn, Chart, LABEL_FONT};
use crate::text::axis_label;

/// The range of `v`, padded by 5 % on each side.
pub(crate) fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let pad = ((hi - lo) * 0.05).max(1e-9);
    (lo - pad, hi + pad)
}

/// A scatter of finite (x, y) points with a zero line on each axis.
pub(crate) fn xy_scatter(points: &[(f64, f64)], x_name: &str, y_name: &str) -> Chart {
    let (x0, x1) = bounds(points.iter().map(|p| p.0));
    let (y0, y1) = bounds(points.iter().map(|p| p.1));
    if !drawable(x0, x1) {
        return Ok(not_drawn(
            &format!("The chart of {y_name} by {x_name}"),
            x0,
            x1,
        ));
    }
    if !drawable(y0, y1) {
        return Ok(not_drawn(
            &format!("The chart of {y_name} by {x_name}"),
            y0,
            y1,
        ));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 440)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .label_style(LABEL_FONT)
            .axis_desc_style(LABEL_FONT)
            .x_desc(x_name)
            .y_desc(y_name)
            .x_label_formatter(&|v| axis_label(*v, x1 - x0))
            .y_label_formatter(&|v| axis_label(*v, y1 - y0))
            .draw()?;
        let grey = BLACK.mix(0.4);
        if x0 < 0.0 && x1 > 0.0 {
            chart.draw_series(LineSeries::new([(0.0, y0), (0.0, y1)], grey))?;
        }
        if y0 < 0.0 && y1 > 0.0 {
            chart.draw_series(LineSeries::new([(x0, 0.0), (x1, 0.0)], grey))?;
        }
        chart.draw_series(
            points
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 2, BLUE.mix(0.45).filled())),
        )?;
        root.present()?;
    }
    Ok(svg)
}
