use std::io::Write;

use anyhow::{Context, Result};
use sieve_core::engine::Backtest;
use sieve_core::format::{self, float, TimeStyle};
use sieve_core::metrics::{Metrics, Window};
use sieve_core::strategy::{self, Strategy};

use crate::args::BacktestArgs;
use crate::output::{human, table};

pub fn run(a: BacktestArgs) -> Result<()> {
    // The study checks the config and warns about unreliable settings.
    // A rule strategy's parameters are its `[strategy.params]` keys, so a
    // `--set` becomes that key's fixed value (it may have no grid at all).
    let fixed: Vec<(String, Option<String>)> = if crate::inputs::has_rules(&a.common)? {
        a.set
            .iter()
            .filter_map(|item| item.split_once('='))
            .map(|(name, value)| {
                (
                    format!("strategy.params.{}", name.trim()),
                    Some(value.trim().to_string()),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let flags: Vec<(&str, Option<String>)> =
        fixed.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let study = crate::inputs::load(&a.common, &flags)?.into_study()?;
    let strategy = study.strategy;
    if study.config.rules.is_some() {
        for axis in study.space.axes.iter().filter(|x| x.values.len() > 1) {
            eprintln!(
                "note: {} is not --set; using {}, the first value of its grid",
                axis.name,
                float(axis.values[0])
            );
        }
    }
    for out in [&a.trades, &a.equity].into_iter().flatten() {
        sieve_run::files::check_output(out, &crate::inputs::input_paths(&a.common, &study.config))?;
    }
    let params = parse_sets(strategy, &a.set)?;
    check_constraints(&study, &params)?;
    let warmup = strategy.warmup(&params);
    if warmup >= study.bars().len() {
        eprintln!(
            "warning: these parameters need {warmup} bars before their indicators are defined, and the data has {}: no position is ever taken",
            study.bars().len()
        );
    }
    let several = study.market.is_several();
    if several && (a.trades.is_some() || a.equity.is_some()) {
        anyhow::bail!(
            "--trades and --equity write one instrument's record; this config has {} instruments (data.paths): run the backtest with --data on one file",
            study.market.instruments.len()
        );
    }
    // Every instrument's windows, metrics and objectives: one simulation each.
    let runs: Vec<InstrumentRun> = study.with_evaluators([params.as_slice()], |evals| {
        evals
            .iter()
            .map(|eval| {
                let windows: Vec<Window> = eval.scoring.windows.all().collect();
                let (bt, metrics) = eval.backtest_with_metrics(&params, &windows);
                let objectives = windows
                    .iter()
                    .zip(&metrics)
                    .map(|(w, m)| eval.window_objective(w, m))
                    .collect();
                InstrumentRun {
                    windows,
                    bt,
                    metrics,
                    objectives,
                }
            })
            .collect()
    });
    let bars = study.bars();
    if let Some(path) = &a.trades {
        format::write_atomic(path, trades_csv(&bars.time, &runs[0].bt).as_bytes())?;
    }
    if let Some(path) = &a.equity {
        format::write_atomic(path, equity_csv(&bars.time, &runs[0].bt).as_bytes())?;
    }
    let aggregation = study.market.aggregation;
    // The combined objective per window (the instrument's own with one).
    let combined: Vec<f64> = (0..runs[0].windows.len())
        .map(|k| {
            let values: Vec<f64> = runs.iter().map(|r| r.objectives[k]).collect();
            aggregation.of(&values)
        })
        .collect();

    let named: Vec<String> = strategy
        .params()
        .iter()
        .zip(&params)
        .map(|(p, v)| format!("{}={}", p.name, float(*v)))
        .collect();
    let objective = study.scoring().objective;
    let text = if a.json {
        let params_json: serde_json::Map<String, serde_json::Value> = strategy
            .params()
            .iter()
            .zip(&params)
            .map(|(p, v)| (p.name.to_string(), serde_json::json!(v)))
            .collect();
        let mut doc = serde_json::json!({
            "strategy": strategy.name(),
            "params": params_json,
            "objective": objective.name(),
        });
        if several {
            let mut aggregate = serde_json::Map::new();
            for (w, v) in runs[0].windows.iter().zip(&combined) {
                aggregate.insert(w.kind.to_string(), serde_json::json!({ "objective": v }));
            }
            doc["aggregate"] = serde_json::json!(aggregation.how.name());
            doc["windows"] = aggregate.into();
            let instruments: serde_json::Map<String, serde_json::Value> = study
                .market
                .names()
                .into_iter()
                .zip(&runs)
                .map(|(name, run)| {
                    (
                        name.to_string(),
                        serde_json::json!({ "windows": run.windows_json() }),
                    )
                })
                .collect();
            doc["instruments"] = instruments.into();
        } else {
            doc["windows"] = runs[0].windows_json();
        }
        format!("{}\n", serde_json::to_string_pretty(&doc)?)
    } else {
        let mut text = String::new();
        for (instrument, run) in study.market.instruments.iter().zip(&runs) {
            let bars = &instrument.bars;
            let on = match several {
                true => instrument.name.clone(),
                false => study.data_label.clone(),
            };
            let style = TimeStyle::for_times(&bars.time);
            text.push_str(&format!(
                "{} {} on {on} ({} bars, {} .. {})\n\n",
                strategy.name(),
                named.join(" "),
                bars.len(),
                style.format(bars.time[0]),
                style.format(bars.time[bars.len() - 1]),
            ));
            text.push_str(&run.table(bars, &style, objective));
            if several {
                text.push('\n');
            }
        }
        if several {
            let mut header = vec![format!(
                "{} over {} instruments",
                aggregation.how,
                runs.len()
            )];
            header.extend(runs[0].windows.iter().map(|w| w.kind.to_string()));
            let mut row = vec![format!("objective ({objective})")];
            row.extend(combined.iter().map(|o| human(*o)));
            text.push_str(&table(&header, &[row]));
        }
        text
    };
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(())
}

/// One instrument's backtest of the parameters.
struct InstrumentRun {
    windows: Vec<Window>,
    bt: Backtest,
    metrics: Vec<Metrics>,
    objectives: Vec<f64>,
}

impl InstrumentRun {
    /// `{window: {metric: value, …, objective}}`.
    fn windows_json(&self) -> serde_json::Value {
        let mut windows_json = serde_json::Map::new();
        for ((w, m), objective) in self.windows.iter().zip(&self.metrics).zip(&self.objectives) {
            let mut obj = serde_json::Map::new();
            for (name, v) in Metrics::NAMES.iter().zip(m.values()) {
                obj.insert(name.to_string(), serde_json::json!(v));
            }
            obj.insert("objective".into(), serde_json::json!(objective));
            windows_json.insert(w.kind.to_string(), obj.into());
        }
        windows_json.into()
    }

    /// The metrics table: one column per window.
    fn table(
        &self,
        bars: &sieve_core::data::Bars,
        style: &TimeStyle,
        objective: sieve_core::metrics::Objective,
    ) -> String {
        let mut header = vec!["metric".to_string()];
        header.extend(self.windows.iter().map(|w| {
            format!(
                "{} {}..{}",
                w.kind,
                style.format(bars.time[w.start]),
                style.format(bars.time[w.end - 1])
            )
        }));
        let mut rows: Vec<Vec<String>> = Metrics::NAMES
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let mut row = vec![name.to_string()];
                row.extend(self.metrics.iter().map(|m| human(m.values()[i])));
                row
            })
            .collect();
        let mut objective_row = vec![format!("objective ({objective})")];
        objective_row.extend(self.objectives.iter().map(|o| human(*o)));
        rows.push(objective_row);
        table(&header, &rows)
    }
}

/// `--set name=value` pairs over the strategy's defaults, each checked.
fn parse_sets(strategy: &dyn Strategy, sets: &[String]) -> Result<Vec<f64>> {
    let mut params = strategy::default_params(strategy);
    for item in sets {
        let (name, value) = item
            .split_once('=')
            .with_context(|| format!("--set {item}: expected NAME=VALUE"))?;
        let i = strategy::param_index(strategy, name.trim())?;
        let v: f64 = value.trim().parse().map_err(|_| {
            anyhow::anyhow!(
                "--set {item}: cannot parse \"{}\" as a number",
                value.trim()
            )
        })?;
        strategy.params()[i].check(v)?;
        params[i] = v;
    }
    Ok(params)
}

/// The study's constraints (the config's, else the strategy's) must hold
/// for a backtest's parameters too.
fn check_constraints(study: &sieve_run::Study, params: &[f64]) -> Result<()> {
    let names = study.param_names();
    for c in &study.space.constraints {
        if !c.holds(params) {
            let named: Vec<String> = c
                .params()
                .into_iter()
                .map(|i| format!("{}={}", names[i], float(params[i])))
                .collect();
            anyhow::bail!(
                "{} breaks the constraint \"{}\" (strategy.constraints)",
                named.join(" "),
                c.text
            );
        }
    }
    Ok(())
}

/// `side,status,entry_time,entry_price,exit_time,exit_price,units,fees,pnl,return`.
pub fn trades_csv(time: &[i64], bt: &Backtest) -> String {
    let style = TimeStyle::for_times(time);
    let mut out = String::from(
        "side,status,entry_time,entry_price,exit_time,exit_price,units,fees,pnl,return\n",
    );
    for t in &bt.trades {
        let (status, exit_time) = match t.exit_bar {
            Some(b) => ("closed", style.format(time[b])),
            None => ("open", String::new()),
        };
        out.push_str(&format!(
            "{},{status},{},{},{exit_time},{},{},{},{},{}\n",
            t.side.as_str(),
            style.format(time[t.entry_bar]),
            float(t.entry_price),
            float(t.exit_price),
            float(t.units),
            float(t.fees),
            float(t.pnl),
            float(t.ret),
        ));
    }
    out
}

/// `time,equity,position`.
pub fn equity_csv(time: &[i64], bt: &Backtest) -> String {
    let style = TimeStyle::for_times(time);
    let mut out = String::from("time,equity,position\n");
    for ((t, e), p) in time.iter().zip(&bt.equity).zip(&bt.position) {
        out.push_str(&format!("{},{},{p}\n", style.format(*t), float(*e)));
    }
    out
}
