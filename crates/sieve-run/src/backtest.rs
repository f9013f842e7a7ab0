//! One parameter set through the exact engine on every instrument: the
//! metrics per window, the objectives and their aggregate. `sieve backtest`
//! and the Python package's `backtest` print or return this.

use sieve_core::config::Config;
use sieve_core::engine::Backtest;
use sieve_core::format::{float, TimeStyle};
use sieve_core::metrics::{Metrics, Objective, Window};
use sieve_core::strategy::{self, Strategy};
use sieve_core::{Error, Result};

use crate::files::Num;
use crate::portfolio;
use crate::text::{human, table};
use crate::Study;
use sieve_core::key;

/// One instrument's backtest of the parameters.
pub struct InstrumentRun {
    pub windows: Vec<Window>,
    pub bt: Backtest,
    pub metrics: Vec<Metrics>,
    pub objectives: Vec<f64>,
}

/// The parameters' backtest on every instrument of a study.
pub struct Backtested {
    /// Every parameter, in strategy order.
    pub params: Vec<f64>,
    /// One per instrument, in the study's order.
    pub runs: Vec<InstrumentRun>,
    /// The aggregate objective per window (the instrument's own with one).
    pub combined: Vec<f64>,
}

/// Backtests `name=value` settings (over the strategy's defaults, each
/// checked, and the study's constraints) on every instrument.
pub fn backtest(study: &Study, sets: &[String]) -> Result<Backtested> {
    let params = parse_sets(study.strategy(), sets)?;
    check_constraints(study, &params)?;
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
    let aggregation = study.market().aggregation;
    let combined = (0..runs[0].windows.len())
        .map(|k| {
            let values: Vec<f64> = runs.iter().map(|r| r.objectives[k]).collect();
            aggregation.of(&values)
        })
        .collect();
    Ok(Backtested {
        params,
        runs,
        combined,
    })
}

/// What makes a backtest's result meaningless: parameters whose indicators
/// need more bars than an instrument has.
pub fn warnings(study: &Study, done: &Backtested) -> Vec<String> {
    let warmup = study.strategy().warmup(&done.params);
    study
        .market()
        .instruments
        .iter()
        .filter(|i| warmup >= i.bars.len())
        .map(|i| {
            let of = match study.market().is_several() {
                true => format!("instrument '{}'", i.name),
                false => "the data".to_string(),
            };
            format!(
                "these parameters need {warmup} bars before their indicators are defined, and {of} has {}: no position is ever taken",
                i.bars.len()
            )
        })
        .collect()
}

impl Backtested {
    /// `sieve backtest --json`: strategy, params, objective and windows
    /// (with several instruments: the aggregate and each instrument's).
    pub fn json(&self, study: &Study) -> serde_json::Value {
        let strategy = study.strategy();
        let params: serde_json::Map<String, serde_json::Value> = strategy
            .params()
            .iter()
            .zip(&self.params)
            .map(|(p, v)| (p.name.to_string(), serde_json::json!(v)))
            .collect();
        let mut doc = serde_json::json!({
            "strategy": strategy.name(),
            "params": params,
            "objective": study.scoring().objective.name(),
        });
        if !study.market().is_several() {
            doc["windows"] = self.runs[0].windows_json();
            if let Some(d) = self.runs[0].bt.detail {
                doc["detail"] = serde_json::json!({ "walked": d.walked, "uncovered": d.uncovered });
            }
            if let Some(book) = &study.market().portfolio {
                doc["portfolio"] = portfolio_json(book, &self.runs[0].bt, &self.params);
            }
            return doc;
        }
        let mut aggregate = serde_json::Map::new();
        for (w, v) in self.runs[0].windows.iter().zip(&self.combined) {
            aggregate.insert(
                w.kind.to_string(),
                serde_json::json!({ "objective": Num(*v) }),
            );
        }
        doc["aggregate"] = serde_json::json!(study.market().aggregation.how.name());
        doc["windows"] = aggregate.into();
        let instruments: serde_json::Map<String, serde_json::Value> = study
            .market()
            .names()
            .into_iter()
            .zip(&self.runs)
            .map(|(name, run)| {
                (
                    name.to_string(),
                    serde_json::json!({ "windows": run.windows_json() }),
                )
            })
            .collect();
        doc["instruments"] = instruments.into();
        doc
    }

