//! The HTML of a run's page, from a [`RunReport`]: the head, the tables,
//! and where each chart goes. Nothing here reads files or runs the engine.

use std::fmt::Write as _;

use indexmap::IndexMap;
use sieve_core::config::Annualization;
use sieve_core::engine::{Backtest, Fill, Trade};
use sieve_core::format::float;
use sieve_core::market::Instrument;
use sieve_core::metrics::Window;
use sieve_core::strategy::Direction;
use sieve_core::Result;

use super::charts::chart_error;
use super::charts::equity::equity_svg;
use super::charts::heatmap::heatmap_svg;
use super::charts::history::history_svg;
use super::charts::scatter::xy_scatter;
use super::charts::MAX_MARKED_TRADES;
use super::html::{esc, push_document_start};
use super::labels::TimeFormat;
use super::{Heatmap, Ranks, RunReport};
use crate::best::{Best, WindowResult};
use crate::rundir::RunState;
use crate::text::{human, round_sig};
use crate::Study;

/// The whole page of a run.
pub(crate) fn run_page(report: &RunReport<'_>) -> Result<String> {
    let RunReport {
        study,
        state,
        best,
        backtests,
        ..
    } = report;
    let mut html = String::new();
    push_head(&mut html, state, best);
    for w in crate::study::study_warnings(study) {
        let _ = writeln!(html, "<p class=\"warn\">Warning: {}.</p>", esc(&w));
    }
    super::robust::push_robustness(&mut html, best, &report.score_vs_holdout)?;
    push_best(&mut html, best);
    push_selection(&mut html, best);
    if study.market().is_several() {
        let how = best.aggregate.as_deref().unwrap_or("mean");
        let _ = writeln!(
            html,
            "<p>Over {} instruments: each window's objective is the {how} of theirs; the other metrics are their means (trades summed). Each instrument follows.</p>",
            study.market().instruments.len()
        );
    }
    push_metrics(&mut html, "Metrics", &best.windows);
    if study.market().is_several() {
        push_instrument_objectives(&mut html, study, best);
    }
    push_settings(&mut html, study);
    for (instrument, bt) in study.market().instruments.iter().zip(backtests) {
        if let Some(windows) = best.instruments.get(&instrument.name) {
            let _ = writeln!(html, "<h2>Instrument {}</h2>", esc(&instrument.name));
            push_metrics(&mut html, "Metrics", windows);
        }
        push_equity(&mut html, instrument, bt)?;
        if let Some(book) = &study.market().portfolio {
            push_portfolio(&mut html, book, bt, &best.param_values());
        }
        push_trades(&mut html, bt, &instrument.bars.time, names_of(study));
    }
    if let Some(heatmap) = &report.heatmap {
        push_heatmap(&mut html, heatmap)?;
    }
    push_ranks(&mut html, &report.ranks)?;
    push_history(&mut html, state, matches!(report.ranks, Ranks::Exact))?;
    html.push_str("<p class=\"foot\">Written by sieve ");
    html.push_str(env!("CARGO_PKG_VERSION"));
    html.push_str(
        ". Every number here comes from the files beside this report.</p>\n</body></html>\n",
    );
    Ok(html)
}

pub(crate) fn push_head(html: &mut String, state: &RunState, best: &Best) {
    let title = format!("sieve report: {} on {}", state.strategy, state.data);
    push_document_start(html, &title);
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
    if let Some(search) = &best.search {
        let _ = writeln!(
            html,
            "<p>Search <b>{}</b> (seed {}): {} of the grid's {} combinations screened ({:.3} %).{}</p>",
            esc(&search.method),
            search.seed,
            search.evaluated,
            search.grid_size,
            100.0 * search.evaluated as f64 / search.grid_size.max(1) as f64,
            // Its later generations bunch near the best: V is the first's.
            match search.method.as_str() {
                "evolve" => " The Deflated Sharpe counts every combination screened; the variance of their Sharpes comes from the first generation, a uniform sample of the grid.",
                _ => "",
            }
        );
    }
}

