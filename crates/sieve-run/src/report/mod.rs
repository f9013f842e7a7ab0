//! `report.html`: one self-contained page (no scripts, no network; charts
//! are inline SVG drawn with plotters) describing a run folder.

mod robust;
pub mod walkforward;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use indexmap::IndexMap;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sieve_core::config::Annualization;
use sieve_core::engine::{Backtest, Fill, Side, Trade};
use sieve_core::format::{self, float};
use sieve_core::market::Instrument;
use sieve_core::metrics::{Window, WindowKind};
use sieve_core::strategy::{self, Direction};
use sieve_core::{Error, Result};

use crate::best::{Best, WindowResult};
use crate::files::{self, SweepRow};
use crate::rundir::{RunDir, RunState, Stage};
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
    if !run.best_path().exists() {
        return Err(Error::Invalid(format!(
            "{}: the run has no best yet (no iteration has finished with a finite objective), so there is nothing to report",
            dir.display()
        )));
    }
    let best: Best = files::read_json(&run.best_path())?;
    let mut html = String::new();
    push_head(&mut html, &state, &best);
    robust::push_robustness(&mut html, &best, dir)?;
    push_best(&mut html, &best);
    if study.market().is_several() {
        let how = best.aggregate.as_deref().unwrap_or("mean");
        let _ = writeln!(
            html,
            "<p>Over {} instruments: each window's objective is the {how} of theirs; the other metrics are their means (trades summed). Each instrument follows.</p>",
            study.market().instruments.len()
        );
    }
    push_metrics(&mut html, "Metrics", &best.windows);
    push_settings(&mut html, study);
    let backtests = best_backtests(study, &best)?;
    for (instrument, bt) in study.market().instruments.iter().zip(&backtests) {
        if let Some(windows) = best.instruments.get(&instrument.name) {
            let _ = writeln!(html, "<h2>Instrument {}</h2>", esc(&instrument.name));
            push_metrics(&mut html, "Metrics", windows);
        }
        push_equity(&mut html, instrument, bt)?;
        push_trades(&mut html, &bt.trades, &instrument.bars.time);
    }
    push_heatmap(&mut html, dir, axes)?;
    push_ranks(&mut html, dir, &state)?;
    push_history(&mut html, &state)?;
    html.push_str("<p class=\"foot\">Written by sieve ");
    html.push_str(env!("CARGO_PKG_VERSION"));
    html.push_str(
        ". Every number here comes from the files beside this report.</p>\n</body></html>\n",
    );
    format::write_atomic(&run.report_path(), html.as_bytes())
}

const CSS: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}table.trades td,table.trades th{font-variant-numeric:tabular-nums;white-space:nowrap}tr.gap td{text-align:center;color:#777;font-style:italic}svg{display:block;margin:1em 0}.foot{color:#888;font-size:small}";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn chart_error<E: std::fmt::Display>(e: E) -> Error {
    Error::Invalid(format!("drawing a chart: {e}"))
}

fn push_head(html: &mut String, state: &RunState, best: &Best) {
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
        esc(&best.objective),
        state.iterations.len(),
        esc(state
            .stop_reason
            .as_deref()
            .unwrap_or("the run has not finished"))
    );
}

fn push_best(html: &mut String, best: &Best) {
    html.push_str("<h2>Best candidate</h2>\n<table><tr><th>parameter</th><th>value</th></tr>\n");
    for (k, v) in &best.params {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td></tr>",
            esc(k),
            esc(&float(*v))
        );
    }
    html.push_str("</table>\n");
}

