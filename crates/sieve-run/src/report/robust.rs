//! The report's first section: is the optimum real? The verdict, the
//! Deflated Sharpe with its inputs, the PBO with its logit histogram and
//! degradation chart, and every verified candidate's score vs holdout.

use std::fmt::Write as _;

use plotters::prelude::*;
use sieve_core::Result;

use super::charts::scatter::xy_scatter;
use super::charts::{chart_error, drawable, not_drawn, Chart, LABEL_FONT};
use super::html::esc;
use crate::best::Best;
use crate::robust::{DsrRecord, PboRecord};
use crate::text::axis_label;

/// The robustness section; `score_vs_holdout` are the verified candidates'
/// (score, holdout) objectives of the best's iteration.
pub(super) fn push_robustness(
    html: &mut String,
    best: &Best,
    score_vs_holdout: &[(f64, f64)],
) -> Result<()> {
    html.push_str("<h2>Is it real?</h2>\n");
    let score = best
        .windows
        .get("score")
        .map_or(f64::NAN, |w| w.get("objective"));
    let holdout = best.windows.get("holdout").map(|w| w.get("objective"));
    let Some(r) = &best.robustness else {
        html.push_str("<p>The robustness numbers are computed when the run stops; this run has not stopped yet.</p>\n");
        return Ok(());
    };
    let _ = writeln!(
        html,
        "<p class=\"verdict\"><b>{}</b></p>",
        esc(&best.verdict().unwrap_or_default())
    );
    if let Some(h) = holdout {
        let _ = writeln!(
            html,
            "<p>{} of the best: {} in the score window (where it was selected), {} in the holdout (never used to select).</p>",
            esc(&best.objective),
            num(score),
            num(h)
        );
    }
    if let Some(d) = &r.dsr {
        push_dsr(html, d);
    }
    if let Some(p) = &r.pbo {
        push_pbo(html, p)?;
    }
    if let Some(why) = &r.pbo_skipped {
        let _ = writeln!(
            html,
            "<h3>Probability of Backtest Overfitting</h3>\n<p>Not computed: {}.</p>",
            esc(why)
        );
    }
    let pairs = score_vs_holdout;
    if pairs.len() > 1 {
        let _ = writeln!(
            html,
            "<h3>Score vs holdout {} of the {} verified candidates (iteration {})</h3>\n<p>A real edge shows as a rising cloud; an overfit grid as a cloud with no slope.</p>",
            esc(&best.objective),
            pairs.len(),
            best.iteration
        );
        let name = &best.objective;
        html.push_str(
            &xy_scatter(
                pairs,
                &format!("score-window {name}"),
                &format!("holdout {name}"),
            )
            .map_err(chart_error)?,
        );
    }
    Ok(())
}

fn num(v: f64) -> String {
    if !v.is_finite() || v.abs() >= 1e6 {
        crate::text::human(v)
    } else if v != 0.0 && v.abs() < 0.01 {
        format!("{v:.3e}")
    } else {
        format!("{v:.4}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), num)
}

fn push_dsr(html: &mut String, d: &DsrRecord) {
    html.push_str("<h3>Deflated Sharpe Ratio</h3>\n<p>The probability that the best's true Sharpe beats the best Sharpe that as many trials of pure noise would show (Bailey &amp; López de Prado, 2014). Sharpes here are per bar, not annualised.</p>\n<table><tr><th>input</th><th>value</th></tr>\n");
    for (name, value) in [
        ("DSR", opt(d.dsr)),
        ("Sharpe of the best (SR)", num(d.sharpe)),
        (
            "expected maximum Sharpe of noise (SR₀)",
            opt(d.expected_max_sharpe),
        ),
        ("trials screened (N)", d.trials.to_string()),
        (
            "variance of the trials' Sharpes (V)",
            opt(d.sharpe_variance),
        ),
        ("returns (T)", d.observations.to_string()),
        ("skewness (γ₃)", num(d.skew)),
        ("kurtosis, raw (γ₄)", num(d.kurtosis)),
    ] {
        let _ = writeln!(html, "<tr><td>{name}</td><td>{value}</td></tr>");
    }
    html.push_str("</table>\n");
    if d.sharpe_variance.is_none() {
        html.push_str("<p>V is unknown (fewer than two screened combinations have a finite score-window Sharpe), so the DSR is not computed.</p>\n");
    }
}

fn push_pbo(html: &mut String, p: &PboRecord) -> Result<()> {
    let _ = writeln!(
        html,
        "<h3>Probability of Backtest Overfitting</h3>\n<p>Over the {} distinct verified candidates of the best's iteration{}, the score window cut into {} blocks; in each of the {} ways to call half the blocks in-sample, the in-sample best is ranked out of sample (Bailey, Borwein, López de Prado &amp; Zhu). PBO is the share of splits where it lands at or below the median; Sharpes within a relative 1e-9 are ties.</p>",
        p.candidates,
        match p.identical {
            0 => String::new(),
            n => format!(" ({n} more had the same returns as one of them and count once)"),
        },
        p.blocks,
        p.splits
    );
    html.push_str("<table><tr><th>number</th><th>value</th></tr>\n");
    for (name, value) in [
        ("PBO", num(p.pbo)),
        ("P(out-of-sample Sharpe < 0)", num(p.prob_oos_loss)),
        ("degradation slope", opt(p.degradation_slope)),
        ("degradation intercept", opt(p.degradation_intercept)),
    ] {
        let _ = writeln!(html, "<tr><td>{name}</td><td>{value}</td></tr>");
    }
    html.push_str("</table>\n");
    if !p.logit_histogram.counts.is_empty() {
        html.push_str("<p>Logits λ of the splits (λ ≤ 0: the in-sample best did no better than the median out of sample).</p>\n");
        html.push_str(
            &histogram_svg(&p.logit_histogram.edges, &p.logit_histogram.counts)
                .map_err(chart_error)?,
        );
    }
    if p.picks.len() > 1 {
        html.push_str("<p>Degradation: the in-sample best's out-of-sample Sharpe against its in-sample Sharpe, one point per split.</p>\n");
        html.push_str(
            &xy_scatter(&p.picks, "in-sample Sharpe", "out-of-sample Sharpe")
                .map_err(chart_error)?,
        );
    }
    Ok(())
}

/// Bars of a histogram with `edges.len() - 1` bins.
fn histogram_svg(edges: &[f64], counts: &[u64]) -> Chart {
    let (x0, x1) = (edges[0], edges[edges.len() - 1]);
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.05;
    if !drawable(x0, x1) {
        return Ok(not_drawn("The histogram", x0, x1));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 320)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, 0f64..top)?;
        chart
            .configure_mesh()
            .label_style(LABEL_FONT)
            .axis_desc_style(LABEL_FONT)
            .x_desc("λ")
            .y_desc("splits")
            .x_label_formatter(&|v| axis_label(*v, x1 - x0))
            .y_label_formatter(&|v| axis_label(*v, top))
            .draw()?;
        chart.draw_series(counts.iter().enumerate().map(|(i, &c)| {
            // Bins are (edge, edge + width] with 0 an edge: the left of 0
            // holds λ ≤ 0, the overfit splits.
            let color = if edges[i + 1] <= 1e-12 * (edges[1] - edges[0]) {
                RED
            } else {
                BLUE
            };
            Rectangle::new(
                [(edges[i], 0.0), (edges[i + 1], c as f64)],
                color.mix(0.6).filled(),
            )
        }))?;
        root.present()?;
    }
    Ok(svg)
}