pub(crate) fn push_best(html: &mut String, best: &Best) {
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

/// Under `robust.select = "plateau"`: the chosen candidate beside the
/// argmax one, and the objective along each parameter through the chosen.
pub(crate) fn push_selection(html: &mut String, best: &Best) {
    let Some(s) = &best.selection else { return };
    let _ = writeln!(
        html,
        "<h2>Choice: {} vs argmax</h2>\n<p>The best is the candidate whose neighbourhood (it and its axis neighbours, each backtested exactly) does best, not the highest objective alone.</p>\n<table><tr><th></th><th>chosen</th><th>argmax</th></tr>",
        esc(&s.rule)
    );
    for (name, v) in &s.chosen.params {
        let other = s.argmax.params.get(name).copied().unwrap_or(f64::NAN);
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            esc(&float(*v)),
            esc(&float(other))
        );
    }
    let num =
        |v: Option<&crate::files::Num>| v.map_or("-".to_string(), |v| crate::text::human(v.0));
    let rows = [
        (
            "objective (score window)",
            num(Some(&s.chosen.objective)),
            num(Some(&s.argmax.objective)),
        ),
        (
            "neighbourhood",
            num(Some(&s.chosen.neighbourhood)),
            num(Some(&s.argmax.neighbourhood)),
        ),
        (
            "neighbours",
            s.chosen.neighbours.to_string(),
            s.argmax.neighbours.to_string(),
        ),
        (
            "holdout objective",
            num(s.chosen.holdout.as_ref()),
            num(s.argmax.holdout.as_ref()),
        ),
    ];
    for (what, a, b) in rows {
        let _ = writeln!(
            html,
            "<tr><td>{what}</td><td>{}</td><td>{}</td></tr>",
            esc(&a),
            esc(&b)
        );
    }
    html.push_str("</table>\n");
    for slice in &s.surface {
        let at = s
            .chosen
            .params
            .get(&slice.param)
            .copied()
            .unwrap_or(f64::NAN);
        let _ = write!(
            html,
            "<p>Objective along {} (the others at the chosen values; the chosen in bold):</p>\n<table><tr><th>{}</th>",
            esc(&slice.param),
            esc(&slice.param)
        );
        let bold = |v: f64, text: String| match v.to_bits() == at.to_bits() {
            true => format!("<b>{text}</b>"),
            false => text,
        };
        for v in &slice.values {
            let _ = write!(html, "<td>{}</td>", bold(*v, esc(&float(*v))));
        }
        html.push_str("</tr><tr><th>objective</th>");
        for (v, o) in slice.values.iter().zip(&slice.objectives) {
            let _ = write!(html, "<td>{}</td>", bold(*v, esc(&crate::text::human(o.0))));
        }
        html.push_str("</tr></table>\n");
    }
}

pub(crate) fn push_metrics(
    html: &mut String,
    title: &str,
    windows: &IndexMap<String, WindowResult>,
) {
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
                v if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
                v if v.is_finite() && v.abs() < 1e6 => format!("{v:.6}"),
                // NaN, ±inf, and huge values short.
                v => human(v),
            };
            let _ = write!(html, "<td>{cell}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
}

// ---------------------------------------------------------------- settings

/// Each instrument's objective in the score and holdout windows, its
/// score window's bars and trades: what the aggregate hides; and a mean
/// dominated by one short series, flagged.
fn push_instrument_objectives(html: &mut String, study: &Study, best: &Best) {
    let lines = crate::best::instrument_lines(study, best);
    let objective = esc(&best.objective);
    let _ = writeln!(
        html,
        "<h2>Objective per instrument</h2>\n<table><tr><th>instrument</th><th>score {objective}</th><th>holdout {objective}</th><th>score bars</th><th>score trades</th></tr>"
    );
    for l in &lines {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&l.name),
            human(l.score),
            l.holdout.map_or("-".into(), human),
            l.score_bars,
            human(l.trades)
        );
    }
    html.push_str("</table>\n");
    if let Some(flag) = crate::best::dominated_mean(study, &lines) {
        let _ = writeln!(html, "<p class=\"warn\">Warning: {}.</p>", esc(&flag));
    }
}

pub(crate) fn push_settings(html: &mut String, study: &Study) {
    html.push_str("<h2>Run settings</h2>\n<table><tr><th>setting</th><th>value</th></tr>\n");
    for (name, value) in run_settings(study) {
        let _ = writeln!(html, "<tr><td>{name}</td><td>{}</td></tr>", esc(&value));
    }
    html.push_str("</table>\n");
}

/// What the numbers of this report depend on, as (name, value) rows; with
/// several instruments, each one's span, windows and periods per year.
pub(crate) fn run_settings(study: &Study) -> Vec<(String, String)> {
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
pub(crate) fn window_span(w: &Window, times: &[i64], tf: TimeFormat) -> String {
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

pub(crate) fn fraction_and_percent(x: f64) -> String {
    format!("{} ({}%)", float(x), round_sig(x * 100.0, 6))
}

pub(crate) fn fill_name(fill: Fill) -> &'static str {
    match fill {
        Fill::NextOpen => "next_open (at the next bar's open)",
        Fill::Close => "close (at the signal bar's close)",
    }
}

pub(crate) fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Long => "long",
        Direction::LongShort => "long_short",
    }
}

pub(crate) fn periods_per_year(study: &Study, p: f64) -> String {
    match study.config().scoring.annualization {
        Annualization::Auto => format!("{} (auto: measured from the bar times)", round_sig(p, 6)),
        Annualization::Periods(_) => format!("{} (set by backtest.annualization)", float(p)),
    }
}

