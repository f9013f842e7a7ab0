//! `report.html` of a walk-forward: the stitched out-of-sample equity
//! against buy-and-hold with the folds marked, the summary, and the
//! per-fold parameters and scores.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use sieve_core::format::{self, float};
use sieve_core::Result;

use super::charts::scatter::bounds;
use super::charts::{
    chart_error, drawable, not_drawn, Chart, EQUITY_COLOR, HOLD_COLOR, LABEL_FONT,
};
use super::html::{esc, push_document_start};
use crate::text::{axis_label, human};
use crate::walkforward::Outcome;
use crate::Study;

pub fn write(study: &Study, dir: &Path, o: &Outcome) -> Result<()> {
    let mut html = String::new();
    let title = format!(
        "sieve walk-forward: {} on {}",
        study.strategy().name(),
        study.data_label()
    );
    push_document_start(&mut html, &title);
    if let Some(w) = crate::walkforward::short_fold_windows(study, &o.folds) {
        let _ = writeln!(html, "<p class=\"warn\">Warning: {}.</p>", esc(&w));
    }
    let s = &o.summary;
    let opt = |v: crate::files::Num| human(v.0);
    let _ = writeln!(
        html,
        "<p>{} folds ({} with a best); walk-forward efficiency (mean test {obj} / mean train {obj}, over the {} folds with both finite) {}; {:.0}% of folds with a positive test {obj}. Each fold ran the whole optimize loop on its train window (its run folder is <code>fold-NNN/</code>).</p>",
        s.folds,
        s.folds_with_a_best,
        s.efficiency_folds,
        opt(s.efficiency),
        100.0 * s.positive_share,
        obj = esc(study.scoring().objective.name()),
    );
    html.push_str("<h2>Stitched out-of-sample result</h2>\n<p>The test windows' returns, each from its own fold's parameters, concatenated.</p>\n<table><tr><th>metric</th><th>value</th></tr>\n");
    let st = &s.stitched;
    for (name, v) in [
        (
            "span",
            format!("{} to {} ({} bars)", st.start, st.end, st.bars),
        ),
        ("total_return", opt(st.total_return)),
        ("cagr", opt(st.cagr)),
        ("max_drawdown", opt(st.max_drawdown)),
        ("calmar", opt(st.calmar)),
        ("sharpe", opt(st.sharpe)),
        ("sortino", opt(st.sortino)),
        ("trades", st.trades.to_string()),
        ("win_rate", opt(st.win_rate)),
        ("profit_factor", opt(st.profit_factor)),
        ("avg_trade", opt(st.avg_trade)),
        ("exposure", opt(st.exposure)),
    ] {
        let _ = writeln!(html, "<tr><td>{name}</td><td>{}</td></tr>", esc(&v));
    }
    html.push_str("</table>\n");
    if o.equity.len() > 1 {
        html.push_str(&equity_svg(study, o).map_err(chart_error)?);
    }
    html.push_str("<h2>Folds</h2>\n<table><tr><th>fold</th><th>train</th><th>test</th>");
    for n in study.param_names() {
        let _ = write!(html, "<th>{}</th>", esc(n));
    }
    html.push_str("<th>train score</th><th>test score</th><th>note</th></tr>\n");
    let style = format::TimeStyle::for_times(&study.bars().time);
    let span = |r: &std::ops::Range<usize>| {
        format!(
            "{} to {}",
            style.format(study.bars().time[r.start]),
            style.format(study.bars().time[r.end - 1])
        )
    };
    for (f, r) in o.folds.iter().zip(&o.results) {
        let _ = write!(
            html,
            "<tr><td>{}{}</td><td>{}</td><td>{}</td>",
            f.index,
            if f.partial { " (partial)" } else { "" },
            span(&f.train),
            span(&f.test)
        );
        for i in 0..study.param_names().len() {
            let v = r.params.as_ref().map_or("-".into(), |p| float(p[i]));
            let _ = write!(html, "<td>{v}</td>");
        }
        let _ = writeln!(
            html,
            "<td>{}</td><td>{}</td><td>{}</td></tr>",
            human(r.train_score),
            human(r.test_score),
            esc(&r.note)
        );
    }
    html.push_str("</table>\n<p class=\"foot\">Written by sieve ");
    html.push_str(env!("CARGO_PKG_VERSION"));
    html.push_str(".</p>\n</body></html>\n");
    format::write_atomic(&dir.join("report.html"), html.as_bytes())
}

/// Stitched equity and buy-and-hold over the test bars, folds marked.
fn equity_svg(study: &Study, o: &Outcome) -> Chart {
    let cash = study.scoring().engine.initial_cash;
    let first = o.equity[0].0;
    let close = &study.bars().close;
    let base = close[first.saturating_sub(1)];
    let hold: Vec<(f64, f64)> = o
        .equity
        .iter()
        .map(|&(i, _)| (i as f64, cash * close[i] / base))
        .collect();
    let strat: Vec<(f64, f64)> = o.equity.iter().map(|&(i, e)| (i as f64, e)).collect();
    let (x0, x1) = (first as f64, o.equity[o.equity.len() - 1].0 as f64);
    let (lo, hi) = bounds(strat.iter().chain(&hold).map(|p| p.1));
    if !drawable(lo, hi) {
        return Ok(not_drawn("The out-of-sample equity chart", lo, hi));
    }
    let times = &study.bars().time;
    let style = format::TimeStyle::for_times(times);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1.max(x0 + 1.0), lo..hi)?;
        chart
            .configure_mesh()
            .label_style(LABEL_FONT)
            .x_labels(5)
            .x_label_formatter(&|v| {
                let i = (v.round() as usize).min(times.len() - 1);
                style.format(times[i])
            })
            .y_label_formatter(&|v| axis_label(*v, hi - lo))
            .draw()?;
        for f in &o.folds {
            let x = f.test.start as f64;
            chart.draw_series(LineSeries::new([(x, lo), (x, hi)], BLACK.mix(0.25)))?;
        }
        chart
            .draw_series(LineSeries::new(hold, HOLD_COLOR.stroke_width(1)))?
            .label("buy and hold")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], HOLD_COLOR));
        chart
            .draw_series(LineSeries::new(strat, EQUITY_COLOR.stroke_width(2)))?
            .label("stitched out-of-sample")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], EQUITY_COLOR));
        chart
            .configure_series_labels()
            .label_font(LABEL_FONT)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.3))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}
