//! The TOML config. Parsing is two steps: the file (plus any
//! `section.key=value` overrides from the command line) becomes a TOML table,
//! then a raw serde struct that rejects unknown keys, then a checked
//! [`Config`] whose every value is valid. Errors name the key.

mod frames;
mod grid;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::data::parse_time;
use crate::engine::{Conventions, EngineConfig, Fill, SizeOf};
use crate::error::{Error, Result};
use crate::evaluate::{PortfolioSpec, ScoringSpec, Shares};
use crate::grid::ParamSpace;
use crate::key;
use crate::metrics::{Aggregate, Aggregation, Boundary, Objective};
use crate::rules::{
    ExternalFunctions, KeyValue, ManagedBuiltin, Management, RuleSource, RuleStrategy, KEYS,
};
use crate::strategy::{Direction, SharedStrategy, Strategy};

pub use crate::evaluate::{Annualization, ScreenWindow};
pub use grid::axis_values;

/// A checked configuration; every field has its default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The merged TOML (file + overrides): what runs are hashed by.
    pub source: toml::Table,
    /// The file it was read from, for errors found later (with the data).
    pub file: Option<PathBuf>,
    /// `data.path`, resolved against the config file's folder.
    pub data: Option<PathBuf>,
    /// `data.adjust`: scale prices by adj_close / close.
    pub adjust: bool,
    /// `data.timezone`: the zone of the rules' calendar values (UTC when
    /// unset).
    pub timezone: Option<chrono_tz::Tz>,
    /// `data.columns`: the names of a header-less file's columns.
    pub columns: Option<Vec<String>>,
    /// `data.detail`: finer bars under `data.path`'s, resolved against the
    /// config file's folder.
    pub detail: Option<PathBuf>,
    /// `data.paths`: several instruments' files or glob patterns, resolved
    /// against the config file's folder (empty: one instrument, `data`).
    pub paths: Vec<PathBuf>,
    /// `data.names`: the instruments' names (default: the file stems).
    pub names: Option<Vec<String>>,
    /// `data.bar`, `data.week_start`, `data.day_start`,
    /// `data.session_end`: how higher timeframes fall on the bars (no
    /// informative bars: the loader reads those).
    pub frames: crate::data::Frames,
    /// `data.informative`: other instruments' files by name (sorted),
    /// resolved against the config file's folder.
    pub informative: Vec<(String, PathBuf)>,
    pub strategy: String,
    /// The compiled rule strategy, when `[strategy]` has rules.
    pub rules: Option<Arc<RuleStrategy>>,
    /// A built-in with trade-management keys.
    pub managed_builtin: Option<Arc<ManagedBuiltin>>,
    /// `strategy.constraints`; `None` = the strategy's defaults.
    pub constraints: Option<Vec<String>>,
    /// `[strategy.params]`; `None` = the strategy's default grid.
    pub params: Option<toml::Table>,
    /// `[backtest]` and `[score]`: how runs of this config are scored.
    pub scoring: ScoringSpec,
    /// `portfolio.rank_by`: what orders a portfolio's entries on one bar,
    /// and the functions it may call.
    pub rank_by: Option<(String, ExternalFunctions)>,
    /// `portfolio.weight` and `portfolio.rebalance`: a target-weight
    /// portfolio.
    pub weights: Option<WeightsSpec>,
}

/// A target-weight portfolio's expressions as written, and the functions
/// they may call.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsSpec {
    pub weight: String,
    pub rebalance: Option<String>,
    pub functions: ExternalFunctions,
}

/// `score.screen_window` as written.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawScreenWindow {
    Score,
    Full,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    data: RawData,
    #[serde(default)]
    strategy: RawStrategy,
    #[serde(default)]
    backtest: RawBacktest,
    #[serde(default)]
    score: RawScore,
    portfolio: Option<RawPortfolio>,
    // The run sections (sieve-run's `RunSettings` reads them from the checked
    // config); here only their being tables.
    #[serde(default, rename = "sweep")]
    _sweep: toml::Table,
    #[serde(default, rename = "verify")]
    _verify: toml::Table,
    #[serde(default, rename = "optimize")]
    _optimize: toml::Table,
    #[serde(default, rename = "robust")]
    _robust: toml::Table,
    #[serde(default, rename = "walkforward")]
    _walkforward: toml::Table,
    #[serde(default, rename = "search")]
    _search: toml::Table,
    #[serde(default, rename = "executor")]
    _executor: toml::Table,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawData {
    path: Option<PathBuf>,
    detail: Option<PathBuf>,
    paths: Option<RawPaths>,
    names: Option<Vec<String>>,
    adjust: Option<bool>,
    columns: Option<Vec<String>>,
    timezone: Option<String>,
    bar: Option<String>,
    week_start: Option<String>,
    day_start: Option<String>,
    session_end: Option<String>,
    informative: Option<std::collections::BTreeMap<String, PathBuf>>,
}

