//! A portfolio's open positions and gross exposure over time.

use plotters::prelude::*;

use super::{within, Area, Chart, Drawn, EQUITY_COLOR, LABEL_FONT, PLOT_WIDTH};
use crate::report::labels::TimeAxis;
use crate::text::axis_label;

/// Positions open (top) and gross exposure (bottom) at every time.
pub(crate) fn occupancy_svg(times: &[i64], positions: &[u32], exposure: &[f64]) -> Chart {
    let axis = TimeAxis::new(times);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, bottom) = root.split_vertically(210);
        let (top, _) = top.split_horizontally(PLOT_WIDTH);
        let (bottom, _) = bottom.split_horizontally(PLOT_WIDTH);
        let counts: Vec<f64> = positions.iter().map(|&p| f64::from(p)).collect();
        let most = counts.iter().copied().fold(1.0f64, f64::max);
        draw_steps(&top, "Positions open", &counts, most + 0.5, &axis, |v| {
            format!("{v:.0}")
        })?;
        let exposed: Vec<f64> = exposure
            .iter()
            .map(|&e| if within(e) { e } else { 0.0 })
            .collect();
        let high = exposed.iter().copied().fold(0.0f64, f64::max).max(0.01) * 1.05;
        draw_steps(
            &bottom,
            "Gross exposure (positions' value / portfolio's)",
            &exposed,
            high,
            &axis,
            |v| format!("{}%", axis_label(v * 100.0, high * 100.0)),
        )?;
        root.present()?;
    }
    Ok(svg)
}

fn draw_steps(
    area: &Area,
    caption: &str,
    values: &[f64],
    high: f64,
    axis: &TimeAxis,
    label: impl Fn(f64) -> String,
) -> Drawn {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..values.len().max(1) as f64, 0f64..high)?;
    chart
        .configure_mesh()
        .label_style(LABEL_FONT)
        .axis_desc_style(LABEL_FONT)
        .x_label_formatter(&|x| axis.label(*x))
        .y_label_formatter(&|y| label(*y))
        .x_labels(8)
        .y_labels(4)
        .draw()?;
    chart.draw_series(
        AreaSeries::new(
            values.iter().enumerate().map(|(i, &v)| (i as f64, v)),
            0.0,
            EQUITY_COLOR.mix(0.25),
        )
        .border_style(EQUITY_COLOR),
    )?;
    Ok(())
}
