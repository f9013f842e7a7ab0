//! `report.html`: one self-contained page (no scripts, no network; charts
//! are inline SVG drawn with plotters) describing a run folder.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use sieve_core::format::{self, float};
use sieve_core::indicators::IndicatorSet;
use sieve_core::{strategy, Error, Result};

use crate::files::{self, SweepRow};
use crate::rundir::{RunDir, RunState};
use crate::Study;

/// Which two parameters the heatmap shows; `None` picks the two most
/// influential (largest spread of the per-value best objective).
#[derive(Debug, Default, Clone)]
pub struct HeatmapAxes {
    pub x: Option<String>,
    pub y: Option<String>,
}

/// Writes `DIR/report.html` for a finished (or partial) run.
pub fn write(study: &Study, dir: &Path, axes: &HeatmapAxes) -> Result<()> {
    let run = RunDir::new(dir)?;
    let state: RunState = run.load_state()?.ok_or_else(|| {
        Error::Invalid(format!(
            "{}: no run.json; is this a `sieve optimize` folder?",
            dir.display()
        ))
    })?;
    let best: serde_json::Value = files::read_json(&run.best_path())?;
    let mut html = String::new();
    let title = format!("sieve report: {} on {}", state.strategy, state.data);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        CSS,
        esc(&title)
    );
    let _ = writeln!(
        html,
        "<p>Objective <b>{}</b>; {} iteration(s); stopped because {}.</p>",
        esc(best["objective"].as_str().unwrap_or("")),
        state.iterations.len(),
        esc(state
            .stop_reason
            .as_deref()
            .unwrap_or("the run has not finished"))
    );

    // Best parameters and metrics.
    html.push_str("<h2>Best candidate</h2>\n<table><tr><th>parameter</th><th>value</th></tr>\n");
    if let Some(params) = best["params"].as_object() {
        for (k, v) in params {
            let value = v.as_f64().map_or_else(|| v.to_string(), float);
            let _ = writeln!(html, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(&value));
        }
    }
    html.push_str("</table>\n");
    let windows: Vec<(&String, &serde_json::Value)> = best["windows"]
        .as_object()
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    html.push_str("<h2>Metrics</h2>\n<table><tr><th>metric</th>");
    for (name, w) in &windows {
        let _ = write!(
            html,
            "<th>{} {}..{}</th>",
            esc(name),
            esc(w["start"].as_str().unwrap_or("")),
            esc(w["end"].as_str().unwrap_or(""))
        );
    }
    html.push_str("</tr>\n");
    for metric in sieve_core::metrics::Metrics::NAMES
        .iter()
        .chain(std::iter::once(&"objective"))
    {
        let _ = write!(html, "<tr><td>{metric}</td>");
        for (_, w) in &windows {
            let cell = match w[*metric].as_f64() {
                None => "NaN".to_string(),
                Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
                Some(v) => format!("{v:.6}"),
            };
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");

    // Equity and drawdown of the best.
    let params: Vec<f64> = study
        .param_names()
        .iter()
        .map(|n| best["params"][*n].as_f64().unwrap_or(f64::NAN))
        .collect();
    strategy::check_params(study.strategy, &params)?;
    let indicators = IndicatorSet::build(
        &study.bars,
        strategy::indicators_for(study.strategy, &params),
    );
    let eval = sieve_core::evaluate::Evaluator {
        bars: &study.bars,
        strategy: study.strategy,
        indicators: &indicators,
        scoring: &study.scoring,
    };
    let bt = eval.backtest(&params);
    html.push_str("<h2>Equity and drawdown of the best candidate</h2>\n");
    html.push_str(&equity_svg(study, &bt.equity).map_err(chart_error)?);

    // Heatmap over two parameters, from the first (widest) sweep.
    let first_sweep = dir.join("iter-001").join("sweep.csv");
    if first_sweep.exists() {
        let (names, rows) = files::read_sweep_csv(&first_sweep)?;
        if let Some((xi, yi)) = pick_axes(&names, &rows, axes)? {
            let _ = write!(
                html,
                "<h2>Objective over {} × {}</h2>\n<p>Best screen score over the other parameters, among the {} kept by the first sweep.</p>\n",
                esc(&names[xi]),
                esc(&names[yi]),
                rows.len()
            );
            html.push_str(&heatmap_svg(&names, &rows, xi, yi).map_err(chart_error)?);
        }
    }

    // Screen rank vs verified rank, last verified iteration.
    if let Some(last) = state.iterations.iter().rev().find(|i| i.stage == "done") {
        let path = dir
            .join(format!("iter-{:03}", last.iteration))
            .join("verified.csv");
        let pairs = verified_ranks(&path)?;
        let _ = write!(
            html,
            "<h2>Screen rank vs verified rank (iteration {})</h2>\n<p>Spearman {}.</p>\n",
            last.iteration,
            last.spearman.map_or("NaN".into(), |s| format!("{s:.3}"))
        );
        html.push_str(&scatter_svg(&pairs).map_err(chart_error)?);
    }

    // Iteration history.
    html.push_str("<h2>Iterations</h2>\n<table><tr><th>iteration</th><th>grid</th><th>screened</th><th>sweep s</th><th>verified</th><th>verify s</th><th>best</th><th>screen rank of best</th><th>Spearman</th></tr>\n");
    let mut history = Vec::new();
    for it in &state.iterations {
        let grid: Vec<String> = it
            .grid
            .iter()
            .map(|a| format!("{}[{}]", a.name, a.values.len()))
            .collect();
        let score = it.best.as_ref().and_then(|b| b.score);
        if let Some(s) = score {
            history.push((it.iteration, s));
        }
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            it.iteration,
            esc(&grid.join(" × ")),
            it.combinations_evaluated.map_or("-".into(), |n| n.to_string()),
            it.sweep_s.map_or("-".into(), |s| format!("{s:.2}")),
            it.candidates_verified.map_or("-".into(), |n| n.to_string()),
            it.verify_s.map_or("-".into(), |s| format!("{s:.2}")),
            score.map_or("-".into(), float),
            it.best.as_ref().map_or("-".into(), |b| b.screen_rank.to_string()),
            it.spearman.map_or("-".into(), |s| format!("{s:.3}")),
        );
    }
    html.push_str("</table>\n");
    if history.len() > 1 {
        html.push_str(&history_svg(&history).map_err(chart_error)?);
    }
    html.push_str("<p class=\"foot\">Written by sieve ");
    html.push_str(env!("CARGO_PKG_VERSION"));
    html.push_str(
        ". Every number here comes from the files beside this report.</p>\n</body></html>\n",
    );
    format::write_atomic(&run.report_path(), html.as_bytes())
}