fn push_metrics(html: &mut String, title: &str, windows: &IndexMap<String, WindowResult>) {
    let windows: Vec<(&String, &WindowResult)> = windows.iter().collect();
    let _ = write!(html, "<h2>{title}</h2>\n<table><tr><th>metric</th>");
    for (name, w) in &windows {
        let _ = write!(
            html,
            "<th>{}<br>{} to {}</th>",
            esc(name),
            esc(&w.start),
            esc(&w.end)
        );
    }
    html.push_str("</tr>\n");
    for metric in sieve_core::metrics::Metrics::NAMES
        .iter()
        .chain(std::iter::once(&"objective"))
    {
        let _ = write!(html, "<tr><td>{metric}</td>");
        for (_, w) in &windows {
            let cell = match w.get(metric) {
                v if v.is_nan() => "NaN".to_string(),
                v if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
                v => format!("{v:.6}"),
            };
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
}

// ---------------------------------------------------------------- settings

fn push_settings(html: &mut String, study: &Study) {
    html.push_str("<h2>Run settings</h2>\n<table><tr><th>setting</th><th>value</th></tr>\n");
    for (name, value) in run_settings(study) {
        let _ = writeln!(html, "<tr><td>{name}</td><td>{}</td></tr>", esc(&value));
    }
    html.push_str("</table>\n");
}

/// What the numbers of this report depend on, as (name, value) rows; with
/// several instruments, each one's span, windows and periods per year.
fn run_settings(study: &Study) -> Vec<(String, String)> {
    let s = study.scoring();
    let e = &s.engine;
    let mut rows = vec![("data".to_string(), study.data_label().to_string())];
    let several = study.market().is_several();
    for instrument in &study.market().instruments {
        let times = &instrument.bars.time;
        let tf = TimeFormat::of(times);
        let sc = &instrument.scoring;
        let name = |what: &str| match several {
            true => format!("{}: {what}", instrument.name),
            false => what.to_string(),
        };
        rows.extend([
            (
                name("first bar"),
                times.first().map_or("-".into(), |&t| tf.format(t)),
            ),
            (
                name("last bar"),
                times.last().map_or("-".into(), |&t| tf.format(t)),
            ),
            (name("bars"), times.len().to_string()),
            (
                name("score window"),
                window_span(&sc.windows.score, times, tf),
            ),
        ]);
        if let Some(h) = &sc.windows.holdout {
            rows.push((name("holdout window"), window_span(h, times, tf)));
        }
        rows.push((
            name("periods per year"),
            periods_per_year(study, sc.periods_per_year),
        ));
    }
    rows.extend(
        [
            ("fee (per fill, of notional)", fraction_and_percent(e.fee)),
            ("slippage (per fill)", fraction_and_percent(e.slippage)),
            ("fill", fill_name(e.fill).to_string()),
            ("direction", direction_name(s.direction).to_string()),
            ("objective", s.objective.to_string()),
            ("screen ranks by", format!("the {} window", s.screen.kind)),
            ("min trades", s.min_trades.to_string()),
            ("lot size", lot_size(e.lot_size)),
            ("initial cash", float(e.initial_cash)),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    if several {
        rows.push((
            "aggregate over instruments".into(),
            study.market().aggregation.how.to_string(),
        ));
    }
    rows
}

/// "START to END (N bars)" of bars `w.start..w.end`.
fn window_span(w: &Window, times: &[i64], tf: TimeFormat) -> String {
    match (
        times.get(w.start),
        w.end.checked_sub(1).and_then(|i| times.get(i)),
    ) {
        (Some(&a), Some(&b)) if w.end > w.start => format!(
            "{} to {} ({} bars)",
            tf.format(a),
            tf.format(b),
            w.end - w.start
        ),
        _ => "empty".into(),
    }
}

fn fraction_and_percent(x: f64) -> String {
    format!("{} ({}%)", float(x), round_sig(x * 100.0, 6))
}

fn fill_name(fill: Fill) -> &'static str {
    match fill {
        Fill::NextOpen => "next_open (at the next bar's open)",
        Fill::Close => "close (at the signal bar's close)",
    }
}

fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Long => "long",
        Direction::LongShort => "long_short",
    }
}

fn periods_per_year(study: &Study, p: f64) -> String {
    match study.config().annualization {
        Annualization::Auto => format!("{} (auto: measured from the bar times)", round_sig(p, 6)),
        Annualization::Periods(_) => format!("{} (set by backtest.annualization)", float(p)),
    }
}

fn lot_size(lot: f64) -> String {
    if lot == 0.0 {
        "0 (fractional units)".into()
    } else {
        float(lot)
    }
}

// ------------------------------------------------------------------- times

const DAY_MS: i64 = 86_400_000;

/// How bar times are written in tables: the date only when every bar of the
/// data is at midnight UTC, else date and time (UTC) on every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeFormat {
    Date,
    DateTime,
}

impl TimeFormat {
    fn of(times: &[i64]) -> TimeFormat {
        if times.iter().all(|t| t.rem_euclid(DAY_MS) == 0) {
            TimeFormat::Date
        } else {
            TimeFormat::DateTime
        }
    }

    fn format(self, ms: i64) -> String {
        match self {
            TimeFormat::Date => date_utc(ms),
            TimeFormat::DateTime => format!("{} {}", date_utc(ms), clock_utc(ms, true)),
        }
    }
}

/// `YYYY-MM-DD` of the UTC day holding `ms`.
fn date_utc(ms: i64) -> String {
    format::time(ms - ms.rem_euclid(DAY_MS))
}