pub(crate) fn lot_size(lot: f64) -> String {
    if lot == 0.0 {
        "0 (fractional units)".into()
    } else {
        float(lot)
    }
}

pub(crate) fn push_equity(html: &mut String, instrument: &Instrument, bt: &Backtest) -> Result<()> {
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

// ------------------------------------------------------------------ trades

/// One row of the trade list: a trade (by index) or the count left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TradeRow {
    Trade(usize),
    Omitted(usize),
}

pub(crate) const TRADES_SHOWN: usize = 20;

/// Rows of the trade list: the first and the last `TRADES_SHOWN` trades, all
/// when there are no more than twice that.
pub(crate) fn trade_rows(n: usize) -> Vec<TradeRow> {
    if n <= 2 * TRADES_SHOWN {
        return (0..n).map(TradeRow::Trade).collect();
    }
    (0..TRADES_SHOWN)
        .map(TradeRow::Trade)
        .chain(std::iter::once(TradeRow::Omitted(n - 2 * TRADES_SHOWN)))
        .chain((n - TRADES_SHOWN..n).map(TradeRow::Trade))
        .collect()
}

/// A portfolio's instruments' names (empty otherwise).
pub(crate) fn names_of(study: &Study) -> Vec<&str> {
    match &study.market().portfolio {
        Some(book) => book.members.iter().map(|m| m.name.as_str()).collect(),
        None => Vec::new(),
    }
}

/// A portfolio's instruments (trades, wins, profit, time held) and how many
/// positions were open, how much exposed.
pub(crate) fn push_portfolio(
    html: &mut String,
    book: &sieve_core::market::Book,
    bt: &Backtest,
    params: &[f64],
) {
    use crate::portfolio::{contributions, mean_max, occupancy};
    let o = occupancy(book, bt, params);
    let (positions, max_positions) = mean_max(o.positions.iter().map(|&p| f64::from(p)));
    let (exposure, max_exposure) = mean_max(o.exposure.iter().copied());
    let _ = writeln!(
        html,
        "<h2>Instruments of the portfolio</h2>\n<p>One account over {} instruments, every trade of the best candidate (the holdout included). Positions open: mean {}, at most {}; gross exposure (the positions' value over the portfolio's): mean {}, at most {}. Profit is after fees, open trades at the last close; together the portfolio's gain.</p>",
        book.members.len(),
        human(positions),
        human(max_positions),
        human(exposure),
        human(max_exposure),
    );
    match super::charts::occupancy::occupancy_svg(&book.schedule.time, &o.positions, &o.exposure) {
        Ok(svg) => html.push_str(&svg),
        Err(e) => {
            let _ = writeln!(
                html,
                "<p>The chart of positions: not drawn ({}).</p>",
                esc(&e.to_string())
            );
        }
    }
    html.push_str("<table><tr><th>instrument</th><th>trades</th><th>closed won</th><th>profit</th><th>fees</th><th>time held</th></tr>\n");
    for c in contributions(book, bt) {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}%</td></tr>",
            esc(&c.name),
            c.trades,
            c.wins,
            c.pnl,
            c.fees,
            100.0 * c.held
        );
    }
    html.push_str("</table>\n");
}

pub(crate) fn push_trades(html: &mut String, bt: &Backtest, times: &[i64], names: Vec<&str>) {
    let trades = &bt.trades;
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
        // A portfolio's trades with their instrument.
        let instrument = |i: usize| bt.instruments.get(i).and_then(|&k| names.get(k)).copied();
        html.push_str(&trade_table(trades, times, instrument));
    }
}

pub(crate) fn trade_table<'n>(
    trades: &[Trade],
    times: &[i64],
    instrument: impl Fn(usize) -> Option<&'n str>,
) -> String {
    let tf = TimeFormat::of(times);
    let decimals = price_decimals(trades);
    let named = instrument(0).is_some();
    let mut html = String::from("<table class=\"trades\"><tr><th>#</th>");
    if named {
        html.push_str("<th>instrument</th>");
    }
    html.push_str(
        "<th>side</th><th>status</th><th>entry time</th><th>entry price</th><th>exit time</th><th>exit price</th><th>exit reason</th><th>return</th><th>pnl</th></tr>\n",
    );
    let time = |bar: usize| times.get(bar).map_or("-".into(), |&t| tf.format(t));
    for row in trade_rows(trades.len()) {
        let i = match row {
            TradeRow::Omitted(k) => {
                let _ = writeln!(
                    html,
                    "<tr class=\"gap\"><td colspan=\"{}\">… {k} more trades …</td></tr>",
                    10 + usize::from(named)
                );
                continue;
            }
            TradeRow::Trade(i) => i,
        };
        let t = &trades[i];
        let name = match instrument(i) {
            Some(n) => format!("<td>{}</td>", esc(n)),
            None => String::new(),
        };
        let _ = writeln!(
            html,
            "<tr class=\"trade\"><td>{}</td>{name}<td>{}</td><td>{}</td><td>{}</td><td>{:.*}</td><td>{}</td><td>{:.*}</td><td>{}</td><td>{:+.2}%</td><td>{:.2}</td></tr>",
            i + 1,
            t.side.as_str(),
            if t.is_closed() { "closed" } else { "open" },
            time(t.entry_bar),
            decimals,
            t.entry_price,
            t.exit_bar.map_or("-".into(), time),
            decimals,
            t.exit_price,
            t.exit_reason.as_str(),
            t.ret * 100.0,
            t.pnl,
        );
    }
    html.push_str("</table>\n");
    html
}

