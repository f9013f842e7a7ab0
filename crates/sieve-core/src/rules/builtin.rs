//! A built-in strategy with trade-management keys (`stop_loss`, `size`, …):
//! the built-in's targets decide — each change of its target is an entry,
//! exit or reversal, so after a stop it waits for its next change — and
//! the keys, compiled as rules over parameters of their own, manage each
//! trade in the same engine as rule strategies.

use super::compiled::RuleStrategy;
use super::decide::TargetEvents;
use super::keys::{KeyValue, Management};
use super::source::{RuleAxis, RuleSource};
use crate::data::Bars;
use crate::engine::{EngineConfig, Sink};
use crate::error::{Error, Result};
use crate::grid::ParamSpace;
use crate::indicators::{Indicator, IndicatorSet, SeriesSource};
use crate::strategy::{Direction, GpuKernel, ParamSpec, Strategy, TradeManagement};

/// A built-in and its trade-management keys. Its parameters are the
/// built-in's, then those the keys read (`[strategy.params]` entries that
/// are not the built-in's).
pub struct ManagedBuiltin {
    builtin: &'static dyn Strategy,
    /// The keys, as a rule strategy that never signals.
    keys: RuleStrategy,
    params: Vec<ParamSpec>,
    summary: String,
}

impl ManagedBuiltin {
    /// The trade-management keys as written.
    pub fn management(&self) -> &Management {
        self.keys.management()
    }

    /// `builtin` with `management`; `extra` are the `[strategy.params]`
    /// entries that are not `builtin`'s (the keys' parameters).
    pub fn new(
        builtin: &'static dyn Strategy,
        management: Management,
        extra: Vec<(String, RuleAxis)>,
    ) -> Result<ManagedBuiltin> {
        // A key naming one of the built-in's own parameters: say that, not
        // "unknown name" (the name is in [strategy.params]).
        for (spec, value) in management.entries() {
            let KeyValue::Expr(text) = value else {
                continue;
            };
            let own = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|w| builtin.params().iter().any(|p| p.name == *w));
            if let Some(name) = own {
                return Err(Error::config(
                    crate::key::strategy(spec.name),
                    format!(
                        "'{name}' is {}'s own parameter, which a trade-management key cannot read; give the key a parameter of its own in [strategy.params], e.g. k = 0.05 and {} = \"k\"",
                        builtin.name(),
                        spec.name
                    ),
                ));
            }
        }
        let keys = RuleStrategy::compile(RuleSource {
            // Not a built-in's name (rule strategies may not take one).
            name: format!("{} trade management", builtin.name()),
            entry: "false".into(),
            exit: "false".into(),
            management,
            params: extra,
            ..RuleSource::default()
        })
        .map_err(|e| match e {
            // A key naming one of the built-in's parameters: say so.
            Error::Rule { key, message, .. } if message.contains("unknown name") => {
                Error::config(
                    key,
                    format!(
                        "{message}\n(with a built-in strategy the trade-management keys read their own [strategy.params] entries, not {}'s parameters)",
                        builtin.name()
                    ),
                )
            }
            other => other,
        })?;
        let params = builtin
            .params()
            .iter()
            .cloned()
            .chain(keys.params().iter().cloned())
            .collect();
        let summary = format!(
            "{} with trade management: {}",
            builtin.summary(),
            keys.rules
                .source
                .management
                .entries()
                .map(|(k, v)| format!("{} = \"{}\"", k.name, v.text()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(ManagedBuiltin {
            builtin,
            keys,
            params,
            summary,
        })
    }

    /// The built-in's parameters and the keys' of one set.
    fn split<'p>(&self, params: &'p [f64]) -> (&'p [f64], &'p [f64]) {
        params.split_at(self.builtin.params().len().min(params.len()))
    }
}

impl Strategy for ManagedBuiltin {
    fn name(&self) -> &str {
        self.builtin.name()
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    fn params(&self) -> &[ParamSpec] {
        &self.params
    }

    fn default_constraints(&self) -> &'static [&'static str] {
        self.builtin.default_constraints()
    }

    fn indicators(&self, params: &[f64], out: &mut Vec<Indicator>) {
        let (own, keys) = self.split(params);
        self.builtin.indicators(own, out);
        self.keys.rules.indicators(keys, out);
    }

    /// The keys' rules compute the built-in's indicators as built-ins
    /// compute them, and their own shared series.
    fn series(&self) -> &dyn SeriesSource {
        &self.keys.rules
    }

    fn check_data(&self, bars: &Bars) -> Result<()> {
        self.builtin.check_data(bars)?;
        self.keys.check_data(bars)
    }

    fn data_columns(&self) -> Vec<String> {
        self.keys.data_columns()
    }

    fn warmup(&self, params: &[f64]) -> usize {
        self.builtin.warmup(self.split(params).0)
    }

    fn describe(&self, space: &ParamSpace) -> Option<String> {
        let mut out = format!("{}\n    {}\n", self.name(), self.summary);
        out.push_str("    parameters:\n");
        for p in &self.params {
            let values = space.axes.iter().find(|a| a.name == p.name).map_or_else(
                || format!("fixed {}", crate::format::float(p.default)),
                |a| format!("{} values", a.values.len()),
            );
            out.push_str(&format!("        {:<12} {values}\n", p.name));
        }
        Some(out)
    }

    /// The generated kernels are for rules; the built-ins' own kernels
    /// know no trade management.
    fn gpu_kernel(&self) -> GpuKernel<'_> {
        GpuKernel::Unsupported("trade-management keys with a built-in strategy".into())
    }

    fn coded_series(&self) -> bool {
        self.builtin.coded_series()
    }

    fn trade_management(&self) -> TradeManagement {
        TradeManagement::Full
    }

    fn screen_path(&self) -> String {
        "the built-in's targets read as events, the engine bar by bar".into()
    }

    fn simulate(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        cfg: &EngineConfig,
        end: usize,
        sink: &mut dyn Sink,
    ) {
        let (own, keys) = self.split(params);
        let end = end.min(bars.len());
        let mut targets = vec![0i8; end];
        self.builtin
            .positions(bars, indicators, own, direction, &mut targets);
        let mut events = TargetEvents::new(&targets);
        self.keys.rules.manage(
            bars,
            indicators,
            keys,
            direction,
            cfg,
            end,
            &mut events,
            sink,
        );
    }

    /// The built-in's targets (what it would hold without the keys).
    fn positions(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        out: &mut [i8],
    ) {
        self.builtin
            .positions(bars, indicators, self.split(params).0, direction, out);
    }
}

impl std::fmt::Debug for ManagedBuiltin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ManagedBuiltin({})", self.summary)
    }
}

impl PartialEq for ManagedBuiltin {
    fn eq(&self, other: &Self) -> bool {
        self.builtin.name() == other.builtin.name() && self.keys == other.keys
    }
}