const CSS: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}svg{display:block;margin:1em 0}.foot{color:#888;font-size:small}";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn chart_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Invalid(format!("drawing a chart: {e}"))
}

type Chart = std::result::Result<String, Box<dyn std::error::Error>>;

fn equity_svg(study: &Study, equity: &[f64]) -> Chart {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 520)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, bottom) = root.split_vertically(340);
        let n = equity.len();
        let time = &study.bars.time;
        let label = |x: &f64| {
            let i = (*x as usize).min(n.saturating_sub(1));
            format::time(time[i])
        };
        let (lo, hi) = equity
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &e| (a.min(e), b.max(e)));
        let mut chart = ChartBuilder::on(&top)
            .caption("Equity", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n as f64, (lo * 0.95)..(hi * 1.05))?;
        chart
            .configure_mesh()
            .x_label_formatter(&label)
            .x_labels(8)
            .draw()?;
        for w in study
            .scoring
            .windows
            .all()
            .filter(|w| w.kind != sieve_core::metrics::WindowKind::Full)
        {
            let color = if w.kind == sieve_core::metrics::WindowKind::Holdout {
                RGBColor(255, 200, 150)
            } else {
                RGBColor(200, 225, 255)
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(w.start as f64, lo * 0.95), (w.end as f64, hi * 1.05)],
                    color.mix(0.5).filled(),
                )))?
                .label(format!("{} window", w.kind))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        chart
            .draw_series(LineSeries::new(
                equity.iter().enumerate().map(|(i, &e)| (i as f64, e)),
                &BLUE,
            ))?
            .label("equity")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 10, y)], BLUE));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;

        let mut peak = f64::NEG_INFINITY;
        let dd: Vec<f64> = equity
            .iter()
            .map(|&e| {
                peak = peak.max(e);
                -(1.0 - e / peak)
            })
            .collect();
        let worst = dd.iter().cloned().fold(0.0f64, f64::min);
        let mut chart = ChartBuilder::on(&bottom)
            .caption("Drawdown", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n as f64, (worst * 1.05 - 1e-9)..0f64)?;
        chart
            .configure_mesh()
            .x_label_formatter(&label)
            .x_labels(8)
            .draw()?;
        chart.draw_series(
            AreaSeries::new(
                dd.iter().enumerate().map(|(i, &d)| (i as f64, d)),
                0.0,
                RED.mix(0.3),
            )
            .border_style(RED),
        )?;
        root.present()?;
    }
    Ok(svg)
}