/// `data.paths`: a list of files or patterns, or one pattern.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a file path or a list of file paths (strings)")]
enum RawPaths {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStrategy {
    name: Option<String>,
    constraints: Option<Vec<String>>,
    params: Option<toml::Table>,
    entry: Option<String>,
    exit: Option<String>,
    short_entry: Option<String>,
    short_exit: Option<String>,
    trailing_stop: Option<String>,
    // The trade-management keys (`rules::KEYS`) are read from the table by
    // name ([`management`]); here only their being allowed, in the order
    // an unknown key's message lists them (a test checks every key is
    // here).
    #[serde(rename = "stop_loss")]
    _stop_loss: Option<toml::Value>,
    #[serde(rename = "stop_distance")]
    _stop_distance: Option<toml::Value>,
    #[serde(rename = "take_profit")]
    _take_profit: Option<toml::Value>,
    #[serde(rename = "target_distance")]
    _target_distance: Option<toml::Value>,
    #[serde(rename = "trail_loss")]
    _trail_loss: Option<toml::Value>,
    #[serde(rename = "trail_distance")]
    _trail_distance: Option<toml::Value>,
    #[serde(rename = "max_bars")]
    _max_bars: Option<toml::Value>,
    #[serde(rename = "size")]
    _size: Option<toml::Value>,
    #[serde(rename = "stop_level")]
    _stop_level: Option<toml::Value>,
    #[serde(rename = "entry_stop")]
    _entry_stop: Option<toml::Value>,
    #[serde(rename = "entry_limit")]
    _entry_limit: Option<toml::Value>,
    #[serde(rename = "order_bars")]
    _order_bars: Option<toml::Value>,
    #[serde(rename = "max_entries")]
    _max_entries: Option<toml::Value>,
    define: Option<toml::Table>,
}

/// The trade-management keys of `[strategy]` (`strategy`), as written: a
/// number stays a number.
fn management(strategy: Option<&toml::Table>) -> Result<Management> {
    let mut keys = Management::default();
    for spec in KEYS {
        let Some(v) = strategy.and_then(|t| t.get(spec.name)) else {
            continue;
        };
        let key = key::strategy(spec.name);
        let value = match v {
            toml::Value::String(s) => KeyValue::Expr(s.clone()),
            toml::Value::Integer(i) => KeyValue::Number(*i as f64),
            toml::Value::Float(f) if f.is_finite() => KeyValue::Number(*f),
            toml::Value::Float(f) => {
                return Err(Error::config(
                    key,
                    format!(
                        "must be a finite number or an expression in quotes, got {}",
                        crate::format::float(*f)
                    ),
                ))
            }
            other => {
                return Err(Error::config(
                    key,
                    format!("must be a number or an expression in quotes, got {other}"),
                ))
            }
        };
        if let Err(other) = keys.set(spec, value) {
            return Err(Error::config(
                key,
                format!("give at most one of {other} and {}", spec.name),
            ));
        }
    }
    if keys.order_bars.is_some() && keys.entry_stop.is_none() && keys.entry_limit.is_none() {
        return Err(Error::config(
            key::strategy("order_bars"),
            "says how long an entry order waits, but there is none: set entry_stop or entry_limit",
        ));
    }
    Ok(keys)
}

impl RawStrategy {
    /// The rule source, when any rule key is present; `table` is
    /// `[strategy]` as written (where its trade-management keys are read).
    fn rules(&self, table: Option<&toml::Table>) -> Result<Option<RuleSource>> {
        let any = self.entry.is_some()
            || self.exit.is_some()
            || self.short_entry.is_some()
            || self.short_exit.is_some()
            || self.trailing_stop.is_some()
            || self.define.is_some();
        // Trade-management keys alone do not make a rule strategy.
        if !any {
            return Ok(None);
        }
        if self.entry.is_none() && self.exit.is_none() && self.trailing_stop.is_some() {
            return Err(Error::config(
                key::STRATEGY_TRAILING_STOP,
                "a trailing stop is a rule strategy's (with entry and exit); a built-in takes stop_loss or stop_distance, a stop fixed at the entry",
            ));
        }
        let required = |key: &str, v: &Option<String>| {
            v.clone().ok_or_else(|| {
                Error::config(
                    key::strategy(key),
                    "missing: a rule strategy needs both entry and exit (exit = \"false\" exits only by the trailing stop)",
                )
            })
        };
        let define = self
            .define
            .iter()
            .flatten()
            .map(|(name, v)| match v {
                toml::Value::String(text) => Ok((name.clone(), text.clone())),
                other => Err(Error::config(
                    key::define(name),
                    format!("must be an expression in quotes, got {other}"),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(RuleSource {
            name: self.name.clone().unwrap_or_else(|| "custom".to_string()),
            entry: required("entry", &self.entry)?,
            exit: required("exit", &self.exit)?,
            short_entry: self.short_entry.clone(),
            short_exit: self.short_exit.clone(),
            trailing_stop: self.trailing_stop.clone(),
            management: management(table)?,
            define,
            params: match &self.params {
                Some(table) => grid::rule_axes(table),
                None => Vec::new(),
            },
            functions: Default::default(),
            read_also: Vec::new(),
        }))
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawBacktest {
    fill: Option<RawFill>,
    fee: Option<f64>,
    slippage: Option<f64>,
    direction: Option<RawDirection>,
    lot_size: Option<f64>,
    initial_cash: Option<f64>,
    max_leverage: Option<f64>,
    annualization: Option<toml::Value>,
    conventions: Option<RawConventions>,
    stop_check: Option<RawStopCheck>,
    exit_before_stop: Option<bool>,
    stop_bar_orders: Option<RawStopBarOrders>,
    stop_priority: Option<RawStopPriority>,
    stop_price_from: Option<RawStopPriceFrom>,
    stop_slippage: Option<bool>,
}

#[derive(Deserialize, Clone, Copy)]
enum RawConventions {
    #[serde(rename = "sieve")]
    Sieve,
    #[serde(rename = "vectorbt")]
    Vectorbt,
    #[serde(rename = "backtesting.py")]
    BacktestingPy,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawStopCheck {
    FillBar,
    NextBar,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawStopBarOrders {
    Keep,
    Drop,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawStopPriority {
    Open,
    Stop,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawStopPriceFrom {
    Fill,
    Close,
}

/// `[backtest]`'s conventions: the preset, then each switch given.
fn conventions(b: &RawBacktest, fill: Fill) -> Result<Conventions> {
    let mut c = match b.conventions {
        None | Some(RawConventions::Sieve) => Conventions::SIEVE,
        Some(RawConventions::Vectorbt) => Conventions::VECTORBT,
        Some(RawConventions::BacktestingPy) => Conventions::BACKTESTING_PY,
    };
    if let Some(v) = b.stop_check {
        c.stop_from_next_bar = matches!(v, RawStopCheck::NextBar);
    }
    if let Some(v) = b.exit_before_stop {
        c.exit_before_stop = v;
    }
    if let Some(v) = b.stop_bar_orders {
        c.drop_orders_on_stop_bar = matches!(v, RawStopBarOrders::Drop);
    }
    if let Some(v) = b.stop_priority {
        c.stop_always_first = matches!(v, RawStopPriority::Stop);
    }
    if let Some(v) = b.stop_price_from {
        c.stop_from_close = matches!(v, RawStopPriceFrom::Close);
    }
    if let Some(v) = b.stop_slippage {
        c.stop_slippage = v;
    }
    if fill == Fill::NextOpen && c.stop_from_close && !c.stop_from_next_bar {
        return Err(Error::config(
            "backtest.stop_price_from",
            "\"close\" measures a trade's stop from its fill bar's close, which a stop checked on that bar (stop_check = \"fill_bar\", with fill = \"next_open\") cannot know yet; set stop_check = \"next_bar\" or stop_price_from = \"fill\"",
        ));
    }
    Ok(c)
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawFill {
    NextOpen,
    Close,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawDirection {
    Long,
    LongShort,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawScore {
    objective: Option<String>,
    score_start: Option<toml::Value>,
    holdout_start: Option<toml::Value>,
    screen_window: Option<RawScreenWindow>,
    min_trades: Option<u64>,
    aggregate: Option<String>,
    aggregate_skip_undefined: Option<bool>,
    shares: Option<RawShares>,
}

/// `[portfolio]`: the instruments of `data.paths` trade from one account.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPortfolio {
    size: Option<f64>,
    size_of: Option<RawSizeOf>,
    max_positions: Option<i64>,
    max_exposure: Option<f64>,
    rank_by: Option<String>,
    weight: Option<String>,
    rebalance: Option<String>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawSizeOf {
    Cash,
    Equity,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawShares {
    Combined,
    Each,
}

/// The strategy of the built-in example (`sieve optimize` with no config).
pub const EXAMPLE_STRATEGY: &str = "activation";

impl Default for Config {
    fn default() -> Self {
        Config::from_table(toml::Table::new(), None, &ExternalFunctions::default())
            .unwrap_or_else(|e| panic!("defaults are valid: {e}"))
    }
}

impl Config {
    /// Reads `path` (or starts empty), applies `overrides` (`section.key=value`,
    /// the value as TOML, else as a string), and checks everything.
    pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<Config> {
        Config::load_with(path, overrides, &ExternalFunctions::default())
    }

    /// [`Config::load`] with functions defined outside sieve that the rules
    /// may call (the Python bindings' `indicators=`).
    pub fn load_with(
        path: Option<&Path>,
        overrides: &[String],
        functions: &ExternalFunctions,
    ) -> Result<Config> {
        let mut table = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| Error::io(p, e))?;
                parse_toml(&text).map_err(|m| Error::config(p.display().to_string(), m))?
            }
            None => toml::Table::new(),
        };
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        let base = path.and_then(Path::parent);
        let mut config = Config::from_table(table, base, functions).map_err(|e| match path {
            Some(p) => e.in_file(&p.display().to_string()),
            None => e,
        })?;
        config.file = path.map(Path::to_path_buf);
        Ok(config)
    }

    /// `e` as said of this config's file (a rule's error found with the
    /// data names the file as one found on reading it does).
    pub fn in_file(&self, e: Error) -> Error {
        match &self.file {
            Some(p) => e.in_file(&p.display().to_string()),
            None => e,
        }
    }

    /// Parses a config from TOML text.
    pub fn parse(text: &str) -> Result<Config> {
        Config::parse_with_overrides(text, &[])
    }

    /// Parses TOML text, then applies `section.key=value` overrides.
    pub fn parse_with_overrides(text: &str, overrides: &[String]) -> Result<Config> {
        Config::parse_with(text, overrides, &ExternalFunctions::default())
    }

    /// [`Config::parse_with_overrides`] with functions defined outside sieve.
    pub fn parse_with(
        text: &str,
        overrides: &[String],
        functions: &ExternalFunctions,
    ) -> Result<Config> {
        let table = parse_toml(text).map_err(|m| Error::config("<config>", m))?;
        Config::from_table_with(table, overrides, functions)
    }

    /// A parsed TOML table plus `section.key=value` overrides, checked.
    pub fn from_table_with_overrides(table: toml::Table, overrides: &[String]) -> Result<Config> {
        Config::from_table_with(table, overrides, &ExternalFunctions::default())
    }

    /// [`Config::from_table_with_overrides`] with functions defined outside
    /// sieve.
    pub fn from_table_with(
        mut table: toml::Table,
        overrides: &[String],
        functions: &ExternalFunctions,
    ) -> Result<Config> {
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        Config::from_table(table, None, functions)
    }

    /// A checked config from its table, section by section (the order in
    /// which they are checked is the order mistakes are reported in).
    fn from_table(
        table: toml::Table,
        base: Option<&Path>,
        functions: &ExternalFunctions,
    ) -> Result<Config> {
        let raw = raw_config(&table)?;
        let b = raw.backtest;
        let costs = backtest_costs(&b)?;
        let s = raw.score;
        let score = score_section(&s)?;
        let resolve = |p: PathBuf| match base {
            Some(dir) if p.is_relative() && !dir.as_os_str().is_empty() => dir.join(p),
            _ => p,
        };
        let paths = data_paths(&raw.data, &resolve)?;
        let strategy_table = table.get("strategy").and_then(toml::Value::as_table);
        let weights = raw.portfolio.as_ref().and_then(|p| {
            p.weight.clone().map(|weight| WeightsSpec {
                weight,
                rebalance: p.rebalance.clone(),
                functions: functions.clone(),
            })
        });
        let weights_set = weights.is_some();
        let strategy = match &weights {
            Some(w) => weights_strategy(&raw.strategy, strategy_table, w)?,
            None => strategy_section(&raw.strategy, strategy_table, functions, b.max_leverage)?,
        };
        let timezone = timezone(&raw.data)?;
        let (frames, informative) = frames::frames(&raw.data, &resolve)?;
        let fill = match b.fill {
            Some(RawFill::Close) => Fill::Close,
            _ => Fill::NextOpen,
        };
        // A portfolio sizes its entries itself: `strategy.size` does not
        // apply.
        // (An entry order fills inside a bar, which a portfolio's signals
        // do not carry yet.)
        let refused = ["size", "entry_stop", "entry_limit", "max_entries"];
        let managed = refused
            .iter()
            .find(|k| strategy_table.is_some_and(|t| t.contains_key(**k)))
            .map(|k| format!("strategy.{k}"));
        let portfolio = portfolio_section(raw.portfolio.as_ref(), &b, &s, managed.as_deref())?;
        let conventions = conventions(&b, fill)?;
        // An empty path (`-O data.detail=`) is none.
        let detail = raw
            .data
            .detail
            .filter(|p| !p.as_os_str().is_empty())
            .map(resolve);
        if detail.is_some() && (!paths.is_empty() || portfolio.is_some()) {
            return Err(Error::config(
                key::DATA_DETAIL,
                "detail bars go under one instrument's bars (data.path); with several instruments (data.paths) it is not supported yet",
            ));
        }
        let pyramids = strategy_table.is_some_and(|t| t.contains_key("max_entries"));
        if pyramids && conventions.stop_from_close {
            return Err(Error::config(
                "strategy.max_entries",
                "an add's stop would be measured from its fill bar's close (backtest.stop_price_from = \"close\", as under conventions = \"vectorbt\") while the position's stop is checked on that bar; set backtest.stop_price_from = \"fill\" to pyramid",
            ));
        }
        if portfolio.is_some() && conventions != Conventions::SIEVE {
            let set = [
                "conventions",
                "stop_check",
                "exit_before_stop",
                "stop_bar_orders",
                "stop_priority",
                "stop_price_from",
                "stop_slippage",
            ]
            .into_iter()
            .find(|k| table.get("backtest").and_then(|b| b.get(*k)).is_some())
            .unwrap_or("conventions");
            return Err(Error::config(
                format!("backtest.{set}"),
                "a portfolio's stops follow sieve's own conventions; the peers' presets and switches apply to a single instrument: remove it",
            ));
        }
        Ok(Config {
            file: None,
            source: table,
            timezone,
            adjust: raw.data.adjust.unwrap_or(false),
            columns: raw.data.columns,
            data: raw.data.path.map(resolve),
            detail,
            paths,
            names: raw.data.names,
            frames,
            informative,
            strategy: strategy.name,
            rules: strategy.rules,
            managed_builtin: strategy.managed_builtin,
            constraints: raw.strategy.constraints,
            params: raw.strategy.params,
            rank_by: raw
                .portfolio
                .as_ref()
                .and_then(|p| p.rank_by.clone())
                .map(|r| (r, functions.clone())),
            weights,
            scoring: ScoringSpec {
                engine: EngineConfig {
                    fill,
                    conventions,
                    fee: costs.fee,
                    slippage: costs.slippage,
                    lot_size: costs.lot_size,
                    initial_cash: costs.initial_cash,
                    max_leverage: strategy.max_leverage,
                },
                direction: match b.direction {
                    Some(RawDirection::LongShort) => Direction::LongShort,
                    _ => Direction::Long,
                },
                annualization: costs.annualization,
                objective: score.objective,
                score_start: score.score_start,
                holdout_start: score.holdout_start,
                screen_window: match s.screen_window {
                    Some(RawScreenWindow::Full) => ScreenWindow::Full,
                    Some(RawScreenWindow::Score) | None => ScreenWindow::Score,
                },
                // A target-weight portfolio may never sell out (its
                // trades are round trips): no trade is needed to rank.
                min_trades: s.min_trades.unwrap_or(match weights_set {
                    true => 0,
                    false => 1,
                }),
                aggregation: score.aggregation,
                shares: match s.shares {
                    Some(RawShares::Each) => Shares::Each,
                    Some(RawShares::Combined) | None => Shares::Combined,
                },
                portfolio,
            },
        })
    }

    /// The strategy to run: the rules, else the built-in named (with its
    /// trade-management keys, if any).
    pub fn strategy(&self) -> Result<SharedStrategy> {
        match (&self.rules, &self.managed_builtin) {
            (Some(r), _) => Ok(SharedStrategy::Compiled(r.clone())),
            (None, Some(m)) => Ok(SharedStrategy::Compiled(m.clone())),
            (None, None) => crate::strategy::lookup(&self.strategy).map(SharedStrategy::Builtin),
        }
    }

    /// The trade-management keys as written (none for a plain built-in).
    pub fn management(&self) -> Option<&Management> {
        match (&self.rules, &self.managed_builtin) {
            (Some(r), _) => Some(r.management()),
            (None, Some(m)) => Some(m.management()),
            (None, None) => None,
        }
    }

    /// How the data files are read: `data.adjust`, `data.columns`, and
    /// the other columns the strategy's rules read.
    pub fn load_options(&self) -> crate::data::LoadOptions {
        let extra = match (&self.rules, &self.managed_builtin) {
            (Some(r), _) => r.data_columns(),
            (None, Some(m)) => m.data_columns(),
            (None, None) => Vec::new(),
        };
        crate::data::LoadOptions {
            adjust: self.adjust,
            columns: self.columns.clone(),
            extra: Some(extra),
        }
    }

    /// How runs of this config are scored.
    pub fn scoring(&self) -> ScoringSpec {
        self.scoring
    }

    /// The grid of `strategy` that `[strategy.params]` and
    /// `strategy.constraints` describe (the strategy's own where absent).
    pub fn space(&self, strategy: &dyn Strategy) -> Result<ParamSpace> {
        grid::space(strategy, self.params.as_ref(), self.constraints.as_deref())
    }

    /// What a run's identity hashes: the config without how the data is
    /// read (the data's own hash covers the bars), the stop rules a user may
    /// raise to continue a run (`optimize.iterations`, `time_budget_s`), and
    /// the sections computed afterwards or driving many runs (`[robust]`,
    /// `[walkforward]`); the strategy's name always (even defaulted).
    pub fn identity_text(&self) -> String {
        let mut source = self.source.clone();
        if let Some(toml::Value::Table(data)) = source.get_mut("data") {
            data.remove("path");
            data.remove("detail");
            data.remove("paths");
            data.remove("columns");
            // The data hash covers the informative instruments' bars.
            data.remove("informative");
        }
        // Of `[search]`, what decides the proposals, written the same
        // whether its defaults are spelled out or not (the grid: nothing;
        // `search.evaluations` is a stop rule).
        if let Some(toml::Value::Table(search)) = source.get_mut("search") {
            search.remove("evaluations");
            let method = search.get("method").and_then(toml::Value::as_str);
            if matches!(method, Some("random" | "evolve")) {
                search.entry("seed").or_insert(toml::Value::Integer(0));
                search
                    .entry("batch")
                    .or_insert(toml::Value::Integer(100_000));
            } else if search
                .get("method")
                .is_none_or(|m| m.as_str() == Some("grid"))
            {
                search.remove("method");
            }
        }
        if let Some(toml::Value::Table(optimize)) = source.get_mut("optimize") {
            optimize.remove("iterations");
            optimize.remove("time_budget_s");
        }
        // Of `[robust]`, only the selection rule: it decides each
        // iteration's best and the grid zoomed into (written the same
        // whether its defaults are spelled out or not).
        let robust = source.remove("robust");
        let plateau = robust
            .as_ref()
            .and_then(|r| r.get("select"))
            .and_then(toml::Value::as_str)
            == Some("plateau");
        if plateau {
            let how = robust
                .as_ref()
                .and_then(|r| r.get("neighbour_aggregate"))
                .and_then(toml::Value::as_str)
                .unwrap_or("mean")
                .to_string();
            let mut table = toml::Table::new();
            table.insert("select".into(), "plateau".into());
            table.insert("neighbour_aggregate".into(), how.into());
            source.insert("robust".into(), table.into());
        }
        source.remove("walkforward");
        // Where the screens run never changes what they find.
        source.remove("executor");
        // A table left empty is the same config as no table.
        source.retain(|_, v| !v.as_table().is_some_and(toml::Table::is_empty));
        format!(
            "strategy={}\n{}",
            self.strategy,
            toml::to_string(&source).unwrap_or_default()
        )
    }

    /// The keys (`backtest.fee`, …) whose values differ between `recorded`
    /// (a config as [`Config::canonical_toml`] wrote it) and this one, but
    /// for those a run may change (`data.path`, `optimize.iterations`,
    /// `optimize.time_budget_s`); empty when `recorded` does not parse.
    pub fn changed_keys(&self, recorded: &str) -> Vec<String> {
        let Ok(before) = recorded.parse::<toml::Table>() else {
            return Vec::new();
        };
        fn walk(prefix: &str, a: &toml::Table, b: &toml::Table, out: &mut Vec<String>) {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match (a.get(k), b.get(k)) {
                    (Some(toml::Value::Table(x)), Some(toml::Value::Table(y))) => {
                        walk(&path, x, y, out)
                    }
                    (x, y) if x != y => out.push(path),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk("", &before, &self.source, &mut out);
        out.retain(|k| {
            let free = matches!(
                k.as_str(),
                "data.path"
                    | "data.detail"
                    | "optimize.iterations"
                    | "optimize.time_budget_s"
                    | "search.evaluations"
            );
            // `[robust]` but the selection rule is not part of a run (a
            // walk-forward fold's windows are: `[walkforward]` stays).
            let not_a_run = k.starts_with("robust.")
                && !matches!(k.as_str(), "robust.select" | "robust.neighbour_aggregate");
            // Where the screens run is not part of a run either, nor where
            // the informative files are (the data hash covers their bars).
            let elsewhere =
                k.starts_with("executor.") || k == "executor" || k.starts_with("data.informative");
            !free && !not_a_run && !elsewhere
        });
        out
    }

    /// The merged TOML as text (stable key order), for hashing and run files.
    pub fn canonical_toml(&self) -> String {
        let mut source = self.source.clone();
        // The informative files as resolved (absolute): read back from a
        // run folder, with no config file to resolve them against.
        if !self.informative.is_empty() {
            let named: toml::Table = (self.informative.iter())
                .map(|(name, path)| {
                    let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                    let text = path.to_string_lossy().into_owned();
                    (name.clone(), toml::Value::String(text))
                })
                .collect();
            let data = source
                .entry("data")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(data) = data {
                data.insert("informative".into(), toml::Value::Table(named));
            }
        }
        toml::to_string(&source).unwrap_or_default()
    }
}

/// Parses TOML; a syntax error becomes one line naming its line and column.
fn parse_toml(text: &str) -> Result<toml::Table, String> {
    text.parse::<toml::Table>().map_err(|e| {
        let at = e.span().map(|s| s.start).unwrap_or(0).min(text.len());
        let before = &text[..at];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("line {line}, column {column}: {}", e.message().trim())
    })
}

/// A window boundary: a date or date-time, a share of the bars ("40%"), or
/// "none" (no boundary).
fn boundary_key(key: &str, v: Option<toml::Value>) -> Result<Option<Boundary>> {
    let text = match v {
        None => return Ok(None),
        Some(toml::Value::String(s)) => s,
        Some(toml::Value::Datetime(d)) => d.to_string(),
        Some(toml::Value::Integer(i)) => i.to_string(),
        Some(other) => {
            return Err(Error::config(
                key,
                format!("expected a date such as \"2019-01-01\", a share such as \"40%\", or \"none\"; got {other}"),
            ))
        }
    };
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    if let Some(number) = text.strip_suffix('%') {
        return match number.trim().parse::<f64>() {
            Ok(p) if (0.0..100.0).contains(&p) => Ok(Some(Boundary::Share(p / 100.0))),
            _ => Err(Error::config(
                key,
                format!(
                    "a share of the bars must be a number from 0% to below 100%, got \"{text}\""
                ),
            )),
        };
    }
    parse_time(text)
        .map(|t| Some(Boundary::Time(t)))
        .map_err(|m| Error::config(key, m))
}

/// Applies one `section.key=value` override to the table.
fn apply_override(table: &mut toml::Table, item: &str) -> Result<()> {
    let Some((path, value)) = item.split_once('=') else {
        return Err(Error::config(
            item,
            "an override must look like section.key=value",
        ));
    };
    let path = path.trim();
    let value = value.trim();
    // Parse the value as TOML ("0.001", "true", "[1, 2]"); otherwise a string.
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let keys: Vec<&str> = path.split('.').collect();
    if keys.iter().any(|k| k.is_empty()) {
        return Err(Error::config(
            path,
            "an override key must look like section.key",
        ));
    }
    let (last, parents) = keys.split_last().unwrap_or((&"", &[]));
    let mut cur = table;
    for k in parents {
        let entry = cur
            .entry(k.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = entry
            .as_table_mut()
            .ok_or_else(|| Error::config(path, format!("'{k}' is not a table")))?;
    }
    // One data source: `data.path` given on the command line replaces the
    // file's `data.paths` (and its names), and `data.paths` its `data.path`.
    match path {
        "data.path" => {
            cur.remove("paths");
            cur.remove("names");
        }
        key::DATA_PATHS => {
            cur.remove("path");
        }
        _ => {}
    }
    cur.insert(last.to_string(), parsed);
    Ok(())
}

/// The table as the raw sections: unknown keys and wrong types are errors
/// naming the key.
fn raw_config(table: &toml::Table) -> Result<RawConfig> {
    serde_path_to_error::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        Error::config(
            if key == "." {
                "<config>".to_string()
            } else {
                key
            },
            inner.message().to_string(),
        )
    })
}

/// `[backtest]`'s costs and cash, checked (`max_leverage` is checked with
/// the strategy's size).
struct BacktestCosts {
    fee: f64,
    slippage: f64,
    lot_size: f64,
    initial_cash: f64,
    annualization: Annualization,
}

fn backtest_costs(b: &RawBacktest) -> Result<BacktestCosts> {
    let non_negative = |key: &str, v: Option<f64>, default: f64| -> Result<f64> {
        let v = v.unwrap_or(default);
        if !v.is_finite() || v < 0.0 {
            return Err(Error::config(key, format!("must be a number ≥ 0, got {v}")));
        }
        Ok(v)
    };
    let fee = non_negative(key::BACKTEST_FEE, b.fee, 0.0)?;
    let slippage = non_negative(key::BACKTEST_SLIPPAGE, b.slippage, 0.0)?;
    if slippage >= 1.0 {
        return Err(Error::config(
            key::BACKTEST_SLIPPAGE,
            format!("must be below 1, got {slippage}"),
        ));
    }
    let lot_size = non_negative("backtest.lot_size", b.lot_size, 0.0)?;
    let initial_cash = non_negative(key::BACKTEST_INITIAL_CASH, b.initial_cash, 10_000.0)?;
    if initial_cash == 0.0 {
        return Err(Error::config(key::BACKTEST_INITIAL_CASH, "must be above 0"));
    }
    let annualization = match &b.annualization {
        None => Annualization::Auto,
        Some(toml::Value::String(s)) if s == "auto" => Annualization::Auto,
        Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
            Some(p) if p.is_finite() && p > 0.0 => Annualization::Periods(p),
            _ => {
                return Err(Error::config(
                    "backtest.annualization",
                    format!("must be \"auto\" or a positive number of periods per year, got {v}"),
                ))
            }
        },
    };
    Ok(BacktestCosts {
        fee,
        slippage,
        lot_size,
        initial_cash,
        annualization,
    })
}

/// `[score]`'s objective, window boundaries and aggregation, checked.
struct ScoreSection {
    objective: Objective,
    score_start: Option<Boundary>,
    holdout_start: Option<Boundary>,
    aggregation: Aggregation,
}

fn score_section(s: &RawScore) -> Result<ScoreSection> {
    let objective = match &s.objective {
        Some(o) => o.parse().map_err(|m| Error::config("score.objective", m))?,
        None => Objective::default(),
    };
    let score_start = boundary_key(key::SCORE_START, s.score_start.clone())?;
    let holdout_start = boundary_key(key::HOLDOUT_START, s.holdout_start.clone())?;
    let ordered = match (score_start, holdout_start) {
        (Some(Boundary::Time(a)), Some(Boundary::Time(h))) => a < h,
        (Some(Boundary::Share(a)), Some(Boundary::Share(h))) => a < h,
        _ => true, // a time against a share: checked on the data
    };
    if !ordered {
        return Err(Error::config(
            key::SCORE_START,
            "must be before score.holdout_start",
        ));
    }
    let aggregation = Aggregation {
        how: match &s.aggregate {
            Some(a) => a
                .parse()
                .map_err(|m| Error::config(key::SCORE_AGGREGATE, m))?,
            None => Aggregate::default(),
        },
        skip_undefined: s.aggregate_skip_undefined.unwrap_or(false),
    };
    Ok(ScoreSection {
        objective,
        score_start,
        holdout_start,
        aggregation,
    })
}

/// `[portfolio]`, checked against what a portfolio does not run yet.
fn portfolio_section(
    p: Option<&RawPortfolio>,
    b: &RawBacktest,
    s: &RawScore,
    managed: Option<&str>,
) -> Result<Option<PortfolioSpec>> {
    let Some(p) = p else { return Ok(None) };
    if let Some(size) = p.size {
        if !(size.is_finite() && size > 0.0 && size <= 1.0) {
            return Err(Error::config(
                key::PORTFOLIO_SIZE,
                format!("must be a fraction above 0 and at most 1, got {size}"),
            ));
        }
    }
    let max_positions = match p.max_positions {
        None => None,
        Some(m) if m >= 1 => Some(m as usize),
        Some(m) => {
            return Err(Error::config(
                key::PORTFOLIO_MAX_POSITIONS,
                format!("must be a whole number ≥ 1, got {m}"),
            ))
        }
    };
    if let Some(m) = p.max_exposure {
        if !(m.is_finite() && m > 0.0) {
            return Err(Error::config(
                key::PORTFOLIO_MAX_EXPOSURE,
                format!("must be a number above 0 (1: the whole portfolio), got {m}"),
            ));
        }
    }
    let refuse = |key: &str, why: &str| Err(Error::config(key, why.to_string()));
    if p.weight.is_some() {
        let sizing = [
            (p.size.is_some(), key::PORTFOLIO_SIZE),
            (p.size_of.is_some(), "portfolio.size_of"),
            (p.max_positions.is_some(), key::PORTFOLIO_MAX_POSITIONS),
            (p.rank_by.is_some(), key::PORTFOLIO_RANK_BY),
        ];
        if let Some((_, key)) = sizing.iter().find(|(set, _)| *set) {
            return refuse(
                key,
                &format!("{key} sizes and orders a signal portfolio's entries; with portfolio.weight each instrument is held at its weight (use max_exposure to cap their sum)"),
            );
        }
        if matches!(b.direction, Some(RawDirection::LongShort)) {
            return refuse(
                "backtest.direction",
                "a target-weight portfolio is long only (a weight below 0 sells what is held, as 0 does); \"long_short\" does not apply",
            );
        }
        if b.lot_size.is_some_and(|l| l > 0.0) {
            return refuse(
                "backtest.lot_size",
                "a target-weight portfolio buys fractional units; whole lots are not supported with portfolio.weight yet",
            );
        }
    } else if p.rebalance.is_some() {
        return refuse(
            key::PORTFOLIO_REBALANCE,
            "says when to rebalance to portfolio.weight, which is not set",
        );
    }
    if let Some(key) = managed {
        let why = match key {
            "strategy.size" => "a portfolio sizes its entries by portfolio.size (of its cash or equity); strategy.size does not apply",
            _ => "entry orders (entry_stop, entry_limit) are not supported under [portfolio] yet: a portfolio's entries fill at the open",
        };
        return refuse(key, why);
    }
    if b.max_leverage.is_some() {
        return refuse(
            "backtest.max_leverage",
            "a portfolio sizes its entries by portfolio.size and portfolio.max_exposure; backtest.max_leverage does not apply",
        );
    }
    for (set, key) in [
        (s.aggregate.is_some(), key::SCORE_AGGREGATE),
        (
            s.aggregate_skip_undefined.is_some(),
            "score.aggregate_skip_undefined",
        ),
    ] {
        if set {
            return refuse(
                key,
                &format!("under [portfolio] the objective is the portfolio's own (one account, one equity curve): remove {key}"),
            );
        }
    }
    if matches!(s.shares, Some(RawShares::Each)) {
        return refuse(
            key::SCORE_SHARES,
            "under [portfolio] the windows are on the portfolio's one timeline: score.shares = \"each\" does not apply",
        );
    }
    Ok(Some(PortfolioSpec {
        size: p.size,
        size_of: match p.size_of {
            Some(RawSizeOf::Cash) => SizeOf::Cash,
            Some(RawSizeOf::Equity) | None => SizeOf::Equity,
        },
        max_positions,
        max_exposure: p.max_exposure,
    }))
}

/// `data.paths` resolved against the config's folder, checked with
/// `data.path` and `data.names`.
fn data_paths(data: &RawData, resolve: &dyn Fn(PathBuf) -> PathBuf) -> Result<Vec<PathBuf>> {
    let paths_given = data.paths.is_some();
    let paths: Vec<PathBuf> = match &data.paths {
        None => Vec::new(),
        Some(RawPaths::One(p)) => vec![resolve(p.clone())],
        Some(RawPaths::Many(v)) => v.iter().cloned().map(resolve).collect(),
    };
    if data.path.is_some() && !paths.is_empty() {
        return Err(Error::config(
            key::DATA_PATHS,
            "data.path and data.paths are both set; use data.path for one file, data.paths for several",
        ));
    }
    if paths_given && paths.is_empty() {
        return Err(Error::config(
            key::DATA_PATHS,
            "is empty; list at least one file",
        ));
    }
    if let Some(names) = &data.names {
        if paths.is_empty() {
            return Err(Error::config(
                key::DATA_NAMES,
                "names the files of data.paths, which is not set",
            ));
        }
        if let Some(bad) = names.iter().find(|n| !crate::market::is_instrument_name(n)) {
            return Err(Error::config(
                key::DATA_NAMES,
                format!("\"{bad}\" is not a usable name: use letters, digits, '_', '-' or '.', starting with a letter or digit"),
            ));
        }
    }
    Ok(paths)
}

/// `[strategy]` compiled: the rule strategy or the built-in (with its
/// trade-management keys), checked against `backtest.max_leverage`.
struct StrategySection {
    name: String,
    rules: Option<Arc<RuleStrategy>>,
    managed_builtin: Option<Arc<ManagedBuiltin>>,
    max_leverage: f64,
}

/// The numbers the trade-management keys read, by the rule Python's signal
/// arrays are checked by ([`KeySpec::check`](crate::rules::KeySpec::check)):
/// a constant, or each value of the grid of a key that is one parameter
/// (`stop_loss = "sl"`). Other expressions are read per trade (a size above
/// the cap is capped, documented). Called after a built-in has refused its
/// own parameters in its keys, the clearer error.
fn check_key_numbers(raw: &RawStrategy, management: &Management, max_leverage: f64) -> Result<()> {
    for (spec, value) in management.entries() {
        let text = match value {
            KeyValue::Number(v) => {
                spec.check(*v, max_leverage)
                    .map_err(|m| Error::config(key::strategy(spec.name), m))?;
                continue;
            }
            KeyValue::Expr(t) => t.trim(),
        };
        if let Ok(v) = text.parse::<f64>() {
            spec.check(v, max_leverage)
                .map_err(|m| Error::config(key::strategy(spec.name), m))?;
        }
        let Some(written) = raw.params.as_ref().and_then(|p| p.get(text)) else {
            continue;
        };
        if let Ok(axis) = grid::axis_values(&key::param(text), text, written) {
            for v in axis.values {
                spec.check(v, max_leverage).map_err(|m| {
                    Error::config(
                        key::param(text),
                        format!("{v}, read by strategy.{} = \"{text}\": {m}", spec.name),
                    )
                })?;
            }
        }
    }
    Ok(())
}

/// The largest `backtest.max_leverage`.
const MAX_LEVERAGE: f64 = 1000.0;

fn strategy_section(
    raw: &RawStrategy,
    table: Option<&toml::Table>,
    functions: &ExternalFunctions,
    max_leverage: Option<f64>,
) -> Result<StrategySection> {
    let rules = match raw.rules(table)? {
        Some(source) => Some(Arc::new(RuleStrategy::compile(RuleSource {
            functions: functions.clone(),
            ..source
        })?)),
        None => None,
    };
    // A rule strategy has read its keys already.
    let management = match &rules {
        Some(r) => r.management().clone(),
        None => management(table)?,
    };
    let max_leverage = max_leverage.unwrap_or(1.0);
    if !(max_leverage.is_finite() && max_leverage >= 1.0) {
        return Err(Error::config(
            "backtest.max_leverage",
            format!("must be a number ≥ 1, got {max_leverage} (a trade commits less than all equity with strategy.size)"),
        ));
    }
    // No broker lends more; beyond it a size's units can overflow (a size
    // of 1e308 took no trade, in silence).
    if max_leverage > MAX_LEVERAGE {
        return Err(Error::config(
            "backtest.max_leverage",
            format!("must be at most {MAX_LEVERAGE}, got {max_leverage} (no broker lends more than 1000 times equity)"),
        ));
    }
    // A built-in with trade-management keys: the keys read the
    // `[strategy.params]` entries the built-in does not have.
    let builtin_name = || {
        raw.name
            .clone()
            .unwrap_or_else(|| EXAMPLE_STRATEGY.to_string())
    };
    let managed_builtin = match (&rules, management.any()) {
        (None, true) => {
            let builtin = crate::strategy::lookup(&builtin_name())?;
            let own = |n: &str| builtin.params().iter().any(|p| p.name == n);
            let extra = raw.params.as_ref().map_or_else(Vec::new, |table| {
                let rest: toml::Table = table
                    .iter()
                    .filter(|(n, _)| !own(n))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                grid::rule_axes(&rest)
            });
            Some(Arc::new(ManagedBuiltin::new(
                builtin,
                management.clone(),
                extra,
            )?))
        }
        _ => None,
    };
    check_key_numbers(raw, &management, max_leverage)?;
    let name = match &rules {
        Some(r) => r.name().to_string(),
        None => {
            let name = builtin_name();
            crate::strategy::lookup(&name)?;
            name
        }
    };
    Ok(StrategySection {
        name,
        rules,
        managed_builtin,
        max_leverage,
    })
}

/// The strategy of a target-weight portfolio: its parameters, read by
/// `portfolio.weight` and `portfolio.rebalance` (checked with them here);
/// no rules of its own.
fn weights_strategy(
    raw: &RawStrategy,
    table: Option<&toml::Table>,
    weights: &WeightsSpec,
) -> Result<StrategySection> {
    let rule_keys = [
        ("entry", raw.entry.is_some()),
        ("exit", raw.exit.is_some()),
        ("short_entry", raw.short_entry.is_some()),
        ("short_exit", raw.short_exit.is_some()),
        ("trailing_stop", raw.trailing_stop.is_some()),
        ("define", raw.define.is_some()),
    ];
    let managed = management(table)?;
    let first_managed = managed.entries().next().map(|(spec, _)| spec.name);
    let refused = rule_keys
        .iter()
        .find(|(_, set)| *set)
        .map(|(k, _)| *k)
        .or(first_managed);
    if let Some(k) = refused {
        return Err(Error::config(
            key::strategy(k),
            "a target-weight portfolio (portfolio.weight) holds each instrument at its weight: rules, definitions, stops and sizes of the strategy do not apply; [strategy] gives the parameters",
        ));
    }
    let mut read_also = vec![(
        key::PORTFOLIO_WEIGHT.to_string(),
        weights.weight.clone(),
        true,
    )];
    if let Some(r) = &weights.rebalance {
        read_also.push((key::PORTFOLIO_REBALANCE.to_string(), r.clone(), false));
    }
    let source = RuleSource {
        name: raw.name.clone().unwrap_or_else(|| "weights".to_string()),
        entry: "false".to_string(),
        exit: "false".to_string(),
        params: match &raw.params {
            Some(table) => grid::rule_axes(table),
            None => Vec::new(),
        },
        functions: weights.functions.clone(),
        read_also,
        ..RuleSource::default()
    };
    let rules = RuleStrategy::compile(source)?;
    Ok(StrategySection {
        name: rules.name().to_string(),
        rules: Some(Arc::new(rules)),
        managed_builtin: None,
        max_leverage: 1.0,
    })
}

/// `data.timezone`, a time zone's IANA name.
fn timezone(data: &RawData) -> Result<Option<chrono_tz::Tz>> {
    match &data.timezone {
        Some(name) => Ok(Some(name.parse::<chrono_tz::Tz>().map_err(|_| {
            Error::config(
                "data.timezone",
                format!("'{name}' is not a time zone name; use an IANA name such as \"America/New_York\", \"Europe/London\" or \"UTC\""),
            )
        })?)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of the trade-management table is a `[strategy]` key: a
    /// number stays that number, an expression its text, for a built-in
    /// and a rule strategy alike; a NaN is refused naming the key.
    #[test]
    fn every_trade_management_key_is_read_from_the_table() {
        for key in KEYS {
            // A value every key accepts (a stop is below 1, bars whole).
            let (number, text) = match key.kind {
                crate::rules::Kind::Bars | crate::rules::Kind::Count => (1.0, "1"),
                _ => (0.5, "0.5"),
            };
            for (value, want) in [
                (text.to_string(), KeyValue::Number(number)),
                (
                    format!("\"{text} + 0\""),
                    KeyValue::Expr(format!("{text} + 0")),
                ),
            ] {
                for strategy in [
                    "name = \"sma_cross\"",
                    "entry = \"close > open\"\nexit = \"close < open\"",
                ] {
                    // (`order_bars` is an entry order's: it needs one.)
                    let order = match key.name {
                        "order_bars" => "entry_stop = 1\n",
                        _ => "",
                    };
                    let text = format!("[strategy]\n{strategy}\n{order}{} = {value}\n", key.name);
                    let config = Config::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                    let management = match (&config.rules, &config.managed_builtin) {
                        (Some(r), _) => r.management().clone(),
                        (None, Some(b)) => b.management().clone(),
                        (None, None) => panic!("{text}: no trade management"),
                    };
                    let got: Vec<_> = management
                        .entries()
                        .filter(|(k, _)| k.name == key.name || order.is_empty())
                        .map(|(k, v)| (k.name, v.clone()))
                        .collect();
                    assert_eq!(got, vec![(key.name, want.clone())], "{text}");
                }
            }
            let nan = format!("[strategy]\nname = \"sma_cross\"\n{} = nan\n", key.name);
            let e = Config::parse(&nan).unwrap_err().to_string();
            assert!(
                e.contains(&format!("strategy.{}", key.name)) && e.contains("finite"),
                "{e}"
            );
        }
    }

    #[test]
    fn the_selection_rule_is_part_of_a_run_and_other_robust_keys_are_not() {
        let id = |robust: &str| Config::parse(robust).unwrap().identity_text();
        let none = id("");
        assert_eq!(id("[robust]\nselect = \"argmax\"\npbo_blocks = 8\n"), none);
        let plateau = id("[robust]\nselect = \"plateau\"\n");
        assert_ne!(plateau, none);
        assert_eq!(
            id("[robust]\nselect = \"plateau\"\nneighbour_aggregate = \"mean\"\n"),
            plateau
        );
        assert_ne!(
            id("[robust]\nselect = \"plateau\"\nneighbour_aggregate = \"min\"\n"),
            plateau
        );
        // Named as the change when a run folder refuses it.
        let c = Config::parse("[robust]\nselect = \"plateau\"\npbo_blocks = 8\n").unwrap();
        assert_eq!(
            c.changed_keys("[robust]\npbo_blocks = 10\n"),
            ["robust.select"]
        );
    }

    /// Where the screens run is not part of a run: a run started on one
    /// machine continues on a cluster and back.
    #[test]
    fn the_executor_is_not_part_of_a_run() {
        let local = Config::parse("").unwrap();
        let slurm =
            Config::parse("[executor]\nkind = \"slurm\"\nshards = 8\npartition = \"short\"\n")
                .unwrap();
        assert_eq!(slurm.identity_text(), local.identity_text());
        assert!(slurm.changed_keys(&local.canonical_toml()).is_empty());
        assert!(local.changed_keys(&slurm.canonical_toml()).is_empty());
        let other =
            Config::parse("[executor]\nkind = \"slurm\"\n[backtest]\nfee = 0.01\n").unwrap();
        let recorded = Config::parse("[backtest]\nfee = 0.02\n").unwrap();
        assert_eq!(
            other.changed_keys(&recorded.canonical_toml()),
            ["backtest.fee"]
        );
    }

    /// One data source: an override of either key replaces the other,
    /// while a file that sets both is refused (docs/config.md).
    #[test]
    fn a_data_override_replaces_the_other_data_key() {
        let file = "[data]\npaths = [\"a.csv\", \"b.csv\"]\nnames = [\"a\", \"b\"]\n";
        let one = Config::parse_with_overrides(file, &["data.path=c.csv".into()]).unwrap();
        assert_eq!(one.data, Some(PathBuf::from("c.csv")));
        assert!(one.paths.is_empty() && one.names.is_none());
        let several = Config::parse_with_overrides(
            "[data]\npath = \"c.csv\"\n",
            &["data.paths=[\"a.csv\", \"b.csv\"]".into()],
        )
        .unwrap();
        assert_eq!(several.data, None);
        assert_eq!(several.paths.len(), 2);
        let both = "[data]\npath = \"c.csv\"\npaths = [\"a.csv\"]\n";
        assert!(Config::parse(both).is_err());
    }

    #[test]
    fn defaults_match_design() {
        let c = Config::parse("").unwrap();
        assert_eq!(c.scoring.engine, EngineConfig::default());
        assert_eq!(c.scoring.direction, Direction::Long);
        assert_eq!(c.scoring.annualization, Annualization::Auto);
        assert_eq!(c.scoring.objective, Objective::Calmar);
        assert_eq!(
            (c.scoring.score_start, c.scoring.holdout_start),
            (None, None)
        );
        assert_eq!(c.scoring.screen_window, ScreenWindow::Score);
        assert_eq!(c.scoring.min_trades, 1);
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = Config::parse("[backtest]\nfees = 0.1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("fees"), "{e}");
        let e = Config::parse("[scoring]\n").unwrap_err().to_string();
        assert!(e.contains("scoring"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        for (text, key) in [
            ("[backtest]\nfee = -1\n", "backtest.fee"),
            ("[backtest]\nfill = \"tomorrow\"\n", "tomorrow"),
            (
                "[backtest]\nannualization = \"weekly\"\n",
                "backtest.annualization",
            ),
            ("[score]\nobjective = \"luck\"\n", "score.objective"),
            ("[score]\nscore_start = \"someday\"\n", "score.score_start"),
            (
                "[score]\nscore_start = \"2020-01-01\"\nholdout_start = \"2019-01-01\"\n",
                "score.score_start",
            ),
            ("[strategy]\nname = \"magic\"\n", "strategy.name"),
            ("[backtest]\nfee = \"high\"\n", "fee"),
        ] {
            let e = Config::parse(text).unwrap_err().to_string();
            assert!(e.contains(key), "{text:?} gave {e}");
        }
    }

    #[test]
    fn overrides_win_over_the_file() {
        let dir = std::env::temp_dir().join(format!("sieve-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.toml");
        std::fs::write(&path, "[backtest]\nfee = 0.01\n[data]\npath = \"p.csv\"\n").unwrap();
        let c = Config::load(
            Some(&path),
            &["backtest.fee=0.002".into(), "backtest.fill=close".into()],
        )
        .unwrap();
        assert_eq!(c.scoring.engine.fee, 0.002);
        assert_eq!(c.scoring.engine.fill, Fill::Close);
        assert_eq!(c.data, Some(dir.join("p.csv")));
        std::fs::remove_dir_all(&dir).ok();
    }
}