/// `HH:MM:SS` (or `HH:MM`) of `ms` in UTC.
fn clock_utc(ms: i64, seconds: bool) -> String {
    let s = ms.rem_euclid(DAY_MS) / 1000;
    let (h, m) = (s / 3600, s / 60 % 60);
    if seconds {
        format!("{h:02}:{m:02}:{:02}", s % 60)
    } else {
        format!("{h:02}:{m:02}")
    }
}

/// Tick labels of a bar-index axis: dates over long spans (or daily data),
/// `MM-DD HH:MM` over short intraday ones.
struct TimeAxis<'a> {
    times: &'a [i64],
    clock: bool,
}

impl<'a> TimeAxis<'a> {
    fn new(times: &'a [i64]) -> TimeAxis<'a> {
        let span = times.last().copied().unwrap_or(0) - times.first().copied().unwrap_or(0);
        let clock = TimeFormat::of(times) == TimeFormat::DateTime && span < 30 * DAY_MS;
        TimeAxis { times, clock }
    }

    fn label(&self, x: f64) -> String {
        let Some(last) = self.times.len().checked_sub(1) else {
            return String::new();
        };
        let ms = self.times[(x.round().max(0.0) as usize).min(last)];
        if self.clock {
            let date = date_utc(ms);
            format!(
                "{} {}",
                date.get(5..).unwrap_or(&date),
                clock_utc(ms, false)
            )
        } else {
            date_utc(ms)
        }
    }
}

// ------------------------------------------------------------------ labels

/// `x` with `digits` significant digits (never rounding away integer
/// digits: 125 stays "125"), trailing zeros dropped.
fn round_sig(x: f64, digits: i32) -> String {
    if !x.is_finite() {
        return float(x);
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, 17) as usize;
    trim_zeros(&format!("{x:.decimals$}"))
}

/// "1.2500" → "1.25", "2.000" → "2", "-0.00" → "0".
fn trim_zeros(s: &str) -> String {
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Labels of sorted distinct `values`: the fewest significant digits
/// (`min_digits` at least) that still tell every value from its neighbours.
fn short_labels(values: &[f64], min_digits: i32) -> Vec<String> {
    for digits in min_digits..=17 {
        let labels: Vec<String> = values.iter().map(|&v| round_sig(v, digits)).collect();
        if labels.windows(2).all(|w| w[0] != w[1]) {
            return labels;
        }
    }
    values.iter().map(|&v| float(v)).collect()
}

/// A tick label on a continuous axis `span` wide: the decimals its ticks
/// (at most ten, at steps of 1, 2 or 5 × 10^k) need, and no more.
fn axis_label(v: f64, span: f64) -> String {
    let step = span.abs() / 10.0;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        6
    };
    trim_zeros(&format!("{v:.decimals$}"))
}

/// The label of a tick at whole number `v`, or "" between whole numbers.
fn integer_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// The label of a tick on cell centre `v` (cells centred on 0, 1, ...).
fn cell_label(labels: &[String], v: f64) -> String {
    if v < -0.5 || (v - v.round()).abs() > 1e-9 {
        return String::new();
    }
    labels.get(v.round() as usize).cloned().unwrap_or_default()
}

// ------------------------------------------------------------------ equity

type Chart = std::result::Result<String, Box<dyn std::error::Error>>;
type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

const EQUITY_COLOR: RGBColor = RGBColor(31, 90, 200);
const HOLD_COLOR: RGBColor = RGBColor(140, 140, 140);
const LONG_COLOR: RGBColor = RGBColor(0, 150, 60);
const SHORT_COLOR: RGBColor = RGBColor(200, 40, 40);
const EXIT_COLOR: RGBColor = RGBColor(50, 50, 50);
const SCORE_SHADE: RGBColor = RGBColor(200, 225, 255);
const HOLDOUT_SHADE: RGBColor = RGBColor(255, 200, 150);
/// Width of the plots beside the legend column of the equity chart.
const PLOT_WIDTH: u32 = 790;
/// Tick labels and axis names of every chart.
const LABEL_FONT: (&str, u32) = ("sans-serif", 16);
/// More trades than this and the equity curve gets no trade markers.
const MAX_MARKED_TRADES: usize = 500;

/// The best candidate's backtest on each instrument, in order.
fn best_backtests(study: &Study, best: &Best) -> Result<Vec<Backtest>> {
    let params: Vec<f64> = study
        .param_names()
        .iter()
        .map(|n| best.params.get(*n).copied().unwrap_or(f64::NAN))
        .collect();
    strategy::check_params(study.strategy(), &params)?;
    Ok(study.with_evaluators([params.as_slice()], |evals| {
        evals.iter().map(|eval| eval.backtest(&params)).collect()
    }))
}

fn push_equity(html: &mut String, instrument: &Instrument, bt: &Backtest) -> Result<()> {
    html.push_str("<h2>Equity and drawdown of the best candidate</h2>\n");
    html.push_str(&equity_svg(instrument, bt).map_err(chart_error)?);
    if bt.trades.len() > MAX_MARKED_TRADES {
        let _ = writeln!(
            html,
            "<p>{} trades: too many to mark on the curve.</p>",
            bt.trades.len()
        );
    }
    Ok(())
}

/// Equity of putting all of `cash` in at the first close and holding.
fn buy_and_hold(close: &[f64], cash: f64) -> Vec<f64> {
    let first = close.first().copied().unwrap_or(f64::NAN);
    close.iter().map(|&c| cash * c / first).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    LongEntry,
    ShortEntry,
    Exit,
}

impl Marker {
    const ALL: [Marker; 3] = [Marker::LongEntry, Marker::ShortEntry, Marker::Exit];