/// Decimals that give the largest price about six significant digits.
pub(crate) fn price_decimals(trades: &[Trade]) -> usize {
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

pub(crate) fn push_heatmap(html: &mut String, heatmap: &Heatmap) -> Result<()> {
    let Heatmap { names, rows, x, y } = heatmap;
    let _ = write!(
        html,
        "<h2>Objective over {} × {}</h2>\n<p>Best screen score over the other parameters, among the {} kept by the first sweep.</p>\n",
        esc(&names[*x]),
        esc(&names[*y]),
        rows.len()
    );
    html.push_str(&heatmap_svg(names, rows, *x, *y).map_err(chart_error)?);
    Ok(())
}

// ------------------------------------------------------------------- ranks

pub(crate) fn push_ranks(html: &mut String, ranks: &Ranks) -> Result<()> {
    match ranks {
        Ranks::None => {}
        Ranks::Exact => html.push_str("<h2>Screen rank vs verified rank</h2>\n<p>The CPU screen scores the score window with the exact engine, so screen and verified ranks agree exactly; the chart appears when they can differ (the GPU backend, or <code>screen_window = \"full\"</code>).</p>\n"),
        Ranks::Pairs {
            iteration,
            spearman,
            pairs,
        } => {
            let _ = write!(
                html,
                "<h2>Screen rank vs verified rank (iteration {iteration})</h2>\n<p>Spearman {}.</p>\n",
                spearman.map_or("NaN".into(), |s| format!("{s:.3}"))
            );
            html.push_str(&xy_scatter(pairs, "screen rank", "verified rank").map_err(chart_error)?);
        }
    }
    Ok(())
}

// ----------------------------------------------------------------- history

/// The iterations table; `exact`: the screen is exact, so its Spearman
/// column (always 1) is left out.
pub(crate) fn push_history(html: &mut String, state: &RunState, exact: bool) -> Result<()> {
    html.push_str("<h2>Iterations</h2>\n<table><tr><th>iteration</th><th>grid</th><th>screened</th><th>sweep s</th><th>verified</th><th>verify s</th><th>best</th><th>screen rank of best</th>");
    html.push_str(if exact {
        "</tr>\n"
    } else {
        "<th>Spearman</th></tr>\n"
    });
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
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}</tr>",
            it.iteration,
            esc(&grid.join(" × ")),
            sweep.map_or("-".into(), |s| match s.series {
                None => s.combinations_evaluated.to_string(),
                Some(n) => format!("{} ({n} indicator series)", s.combinations_evaluated),
            }),
            sweep.map_or("-".into(), |s| match &s.placement {
                None => format!("{:.2}", s.sweep_s),
                // Sent to a cluster: the wall time, where, and how long
                // its shards queued and ran.
                Some(p) => format!(
                    "{:.2} ({} shards on {}{}; queued ≤ {:.1} s, ran ≤ {:.1} s)",
                    p.wall_s,
                    p.shards,
                    esc(&p.executor),
                    match p.submissions > p.shards {
                        true => format!(", {} resubmitted", p.submissions - p.shards),
                        false => String::new(),
                    },
                    p.longest_queue_s,
                    p.longest_run_s
                ),
            }),
            verify.map_or("-".into(), |v| v.candidates_verified.to_string()),
            verify.map_or("-".into(), |v| format!("{:.2}", v.verify_s)),
            score.map_or("-".into(), human),
            it.best().map_or("-".into(), |b| b.screen_rank.to_string()),
            match exact {
                true => String::new(),
                false => format!(
                    "<td>{}</td>",
                    verify
                        .and_then(|v| v.spearman)
                        .map_or("-".into(), |s| format!("{s:.3}"))
                ),
            },
        );
    }
    html.push_str("</table>\n");
    if history.len() > 1 {
        html.push_str(&history_svg(&history).map_err(chart_error)?);
    }
    Ok(())
}