    /// The tables `sieve backtest` prints: one per instrument, then (with
    /// several) the aggregate objective.
    pub fn text(&self, study: &Study) -> String {
        let strategy = study.strategy();
        let several = study.market().is_several();
        let objective = study.scoring().objective;
        let named: Vec<String> = strategy
            .params()
            .iter()
            .zip(&self.params)
            .map(|(p, v)| format!("{}={}", p.name, float(*v)))
            .collect();
        let mut text = String::new();
        for (instrument, run) in study.market().instruments.iter().zip(&self.runs) {
            let bars = &instrument.bars;
            let on = match several {
                true => instrument.name.clone(),
                false => study.data_label().to_string(),
            };
            let style = TimeStyle::for_times(&bars.time);
            // The name, then its parameters where it has any.
            let head: Vec<&str> = std::iter::once(strategy.name())
                .chain(named.iter().map(String::as_str))
                .collect();
            let conventions = study.scoring().engine.conventions.describe();
            text.push_str(&format!(
                "{} on {on} ({} bars, {} .. {}){}\n\n",
                head.join(" "),
                bars.len(),
                style.format(bars.time[0]),
                style.format(bars.time[bars.len() - 1]),
                conventions.map_or(String::new(), |c| format!(", conventions: {c}")),
            ));
            text.push_str(&run.table(bars, &style, objective));
            match run.bt.detail {
                Some(d) => text.push_str(&format!(
                    "\ndata.detail: {} ambiguous bars walked on their detail bars, {} without covering detail bars kept the OHLC rule\n",
                    d.walked, d.uncovered
                )),
                None if bars.detail.is_some() => text.push_str(
                    "\ndata.detail: this strategy has no stop, target, trailing stop or entry order, so its detail bars change nothing\n",
                ),
                None => {}
            }
            if several {
                text.push('\n');
            }
        }
        if let Some(book) = &study.market().portfolio {
            text.push('\n');
            text.push_str(&portfolio_text(book, &self.runs[0].bt, &self.params));
        }
        if several {
            let mut header = vec![format!(
                "{} over {} instruments",
                study.market().aggregation.how,
                self.runs.len()
            )];
            header.extend(self.runs[0].windows.iter().map(|w| w.kind.to_string()));
            let mut row = vec![format!("objective ({objective})")];
            row.extend(self.combined.iter().map(|o| human(*o)));
            text.push_str(&table(&header, &[row]));
        }
        text
    }
}

/// A portfolio's instruments and occupancy, as `sieve backtest --json`
/// reports them.
fn portfolio_json(
    book: &sieve_core::market::Book,
    bt: &Backtest,
    params: &[f64],
) -> serde_json::Value {
    let instruments: serde_json::Map<String, serde_json::Value> =
        portfolio::contributions(book, bt)
            .into_iter()
            .map(|c| {
                let doc = serde_json::json!({
                    "trades": c.trades,
                    "wins": c.wins,
                    "pnl": Num(c.pnl),
                    "fees": Num(c.fees),
                    "held": Num(c.held),
                });
                (c.name, doc)
            })
            .collect();
    let o = portfolio::occupancy(book, bt, params);
    let (positions, max_positions) = portfolio::mean_max(o.positions.iter().map(|&p| f64::from(p)));
    let (exposure, max_exposure) = portfolio::mean_max(o.exposure.iter().copied());
    serde_json::json!({
        "instruments": instruments,
        "positions": { "mean": Num(positions), "max": Num(max_positions) },
        "exposure": { "mean": Num(exposure), "max": Num(max_exposure) },
    })
}

