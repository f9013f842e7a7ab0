//! `report.html`: one self-contained page (no scripts, no network; charts
//! are inline SVG drawn with plotters) describing a run folder.
//!
//! [`RunReport`] reads and computes everything the page shows, once (the
//! best candidate's backtests included); `page` writes its HTML, `charts/`
//! draws each chart (one file per chart), `labels` writes times, and
//! numbers are labelled by [`crate::text`].

mod charts;
mod html;
mod labels;
mod page;
mod robust;
pub mod walkforward;

use std::path::Path;

use sieve_core::engine::Backtest;
use sieve_core::format;
use sieve_core::strategy;
use sieve_core::{Error, Result};

use crate::best::Best;
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
    let html = render(study, dir, axes)?;
    format::write_atomic(&RunDir::new(dir)?.report_path(), html.as_bytes())
}

/// The page [`write`] writes, as text.
pub fn render(study: &Study, dir: &Path, axes: &HeatmapAxes) -> Result<String> {
    let report = RunReport::load(study, dir, axes)?;
    page::run_page(&report)
}

/// Everything a run's page shows, read from its folder and computed before
/// any HTML is written.
pub(crate) struct RunReport<'a> {
    pub study: &'a Study,
    pub state: RunState,
    pub best: Best,
    /// The best candidate's exact backtest on each instrument, in order.
    pub backtests: Vec<Backtest>,
    /// The first (widest) sweep's parameters and rows, and the two mapped.
    pub heatmap: Option<Heatmap>,
    pub ranks: Ranks,
    /// Score-window vs holdout objective of the best iteration's verified
    /// candidates (finite pairs only; empty without a holdout).
    pub score_vs_holdout: Vec<(f64, f64)>,
}

/// The heatmap's data: the sweep's parameter names and rows, and the
/// column indices of the two parameters mapped.
pub(crate) struct Heatmap {
    pub names: Vec<String>,
    pub rows: Vec<SweepRow>,
    pub x: usize,
    pub y: usize,
}

/// Screen rank against verified rank, of the last verified iteration.
pub(crate) enum Ranks {
    /// No iteration verified yet.
    None,
    /// The CPU screen of the score window is the exact engine: the ranks
    /// agree exactly, and the page says so instead of drawing a diagonal.
    Exact,
    Pairs {
        iteration: u32,
        spearman: Option<f64>,
        /// (screen rank, verified rank) of each verified candidate.
        pairs: Vec<(f64, f64)>,
    },
}

impl<'a> RunReport<'a> {
    pub(crate) fn load(study: &'a Study, dir: &Path, axes: &HeatmapAxes) -> Result<Self> {
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
        let backtests = best_backtests(study, &best)?;
        let heatmap = heatmap(dir, axes)?;
        let ranks = ranks(dir, &state)?;
        let score_vs_holdout = score_vs_holdout(dir, &best);
        Ok(RunReport {
            study,
            state,
            best,
            backtests,
            heatmap,
            ranks,
            score_vs_holdout,
        })
    }
}

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

/// The heatmap over two parameters, from the first (widest) sweep.
fn heatmap(dir: &Path, axes: &HeatmapAxes) -> Result<Option<Heatmap>> {
    let first_sweep = dir.join("iter-001").join("sweep.csv");
    if !first_sweep.exists() {
        return Ok(None);
    }
    let (names, rows) = files::read_sweep_csv(&first_sweep)?;
    Ok(
        charts::heatmap::pick_axes(&names, &rows, axes)?.map(|(x, y)| Heatmap {
            names,
            rows,
            x,
            y,
        }),
    )
}

/// Screen rank vs verified rank, last verified iteration.
fn ranks(dir: &Path, state: &RunState) -> Result<Ranks> {
    let Some(last) = state
        .iterations
        .iter()
        .rev()
        .find(|i| i.stage == Stage::Done)
    else {
        return Ok(Ranks::None);
    };
    let iter_dir = dir.join(format!("iter-{:03}", last.iteration));
    // On the CPU scoring the score window, the screen score is the verified
    // score bit for bit: the chart would be a diagonal that says nothing.
    let meta: Option<crate::sweep::SweepMeta> =
        files::read_json(&files::meta_path(&iter_dir.join("sweep.csv"))).ok();
    if meta.is_some_and(|m| m.backend == "cpu" && m.screen_window == "score") {
        return Ok(Ranks::Exact);
    }
    let cols = files::read_columns(&iter_dir.join("verified.csv"), &["screen_rank", "rank"])?;
    Ok(Ranks::Pairs {
        iteration: last.iteration,
        spearman: last.verify.as_ref().and_then(|v| v.spearman),
        pairs: cols[0]
            .iter()
            .copied()
            .zip(cols[1].iter().copied())
            .collect(),
    })
}

/// Score vs holdout objective of the best iteration's verified candidates.
fn score_vs_holdout(dir: &Path, best: &Best) -> Vec<(f64, f64)> {
    let verified = dir
        .join(format!("iter-{:03}", best.iteration))
        .join("verified.csv");
    match files::read_columns(&verified, &["score", "holdout_score"]) {
        Ok(cols) => cols[0]
            .iter()
            .zip(&cols[1])
            .map(|(&a, &b)| (a, b))
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::charts::equity::*;
    use super::charts::heatmap::heatmap_svg;
    use super::charts::history::history_svg;
    use super::labels::*;
    use super::page::*;
    use super::SweepRow;
    use crate::text::*;
    use sieve_core::engine::{Side, Trade};

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
            exit_reason: match exit_bar {
                Some(_) => sieve_core::engine::ExitReason::Rule,
                None => sieve_core::engine::ExitReason::End,
            },
            entry_reason: sieve_core::engine::EntryReason::Signal,
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
        let html = trade_table(&trades, &times, |_| None);
        let rows = cells(&html, "trade");
        assert_eq!(rows.len(), 40);
        assert_eq!(html.matches("more trades").count(), 1);
        assert!(html.contains("… 10 more trades …"), "{html}");
        let numbers: Vec<&str> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(numbers[19..21], ["20", "31"]);
        assert_eq!(numbers[39], "50");
        let last = &rows[39];
        assert_eq!(
            (last[1], last[2], last[5], last[7]),
            ("short", "open", "-", "end")
        );
        assert_eq!(rows[0][3], "2020-01-01");
        assert_eq!((rows[0][7], rows[0][8]), ("rule", "+10.00%"));
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
        let cells = time_cells(&trade_table(&trades, &daily, |_| None));
        assert_eq!(
            cells,
            ["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"]
        );

        // One bar off midnight: every row gets the time, midnight ones too.
        let mut mixed = daily.clone();
        mixed[3] += 13 * HOUR_MS + 5 * 60_000 + 7_000;
        let cells = time_cells(&trade_table(&trades, &mixed, |_| None));
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
