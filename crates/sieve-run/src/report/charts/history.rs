//! The best verified objective by iteration.

use plotters::prelude::*;

use super::{drawable, not_drawn, Chart, LABEL_FONT};
use crate::text::{axis_label, integer_label};

pub(crate) fn history_svg(history: &[(u32, f64)]) -> Chart {
    let (lo, hi) = history
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(_, v)| {
            (a.min(v), b.max(v))
        });
    // A flat history still gets a readable axis: at least ±1 % of its level.
    let pad = ((hi - lo) * 0.1)
        .max(hi.abs().max(lo.abs()) * 0.01)
        .max(1e-6);
    let first = history.iter().map(|h| h.0).min().unwrap_or(1);
    let last = history.iter().map(|h| h.0).max().unwrap_or(1);
    if !drawable(lo - pad, hi + pad) {
        return Ok(not_drawn(
            "The chart of the best objective by iteration",
            lo,
            hi,
        ));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 300)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Best verified objective by iteration", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(
                first as f64 - 0.5..last as f64 + 0.5,
                (lo - pad)..(hi + pad),
            )?;
        // At most as many ticks as iterations: the tick step is then whole.
        chart
            .configure_mesh()
            .label_style(LABEL_FONT)
            .axis_desc_style(LABEL_FONT)
            .x_desc("iteration")
            .x_labels(((last - first + 1) as usize).clamp(1, 12))
            .x_label_formatter(&|v| integer_label(*v))
            .y_label_formatter(&|v| axis_label(*v, hi - lo + 2.0 * pad))
            .max_light_lines(0)
            .draw()?;
        let pts: Vec<(f64, f64)> = history.iter().map(|&(i, v)| (i as f64, v)).collect();
        chart.draw_series(LineSeries::new(pts.clone(), &BLUE))?;
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))?;
        root.present()?;
    }
    Ok(svg)
}