/// The table of a portfolio's instruments (trades, wins, profit after
/// fees, time held) and its positions and exposure over time.
fn portfolio_text(book: &sieve_core::market::Book, bt: &Backtest, params: &[f64]) -> String {
    let header: Vec<String> = ["instrument", "trades", "closed won", "pnl", "fees", "held"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = portfolio::contributions(book, bt)
        .into_iter()
        .map(|c| {
            vec![
                c.name,
                c.trades.to_string(),
                c.wins.to_string(),
                human(c.pnl),
                human(c.fees),
                format!("{:.1}%", 100.0 * c.held),
            ]
        })
        .collect();
    let o = portfolio::occupancy(book, bt, params);
    let (positions, max_positions) = portfolio::mean_max(o.positions.iter().map(|&p| f64::from(p)));
    let (exposure, max_exposure) = portfolio::mean_max(o.exposure.iter().copied());
    format!(
        "each instrument over all the bars (the holdout included), open trades at the last close:\n{}\npositions open: mean {}, at most {}; gross exposure: mean {}, at most {}\n",
        table(&header, &rows),
        human(positions),
        human(max_positions),
        human(exposure),
        human(max_exposure)
    )
}

impl InstrumentRun {
    /// `{window: {metric: value, …, objective}}`.
    fn windows_json(&self) -> serde_json::Value {
        let mut windows_json = serde_json::Map::new();
        for ((w, m), objective) in self.windows.iter().zip(&self.metrics).zip(&self.objectives) {
            let mut obj = serde_json::Map::new();
            for (name, v) in Metrics::NAMES.iter().zip(m.values()) {
                let value = match crate::best::count(name, v) {
                    Some(n) => serde_json::json!(n),
                    None => serde_json::json!(Num(v)),
                };
                obj.insert(name.to_string(), value);
            }
            obj.insert("objective".into(), serde_json::json!(Num(*objective)));
            windows_json.insert(w.kind.to_string(), obj.into());
        }
        windows_json.into()
    }

    /// The metrics table: one column per window.
    fn table(
        &self,
        bars: &sieve_core::data::Bars,
        style: &TimeStyle,
        objective: Objective,
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

/// The config of a backtest of `sets` (`name=value`), the CLI's and
/// Python's alike: `load(extra)` loads the config with `extra` overrides
/// after the caller's own. A rule strategy's parameters are its
/// `[strategy.params]` keys, so there each set value becomes that key's
/// fixed value ([`rule_overrides`]); a key may have no grid at all, so a
/// config that fails without them is tried with them, and its first error
/// stands unless that gives a rule strategy.
pub fn load_config<C: AsRef<Config>>(
    sets: &[String],
    load: &mut dyn FnMut(&[String]) -> Result<C>,
) -> Result<C> {
    let fixed = rule_overrides(sets);
    let rules = |c: &C| c.as_ref().rules.is_some();
    match load(&[]) {
        Ok(config) if !rules(&config) => Ok(config),
        Ok(_) => load(&fixed),
        Err(e) => match load(&fixed) {
            Ok(config) if rules(&config) => Ok(config),
            _ => Err(e),
        },
    }
}

/// A rule strategy's parameters are its `[strategy.params]` keys: each
/// `name=value` setting becomes that key's fixed value, as config overrides
/// (`strategy.params.name=value`) applied before the study is built.
pub fn rule_overrides(sets: &[String]) -> Vec<String> {
    sets.iter()
        .filter_map(|s| s.split_once('='))
        .map(|(name, value)| format!("{}={}", key::param(name.trim()), value.trim()))
        .collect()
}

/// `name=value` settings over the strategy's defaults, each checked.
pub fn parse_sets(strategy: &dyn Strategy, sets: &[String]) -> Result<Vec<f64>> {
    let mut params = strategy::default_params(strategy);
    for item in sets {
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| Error::Invalid(format!("--set {item}: expected NAME=VALUE")))?;
        let i = strategy::param_index(strategy, name.trim())?;
        let v: f64 = value.trim().parse().map_err(|_| {
            Error::Invalid(format!(
                "--set {item}: cannot parse \"{}\" as a number",
                value.trim()
            ))
        })?;
        strategy.params()[i].check(v)?;
        params[i] = v;
    }
    Ok(params)
}

/// The study's constraints (the config's, else the strategy's) must hold
/// for a backtest's parameters too.
fn check_constraints(study: &Study, params: &[f64]) -> Result<()> {
    let names = study.param_names();
    for c in &study.space().constraints {
        if !c.holds(params) {
            let named: Vec<String> = c
                .params()
                .into_iter()
                .map(|i| format!("{}={}", names[i], float(params[i])))
                .collect();
            return Err(Error::Invalid(format!(
                "{} breaks the constraint \"{}\" (strategy.constraints)",
                named.join(" "),
                c.text
            )));
        }
    }
    Ok(())
}

/// `side,status,entry_time,entry_price,exit_time,exit_price,units,fees,pnl,return,exit_reason,entry_reason`;
/// a portfolio's (`names`: its instruments) with `instrument` first.
pub fn trades_csv(time: &[i64], bt: &Backtest, names: &[&str]) -> String {
    let style = TimeStyle::for_times(time);
    let mut out = String::new();
    if !bt.instruments.is_empty() {
        out.push_str("instrument,");
    }
    out.push_str(
        "side,status,entry_time,entry_price,exit_time,exit_price,units,fees,pnl,return,exit_reason,entry_reason\n",
    );
    for (n, t) in bt.trades.iter().enumerate() {
        let (status, exit_time) = match t.exit_bar {
            Some(b) => ("closed", style.format(time[b])),
            None => ("open", String::new()),
        };
        if let Some(&i) = bt.instruments.get(n) {
            out.push_str(names[i]);
            out.push(',');
        }
        out.push_str(&format!(
            "{},{status},{},{},{exit_time},{},{},{},{},{},{},{}\n",
            t.side.as_str(),
            style.format(time[t.entry_bar]),
            float(t.entry_price),
            float(t.exit_price),
            float(t.units),
            float(t.fees),
            float(t.pnl),
            float(t.ret),
            t.exit_reason.as_str(),
            t.entry_reason.as_str(),
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
