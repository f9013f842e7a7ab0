//! The objective over two parameters: the best screen score of each
//! cell, and which two parameters to map.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sieve_core::{Error, Result};

use super::{Area, Chart, Drawn, LABEL_FONT};
use crate::files::SweepRow;
use crate::report::HeatmapAxes;
use crate::text::{cell_label, round_sig, short_labels};

/// The two parameters (column indices) to map, as asked or the two whose
/// values move the best score most.
pub(crate) fn pick_axes(
    names: &[String],
    rows: &[SweepRow],
    axes: &HeatmapAxes,
) -> Result<Option<(usize, usize)>> {
    let find = |n: &str| {
        names.iter().position(|x| x == n).ok_or_else(|| {
            Error::Invalid(format!(
                "no parameter '{n}' in this run (parameters: {})",
                names.join(", ")
            ))
        })
    };
    let spread = |i: usize| -> f64 {
        let mut best: BTreeMap<u64, f64> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.score.is_finite()) {
            let e = best
                .entry(r.params[i].to_bits())
                .or_insert(f64::NEG_INFINITY);
            *e = e.max(r.score);
        }
        if best.len() < 2 {
            return -1.0;
        }
        let (lo, hi) = best
            .values()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        hi - lo
    };
    let mut ranked: Vec<usize> = (0..names.len()).filter(|&i| spread(i) >= 0.0).collect();
    ranked.sort_by(|&a, &b| spread(b).total_cmp(&spread(a)).then(a.cmp(&b)));
    let x = match &axes.x {
        Some(n) => find(n)?,
        None => match ranked.first() {
            Some(&i) => i,
            None => return Ok(None),
        },
    };
    let y = match &axes.y {
        Some(n) => find(n)?,
        None => match ranked.iter().find(|&&i| i != x) {
            Some(&i) => i,
            None => return Ok(None),
        },
    };
    if x == y {
        return Err(Error::Invalid(
            "the heatmap needs two different parameters".into(),
        ));
    }
    Ok(Some((x, y)))
}

/// The heatmap's cells: the best finite score at each (x value, y value).
pub(crate) struct Heat {
    xs: Vec<f64>,
    ys: Vec<f64>,
    cells: BTreeMap<(usize, usize), f64>,
    lo: f64,
    hi: f64,
}

impl Heat {
    pub(crate) fn new(rows: &[SweepRow], xi: usize, yi: usize) -> Heat {
        let distinct = |i: usize| {
            let mut v: Vec<f64> = rows.iter().map(|r| r.params[i]).collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v
        };
        let (xs, ys) = (distinct(xi), distinct(yi));
        let mut cells: BTreeMap<(usize, usize), f64> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.score.is_finite()) {
            let cx = xs.iter().position(|&v| v == r.params[xi]).unwrap_or(0);
            let cy = ys.iter().position(|&v| v == r.params[yi]).unwrap_or(0);
            let e = cells.entry((cx, cy)).or_insert(f64::NEG_INFINITY);
            *e = e.max(r.score);
        }
        let (lo, hi) = cells
            .values()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        Heat {
            xs,
            ys,
            cells,
            lo,
            hi,
        }
    }

    /// Blue (lowest) to red (highest).
    pub(crate) fn color(&self, v: f64) -> HSLColor {
        let t = if self.hi > self.lo {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            0.5
        };
        HSLColor(0.66 * (1.0 - t), 0.8, 0.5)
    }
}

pub(crate) const HEAT_SIZE: (u32, u32) = (780, 560);
pub(crate) const HEAT_MAP_WIDTH: u32 = 660;
pub(crate) const HEAT_MARGIN: u32 = 10;
pub(crate) const HEAT_X_LABELS: u32 = 48;

pub(crate) fn heatmap_svg(names: &[String], rows: &[SweepRow], xi: usize, yi: usize) -> Chart {
    let heat = Heat::new(rows, xi, yi);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, HEAT_SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let (map, bar) = root.split_horizontally(HEAT_MAP_WIDTH);
        draw_heat_cells(&map, &heat, &names[xi], &names[yi])?;
        if heat.lo <= heat.hi {
            draw_colour_bar(&bar, &heat)?;
        }
        root.present()?;
    }
    let _ = write!(
        svg,
        "<p>Colour: blue = {}, red = {} (cells without a kept candidate are blank).</p>",
        round_sig(heat.lo, 4),
        round_sig(heat.hi, 4)
    );
    Ok(svg)
}

pub(crate) fn draw_heat_cells(area: &Area, heat: &Heat, x_name: &str, y_name: &str) -> Drawn {
    let (nx, ny) = (heat.xs.len(), heat.ys.len());
    let (xl, yl) = (short_labels(&heat.xs, 2), short_labels(&heat.ys, 2));
    // Cell i spans i-0.5..i+0.5, so whole-number ticks sit on cell centres.
    let mut chart = ChartBuilder::on(area)
        .margin(HEAT_MARGIN)
        .x_label_area_size(HEAT_X_LABELS)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..nx as f64 - 0.5, -0.5..ny as f64 - 0.5)?;
    chart
        .configure_mesh()
        .label_style(LABEL_FONT)
        .axis_desc_style(LABEL_FONT)
        .disable_mesh()
        .x_desc(x_name)
        .y_desc(y_name)
        .x_labels(nx.clamp(1, 12))
        .y_labels(ny.clamp(1, 12))
        .x_label_formatter(&|v| cell_label(&xl, *v))
        .y_label_formatter(&|v| cell_label(&yl, *v))
        .draw()?;
    chart.draw_series(heat.cells.iter().map(|(&(cx, cy), &v)| {
        let (x, y) = (cx as f64, cy as f64);
        Rectangle::new(
            [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
            heat.color(v).filled(),
        )
    }))?;
    Ok(())
}

/// The colour scale beside the map, from its lowest to its highest value,
/// level with the map's plotting area.
pub(crate) fn draw_colour_bar(area: &Area, heat: &Heat) -> Drawn {
    const STEPS: i32 = 64;
    let (top, bottom) = (
        HEAT_MARGIN as i32,
        (HEAT_SIZE.1 - HEAT_MARGIN - HEAT_X_LABELS) as i32,
    );
    let (left, right) = (12, 36);
    for k in 0..STEPS {
        let y0 = top + (bottom - top) * k / STEPS;
        let y1 = top + (bottom - top) * (k + 1) / STEPS;
        let t = 1.0 - (k as f64 + 0.5) / STEPS as f64;
        let v = heat.lo + t * (heat.hi - heat.lo);
        area.draw(&Rectangle::new(
            [(left, y0), (right, y1)],
            heat.color(v).filled(),
        ))?;
    }
    area.draw(&Rectangle::new([(left, top), (right, bottom)], BLACK))?;
    let font = ("sans-serif", 16)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let values = if heat.hi > heat.lo {
        vec![heat.lo, (heat.lo + heat.hi) / 2.0, heat.hi]
    } else {
        vec![heat.lo]
    };
    let labels = short_labels(&values, 3);
    let ys = [bottom, (top + bottom) / 2, top];
    let names = ["min ", "", "max "];
    for (i, label) in labels.iter().enumerate() {
        let (y, name) = if values.len() == 1 {
            (ys[1], "")
        } else {
            (ys[i], names[i])
        };
        area.draw(&PathElement::new(vec![(right, y), (right + 4, y)], BLACK))?;
        area.draw(&Text::new(
            format!("{name}{label}"),
            (right + 7, y),
            font.clone(),
        ))?;
    }
    Ok(())
}