/// The two parameters (column indices) to map, as asked or the two whose
/// values move the best score most.
fn pick_axes(
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

fn heatmap_svg(names: &[String], rows: &[SweepRow], xi: usize, yi: usize) -> Chart {
    let distinct = |i: usize| {
        let mut v: Vec<f64> = rows.iter().map(|r| r.params[i]).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let (xs, ys) = (distinct(xi), distinct(yi));
    let mut cell: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.score.is_finite()) {
        let cx = xs.iter().position(|&v| v == r.params[xi]).unwrap_or(0);
        let cy = ys.iter().position(|&v| v == r.params[yi]).unwrap_or(0);
        let e = cell.entry((cx, cy)).or_insert(f64::NEG_INFINITY);
        *e = e.max(r.score);
    }
    let (lo, hi) = cell
        .values()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..xs.len() as f64, 0f64..ys.len() as f64)?;
        let (xl, yl) = (
            |v: &f64| value_label(&xs, *v),
            |v: &f64| value_label(&ys, *v),
        );
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(names[xi].as_str())
            .y_desc(names[yi].as_str())
            .x_label_formatter(&xl)
            .y_label_formatter(&yl)
            .draw()?;
        chart.draw_series(cell.iter().map(|(&(cx, cy), &v)| {
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            let color = HSLColor(0.66 * (1.0 - t), 0.8, 0.5);
            Rectangle::new(
                [(cx as f64, cy as f64), (cx as f64 + 1.0, cy as f64 + 1.0)],
                color.filled(),
            )
        }))?;
        root.present()?;
    }
    let _ = write!(
        svg,
        "<p>Colour: blue = {}, red = {} (cells without a kept candidate are blank).</p>",
        float(lo),
        float(hi)
    );
    Ok(svg)
}

fn value_label(values: &[f64], x: f64) -> String {
    let i = x.floor() as usize;
    values.get(i).map_or(String::new(), |v| float(*v))
}

fn verified_ranks(path: &Path) -> Result<Vec<(f64, f64)>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n);
    let (Some(r), Some(s)) = (col("rank"), col("screen_rank")) else {
        return Err(Error::Data {
            path: path.to_path_buf(),
            message: "line 1: no rank/screen_rank columns".into(),
        });
    };
    Ok(lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((f.get(s)?.parse().ok()?, f.get(r)?.parse().ok()?))
        })
        .collect())
}

fn scatter_svg(pairs: &[(f64, f64)]) -> Chart {
    let max_x = pairs.iter().map(|p| p.0).fold(1.0, f64::max);
    let max_y = pairs.iter().map(|p| p.1).fold(1.0, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 480)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..max_x * 1.02, 0f64..max_y * 1.02)?;
        chart
            .configure_mesh()
            .x_desc("screen rank")
            .y_desc("verified rank")
            .draw()?;
        chart.draw_series(
            pairs
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 2, BLUE.mix(0.5).filled())),
        )?;
        root.present()?;
    }
    Ok(svg)
}

fn history_svg(history: &[(u32, f64)]) -> Chart {
    let (lo, hi) = history
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &(_, v)| {
            (a.min(v), b.max(v))
        });
    let pad = ((hi - lo) * 0.1).max(1e-6);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 300)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Best verified objective by iteration", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0.5f64..history.len() as f64 + 0.5, (lo - pad)..(hi + pad))?;
        chart.configure_mesh().x_desc("iteration").draw()?;
        let pts: Vec<(f64, f64)> = history.iter().map(|&(i, v)| (i as f64, v)).collect();
        chart.draw_series(LineSeries::new(pts.clone(), &BLUE))?;
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))?;
        root.present()?;
    }
    Ok(svg)
}