    fn color(self) -> RGBColor {
        match self {
            Marker::LongEntry => LONG_COLOR,
            Marker::ShortEntry => SHORT_COLOR,
            Marker::Exit => EXIT_COLOR,
        }
    }

    /// A triangle around (0, 0) in pixels: up for a long entry, else down.
    fn shape(self) -> Vec<(i32, i32)> {
        match self {
            Marker::LongEntry => vec![(0, -5), (5, 4), (-5, 4)],
            _ => vec![(0, 5), (5, -4), (-5, -4)],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Marker::LongEntry => "long entry",
            Marker::ShortEntry => "short entry",
            Marker::Exit => "exit",
        }
    }
}

/// (bar, marker) of every entry and every exit of `trades`.
fn trade_markers(trades: &[Trade]) -> Vec<(usize, Marker)> {
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

enum Swatch {
    Line(RGBColor),
    Band(RGBColor),
    Marker(Marker),
}

/// Shaded windows: the score and holdout windows (the full one is not shaded).
fn shaded_windows(instrument: &Instrument) -> Vec<(Window, RGBColor)> {
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

fn equity_legend(instrument: &Instrument, markers: &[(usize, Marker)]) -> Vec<(Swatch, String)> {
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

fn equity_svg(instrument: &Instrument, bt: &Backtest) -> Chart {
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
fn padded_range<'a>(series: impl IntoIterator<Item = &'a [f64]>) -> (f64, f64) {
    let (lo, hi) = series
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-6).max(1e-9);
    (lo - pad, hi + pad)
}

fn draw_equity(
    area: &Area,
    instrument: &Instrument,
    equity: &[f64],
    hold: &[f64],
    markers: &[(usize, Marker)],
    axis: &TimeAxis,
) -> Drawn {
    let n = equity.len();
    let (lo, hi) = padded_range([equity, hold]);
    let mut chart = ChartBuilder::on(area)
        .caption("Equity", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..n as f64, lo..hi)?;
    chart
        .configure_mesh()
        .label_style(LABEL_FONT)
        .axis_desc_style(LABEL_FONT)
        .x_label_formatter(&|x| axis.label(*x))
        .y_label_formatter(&|y| axis_label(*y, hi - lo))
        .x_labels(8)
        .draw()?;
    for (w, color) in shaded_windows(instrument) {
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
    chart.draw_series(LineSeries::new(finite(hold), HOLD_COLOR.stroke_width(1)))?;
    chart.draw_series(LineSeries::new(
        finite(equity),
        EQUITY_COLOR.stroke_width(2),
    ))?;
    chart.draw_series(
        markers
            .iter()
            .filter(|&&(bar, _)| bar < n)
            .map(|&(bar, kind)| {
                EmptyElement::at((bar as f64, equity[bar]))
                    + Polygon::new(kind.shape(), kind.color().filled())
            }),
    )?;
    Ok(())
}

fn draw_drawdown(area: &Area, equity: &[f64], axis: &TimeAxis) -> Drawn {
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
fn draw_legend(area: &Area, items: &[(Swatch, String)]) -> Drawn {
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

// ------------------------------------------------------------------ trades

/// One row of the trade list: a trade (by index) or the count left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TradeRow {
    Trade(usize),
    Omitted(usize),
}

const TRADES_SHOWN: usize = 20;

/// Rows of the trade list: the first and the last `TRADES_SHOWN` trades, all
/// when there are no more than twice that.
fn trade_rows(n: usize) -> Vec<TradeRow> {
    if n <= 2 * TRADES_SHOWN {
        return (0..n).map(TradeRow::Trade).collect();
    }
    (0..TRADES_SHOWN)
        .map(TradeRow::Trade)
        .chain(std::iter::once(TradeRow::Omitted(n - 2 * TRADES_SHOWN)))
        .chain((n - TRADES_SHOWN..n).map(TradeRow::Trade))
        .collect()
}

fn push_trades(html: &mut String, trades: &[Trade], times: &[i64]) {
    let open = trades.iter().filter(|t| !t.is_closed()).count();
    let _ = writeln!(
        html,
        "<h2>Trades of the best candidate</h2>\n<p>{} trades ({} closed, {} open) over all {} bars, the holdout included; times in UTC. An open trade is marked at the last close, without exit costs.</p>",
        trades.len(),
        trades.len() - open,
        open,
        times.len()
    );
    if !trades.is_empty() {
        html.push_str(&trade_table(trades, times));
    }
}

fn trade_table(trades: &[Trade], times: &[i64]) -> String {
    let tf = TimeFormat::of(times);
    let decimals = price_decimals(trades);
    let mut html = String::from(
        "<table class=\"trades\"><tr><th>#</th><th>side</th><th>status</th><th>entry time</th><th>entry price</th><th>exit time</th><th>exit price</th><th>return</th><th>pnl</th></tr>\n",
    );
    let time = |bar: usize| times.get(bar).map_or("-".into(), |&t| tf.format(t));
    for row in trade_rows(trades.len()) {
        let i = match row {
            TradeRow::Omitted(k) => {
                let _ = writeln!(
                    html,
                    "<tr class=\"gap\"><td colspan=\"9\">… {k} more trades …</td></tr>"
                );
                continue;
            }
            TradeRow::Trade(i) => i,
        };
        let t = &trades[i];
        let _ = writeln!(
            html,
            "<tr class=\"trade\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.*}</td><td>{}</td><td>{:.*}</td><td>{:+.2}%</td><td>{:.2}</td></tr>",
            i + 1,
            t.side.as_str(),
            if t.is_closed() { "closed" } else { "open" },
            time(t.entry_bar),
            decimals,
            t.entry_price,
            t.exit_bar.map_or("-".into(), time),
            decimals,
            t.exit_price,
            t.ret * 100.0,
            t.pnl,
        );
    }
    html.push_str("</table>\n");
    html
}

/// Decimals that give the largest price about six significant digits.
fn price_decimals(trades: &[Trade]) -> usize {
    let max = trades
        .iter()
        .flat_map(|t| [t.entry_price, t.exit_price])
        .filter(|p| p.is_finite())
        .fold(0.0f64, |m, p| m.max(p.abs()));
    if max == 0.0 {
        return 2;
    }
    (5.0 - max.log10().floor()).clamp(0.0, 8.0) as usize
}

// ----------------------------------------------------------------- heatmap

fn push_heatmap(html: &mut String, dir: &Path, axes: &HeatmapAxes) -> Result<()> {
    // Heatmap over two parameters, from the first (widest) sweep.
    let first_sweep = dir.join("iter-001").join("sweep.csv");
    if !first_sweep.exists() {
        return Ok(());
    }
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
    Ok(())
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

/// The heatmap's cells: the best finite score at each (x value, y value).
struct Heat {
    xs: Vec<f64>,
    ys: Vec<f64>,
    cells: BTreeMap<(usize, usize), f64>,
    lo: f64,
    hi: f64,
}

impl Heat {
    fn new(rows: &[SweepRow], xi: usize, yi: usize) -> Heat {
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
    fn color(&self, v: f64) -> HSLColor {
        let t = if self.hi > self.lo {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            0.5
        };
        HSLColor(0.66 * (1.0 - t), 0.8, 0.5)
    }
}

const HEAT_SIZE: (u32, u32) = (780, 560);
const HEAT_MAP_WIDTH: u32 = 660;
const HEAT_MARGIN: u32 = 10;
const HEAT_X_LABELS: u32 = 48;

fn heatmap_svg(names: &[String], rows: &[SweepRow], xi: usize, yi: usize) -> Chart {
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

fn draw_heat_cells(area: &Area, heat: &Heat, x_name: &str, y_name: &str) -> Drawn {
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
fn draw_colour_bar(area: &Area, heat: &Heat) -> Drawn {
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

// ------------------------------------------------------------------- ranks

fn push_ranks(html: &mut String, dir: &Path, state: &RunState) -> Result<()> {
    // Screen rank vs verified rank, last verified iteration.
    let Some(last) = state
        .iterations
        .iter()
        .rev()
        .find(|i| i.stage == Stage::Done)
    else {
        return Ok(());
    };
    let iter_dir = dir.join(format!("iter-{:03}", last.iteration));
    // On the CPU scoring the score window, the screen score is the verified
    // score bit for bit: the chart would be a diagonal that says nothing.
    let meta: Option<crate::sweep::SweepMeta> =
        files::read_json(&files::meta_path(&iter_dir.join("sweep.csv"))).ok();
    if meta.is_some_and(|m| m.backend == "cpu" && m.screen_window == "score") {
        html.push_str("<h2>Screen rank vs verified rank</h2>\n<p>The CPU screen scores the score window with the exact engine, so screen and verified ranks agree exactly; the chart appears when they can differ (the GPU backend, or <code>screen_window = \"full\"</code>).</p>\n");
        return Ok(());
    }
    let pairs = verified_ranks(&iter_dir.join("verified.csv"))?;
    let _ = write!(
        html,
        "<h2>Screen rank vs verified rank (iteration {})</h2>\n<p>Spearman {}.</p>\n",
        last.iteration,
        last.verify
            .as_ref()
            .and_then(|v| v.spearman)
            .map_or("NaN".into(), |s| format!("{s:.3}"))
    );
    html.push_str(&xy_scatter(&pairs, "screen rank", "verified rank").map_err(chart_error)?);
    Ok(())
}

fn verified_ranks(path: &Path) -> Result<Vec<(f64, f64)>> {
    let cols = files::read_columns(path, &["screen_rank", "rank"])?;
    Ok(cols[0]
        .iter()
        .copied()
        .zip(cols[1].iter().copied())
        .collect())
}

/// The range of `v`, padded by 5 % on each side.
pub(super) fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let pad = ((hi - lo) * 0.05).max(1e-9);
    (lo - pad, hi + pad)
}

/// A scatter of finite (x, y) points with a zero line on each axis.
pub(super) fn xy_scatter(points: &[(f64, f64)], x_name: &str, y_name: &str) -> Chart {
    let (x0, x1) = bounds(points.iter().map(|p| p.0));
    let (y0, y1) = bounds(points.iter().map(|p| p.1));
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

// ----------------------------------------------------------------- history

fn push_history(html: &mut String, state: &RunState) -> Result<()> {
    html.push_str("<h2>Iterations</h2>\n<table><tr><th>iteration</th><th>grid</th><th>screened</th><th>sweep s</th><th>verified</th><th>verify s</th><th>best</th><th>screen rank of best</th><th>Spearman</th></tr>\n");
    let mut history = Vec::new();
    for it in &state.iterations {
        let grid: Vec<String> = it
            .grid
            .iter()
            .map(|a| format!("{}[{}]", a.name, a.values.len()))
            .collect();
        let score = it.best().and_then(|b| b.score);
        let (sweep, verify) = (it.sweep.as_ref(), it.verify.as_ref());
        if let Some(s) = score {
            history.push((it.iteration, s));
        }
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            it.iteration,
            esc(&grid.join(" × ")),
            sweep.map_or("-".into(), |s| s.combinations_evaluated.to_string()),
            sweep.map_or("-".into(), |s| format!("{:.2}", s.sweep_s)),
            verify.map_or("-".into(), |v| v.candidates_verified.to_string()),
            verify.map_or("-".into(), |v| format!("{:.2}", v.verify_s)),
            score.map_or("-".into(), |s| format!("{s:.6}")),
            it.best().map_or("-".into(), |b| b.screen_rank.to_string()),
            verify
                .and_then(|v| v.spearman)
                .map_or("-".into(), |s| format!("{s:.3}")),
        );
    }
    html.push_str("</table>\n");
    if history.len() > 1 {
        html.push_str(&history_svg(&history).map_err(chart_error)?);
    }
    Ok(())
}

fn history_svg(history: &[(u32, f64)]) -> Chart {
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

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_MS: i64 = 3_600_000;
    /// 2020-01-01 00:00:00 UTC.
    const T0: i64 = 1_577_836_800_000;

    fn trade(side: Side, entry_bar: usize, exit_bar: Option<usize>) -> Trade {
        Trade {
            side,
            entry_bar,
            entry_price: 100.0,
            exit_bar,
            exit_price: 110.0,
            units: 1.0,
            fees: 0.0,
            pnl: 10.0,
            ret: 0.1,
        }
    }

    /// The text of every `<td>` of the rows of class `class`.
    fn cells<'a>(html: &'a str, class: &str) -> Vec<Vec<&'a str>> {
        html.split(&format!("<tr class=\"{class}\">"))
            .skip(1)
            .map(|row| {
                let row = row.split("</tr>").next().unwrap();
                row.split("<td>")
                    .skip(1)
                    .map(|c| c.split("</td>").next().unwrap())
                    .collect()
            })
            .collect()
    }

    /// (text-anchor, text) of every `<text>` element of an SVG.
    fn svg_texts(svg: &str) -> Vec<(String, String)> {
        svg.split("<text ")
            .skip(1)
            .map(|t| {
                let anchor = t
                    .split("text-anchor=\"")
                    .nth(1)
                    .and_then(|a| a.split('"').next())
                    .unwrap_or("start");
                let body = t.split('>').nth(1).unwrap().split('<').next().unwrap();
                (anchor.to_string(), body.trim().to_string())
            })
            .collect()
    }

    #[test]
    fn buy_and_hold_follows_the_close_from_the_initial_cash() {
        let hold = buy_and_hold(&[10.0, 12.0, 9.0, 15.0], 1000.0);
        assert_eq!(hold, vec![1000.0, 1200.0, 900.0, 1500.0]);
    }

    #[test]
    fn markers_mark_entries_by_side_and_every_exit() {
        let trades = [
            trade(Side::Long, 3, Some(7)),
            trade(Side::Short, 9, Some(12)),
            trade(Side::Long, 15, None),
        ];
        assert_eq!(
            trade_markers(&trades),
            vec![
                (3, Marker::LongEntry),
                (7, Marker::Exit),
                (9, Marker::ShortEntry),
                (12, Marker::Exit),
                (15, Marker::LongEntry),
            ]
        );
    }

    #[test]
    fn trade_rows_show_all_up_to_forty_then_first_and_last_twenty() {
        assert_eq!(
            trade_rows(40),
            (0..40).map(TradeRow::Trade).collect::<Vec<_>>()
        );
        let rows = trade_rows(50);
        assert_eq!(rows.len(), 41);
        assert_eq!(rows[..20], (0..20).map(TradeRow::Trade).collect::<Vec<_>>());
        assert_eq!(rows[20], TradeRow::Omitted(10));
        assert_eq!(
            rows[21..],
            (30..50).map(TradeRow::Trade).collect::<Vec<_>>()
        );
        assert_eq!(trade_rows(41)[20], TradeRow::Omitted(1));
    }

    #[test]
    fn trade_table_of_fifty_trades_lists_forty_and_counts_the_rest() {
        let times: Vec<i64> = (0..200).map(|i| T0 + i * 24 * HOUR_MS).collect();
        let mut trades: Vec<Trade> = (0..50)
            .map(|i| trade(Side::Long, 3 * i, Some(3 * i + 2)))
            .collect();
        trades[49] = trade(Side::Short, 180, None);
        let html = trade_table(&trades, &times);
        let rows = cells(&html, "trade");
        assert_eq!(rows.len(), 40);
        assert_eq!(html.matches("more trades").count(), 1);
        assert!(html.contains("… 10 more trades …"), "{html}");
        let numbers: Vec<&str> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(numbers[19..21], ["20", "31"]);
        assert_eq!(numbers[39], "50");
        let last = &rows[39];
        assert_eq!((last[1], last[2], last[5]), ("short", "open", "-"));
        assert_eq!(rows[0][3], "2020-01-01");
        assert_eq!(rows[0][7], "+10.00%");
    }

    /// The entry and exit time cells of every trade row.
    fn time_cells(html: &str) -> Vec<String> {
        cells(html, "trade")
            .iter()
            .flat_map(|r| [r[3].to_string(), r[5].to_string()])
            .filter(|c| c != "-")
            .collect()
    }

    #[test]
    fn trade_times_use_one_format_per_table() {
        let trades = [trade(Side::Long, 0, Some(1)), trade(Side::Long, 2, Some(3))];
        let daily: Vec<i64> = (0..4).map(|i| T0 + i * 24 * HOUR_MS).collect();
        let cells = time_cells(&trade_table(&trades, &daily));
        assert_eq!(
            cells,
            ["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"]
        );

        // One bar off midnight: every row gets the time, midnight ones too.
        let mut mixed = daily.clone();
        mixed[3] += 13 * HOUR_MS + 5 * 60_000 + 7_000;
        let cells = time_cells(&trade_table(&trades, &mixed));
        assert_eq!(
            cells,
            [
                "2020-01-01 00:00:00",
                "2020-01-02 00:00:00",
                "2020-01-03 00:00:00",
                "2020-01-04 13:05:07"
            ]
        );
    }

    #[test]
    fn time_axis_shows_hours_only_over_short_intraday_spans() {
        let hourly: Vec<i64> = (0..100).map(|i| T0 + i * HOUR_MS).collect();
        let axis = TimeAxis::new(&hourly);
        assert_eq!(axis.label(27.0), "01-02 03:00");
        assert_eq!(axis.label(1e9), "01-05 03:00", "clamped to the last bar");
        let long: Vec<i64> = (0..3000).map(|i| T0 + i * HOUR_MS).collect();
        assert_eq!(TimeAxis::new(&long).label(27.0), "2020-01-02");
        let daily: Vec<i64> = (0..10).map(|i| T0 + i * 24 * HOUR_MS).collect();
        assert_eq!(TimeAxis::new(&daily).label(1.0), "2020-01-02");
    }

    #[test]
    fn round_sig_keeps_few_digits_but_every_integer_digit() {
        assert_eq!(round_sig(0.21271636432853983, 2), "0.21");
        assert_eq!(round_sig(1.04097438464625, 3), "1.04");
        assert_eq!(round_sig(125.0, 2), "125");
        assert_eq!(round_sig(0.5, 2), "0.5");
        assert_eq!(round_sig(-0.000123456, 2), "-0.00012");
        assert_eq!(round_sig(0.0, 2), "0");
        assert_eq!(round_sig(f64::NAN, 2), "NaN");
    }

    #[test]
    fn short_labels_add_digits_until_neighbours_differ() {
        assert_eq!(
            short_labels(&[0.21271636432853983, 0.5], 2),
            ["0.21", "0.5"]
        );
        assert_eq!(
            short_labels(&[0.2127, 0.2131, 0.3], 2),
            ["0.2127", "0.2131", "0.3"]
        );
        assert_eq!(short_labels(&[20.0, 40.0, 125.0], 2), ["20", "40", "125"]);
        let fine: Vec<f64> = (0..50).map(|i| 1.0 + i as f64 * 0.001).collect();
        let labels = short_labels(&fine, 2);
        assert!(labels.windows(2).all(|w| w[0] != w[1]), "{labels:?}");
        assert!(labels.iter().all(|l| l.len() <= 5), "{labels:?}");
    }

    #[test]
    fn axis_labels_have_the_decimals_of_their_step() {
        assert_eq!(axis_label(1.0409752, 0.02), "1.041");
        assert_eq!(axis_label(50000.0, 60000.0), "50000");
        assert_eq!(axis_label(0.30000000000000004, 1.0), "0.3");
        assert_eq!(axis_label(-0.0, 1.0), "0");
        assert_eq!(integer_label(2.0), "2");
        assert_eq!(integer_label(1.5), "");
    }

    #[test]
    fn iteration_chart_ticks_are_whole_iterations_and_y_labels_are_short() {
        for history in [
            vec![(1, 1.04097438464625), (2, 1.02), (3, 1.0409)],
            vec![(1, 1.04097438464625), (2, 1.04097438464625)],
            (1..=7).map(|i| (i, 0.1 * i as f64)).collect(),
        ] {
            let svg = history_svg(&history).unwrap();
            let texts = svg_texts(&svg);
            let x: Vec<&str> = texts
                .iter()
                .filter(|(a, t)| a == "middle" && t.parse::<f64>().is_ok())
                .map(|(_, t)| t.as_str())
                .collect();
            let want: Vec<String> = history.iter().map(|h| h.0.to_string()).collect();
            assert_eq!(x, want, "x tick labels of {history:?}");
            let y: Vec<&str> = texts
                .iter()
                .filter(|(a, _)| a == "end")
                .map(|(_, t)| t.as_str())
                .collect();
            assert!(y.len() >= 3, "{texts:?}");
            assert!(y.iter().all(|t| t.len() <= 6), "y labels {y:?}");
        }
    }

    #[test]
    fn heatmap_labels_are_rounded_on_cell_centres_with_a_colour_bar() {
        let xs = [0.21271636432853983, 0.4, 0.6];
        let rows: Vec<SweepRow> = xs
            .iter()
            .flat_map(|&x| {
                [10.0, 20.0].map(|y| SweepRow {
                    grid_index: 0,
                    params: vec![x, y],
                    score: x * y,
                    trades: 10,
                })
            })
            .collect();
        let names = vec!["entry".to_string(), "len".to_string()];
        let html = heatmap_svg(&names, &rows, 0, 1).unwrap();
        let svg = html.split("</svg>").next().unwrap();
        let texts: Vec<String> = svg_texts(svg).into_iter().map(|t| t.1).collect();
        for want in ["0.21", "0.4", "0.6", "10", "20", "min 2.13", "max 12"] {
            assert!(texts.iter().any(|t| t == want), "{want} in {texts:?}");
        }
        assert!(!svg.contains("0.2127"), "no long labels");
        assert_eq!(cell_label(&["a".into(), "b".into()], 1.0), "b");
        assert_eq!(cell_label(&["a".into(), "b".into()], 0.5), "");
    }
}
