//! [`RuleStrategy`] as a [`Strategy`]: what the screen, the exact engine
//! and the GPU generator ask of any strategy.

use super::compiled::RuleStrategy;
use super::eval::Machine;
use super::wgsl;
use crate::data::Bars;
use crate::engine::{EngineConfig, Sink};
use crate::error::Result;
use crate::grid::ParamSpace;
use crate::indicators::{Indicator, IndicatorSet, SeriesSource};
use crate::simd::Level;
use crate::strategy::{
    Changes, Direction, GpuKernel, LaneBuffers, ParamSpec, Strategy, TradeManagement,
};

impl Strategy for RuleStrategy {
    fn name(&self) -> &str {
        &self.name
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    fn params(&self) -> &[ParamSpec] {
        &self.params
    }

    fn gpu_kernel(&self) -> GpuKernel<'_> {
        match self.rule_kernel() {
            Ok(kernel) => GpuKernel::Generated(Box::new(wgsl::RuleGpu {
                strategy: self,
                kernel,
            })),
            Err(construct) => GpuKernel::Unsupported(construct),
        }
    }

    fn describe(&self, space: &ParamSpace) -> Option<String> {
        Some(self.describe_rules(space))
    }

    fn indicators(&self, params: &[f64], out: &mut Vec<Indicator>) {
        self.rules.indicators(params, out);
    }

    fn series(&self) -> &dyn SeriesSource {
        &self.rules
    }

    fn check_data(&self, bars: &Bars) -> Result<()> {
        self.rules.check_data(bars)
    }

    fn data_columns(&self) -> Vec<String> {
        self.rules
            .graph
            .user
            .iter()
            .map(|u| u.name.clone())
            .collect()
    }

    fn warmup(&self, params: &[f64]) -> usize {
        self.rules.warmup(params)
    }

    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        self.rules.space_indicators(space)
    }

    /// In lanes where the lane engine runs halves of four lanes (AVX2),
    /// each skipping where its lanes are all flat: measured there
    /// (interleaved runs) `sma_rules` over all pairs 1.27×, bench_cli.py's
    /// MACD grid 1.07×, large grids of the RSI, Bollinger and
    /// weighted-score examples 1.12×, 1.01×, 1.04×. AVX-512 runs all
    /// eight lanes in step (they skip only where all eight are flat), not
    /// measured for rules: one at a time there, as before.
    fn lanes_pay(&self, _params: &[&[f64]]) -> bool {
        self.rules.cross_pair.is_some()
            || self.rules.gated.is_some()
            || Level::best() == Level::Avx2
    }

    fn screen_path(&self) -> String {
        if self.trade_management() == TradeManagement::Full {
            // Said after "one combination at a time: trade management".
            return match &self.rules.gated {
                Some(g) => format!(
                    "the rules read only where their {} crossing(s) of fewer parameters hold, the engine only on the bars it works on",
                    g.gate_count()
                ),
                None => "the rule program and the engine bar by bar".into(),
            };
        }
        if self.rules.cross_pair.is_some() && !self.rules.pair_filters.is_empty() {
            "lanes: the built-in crosses' scan (the rules are one crossing pair of shared averages), their other terms read at the crossings only".into()
        } else if self.rules.cross_pair.is_some() {
            "lanes: the built-in crosses' scan (the rules are one crossing pair of shared averages)"
                .into()
        } else if let Some(g) = &self.rules.gated {
            format!(
                "lanes: the rules read only where their crossings hold ({} crossing(s) of fewer parameters, their bars found once per setting)",
                g.gate_count()
            )
        } else if Level::best() == Level::Avx2 {
            "lanes: the rule program bar by bar".into()
        } else {
            "one combination at a time: the rule program bar by bar (its lanes pay on AVX2 only)"
                .into()
        }
    }

    /// A crossing pair's scan compares the 16-bit codes first.
    fn coded_series(&self) -> bool {
        self.rules.cross_pair.is_some()
    }

    fn positions(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        out: &mut [i8],
    ) {
        self.rules
            .positions(bars, indicators, params, direction, out);
    }

    fn trade_management(&self) -> TradeManagement {
        let r = &self.rules.roots;
        if r.managed.any() || self.rules.plan.reads_state() {
            TradeManagement::Full
        } else if r.stop.is_some() {
            TradeManagement::ExitReasons
        } else {
            TradeManagement::None
        }
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
        // The state machine decides on each close from the position the
        // engine holds (flat after a stop, a target, `max_bars`).
        if self
            .rules
            .manage_gated(bars, indicators, params, direction, cfg, end, sink)
        {
            return;
        }
        let mut machine = Machine::default();
        self.rules.manage(
            bars,
            indicators,
            params,
            direction,
            cfg,
            end,
            &mut machine,
            sink,
        );
    }

    /// Straight to changes: the state machine writes only the bars where
    /// the position moves (no position per bar written and scanned).
    /// Measured against positions turned into changes (interleaved, AVX2):
    /// `sma_rules` 1.20×, `rsi_rules` 1.23×, `bollinger` 1.15×, the MACD
    /// and weighted-score grids within the noise (0.97–1.05×).
    fn lane_changes(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[&[f64]],
        direction: Direction,
        end: usize,
        level: Level,
        buffers: &mut LaneBuffers,
        out: &mut [Changes],
    ) {
        if let Some((a, b)) = self.rules.cross_pair {
            // The built-in crosses' scan (measured: the rule sma_cross at
            // the built-in's speed, see BENCHMARKS.md).
            debug_assert!(params.len() <= crate::simd::LANES);
            let mut pairs = [(Indicator::Sma(1), Indicator::Sma(1)); crate::simd::LANES];
            for (pair, p) in pairs.iter_mut().zip(params) {
                *pair = (self.rules.key(a, p), self.rules.key(b, p));
            }
            let job = crate::strategy::CrossJob {
                bars,
                indicators,
                pairs: &pairs[..params.len().min(pairs.len())],
                direction,
                end,
            };
            job.changes(level, out);
            if !self.rules.pair_filters.is_empty() {
                for (p, changes) in params.iter().zip(out.iter_mut()) {
                    self.rules.filter_pair(
                        bars,
                        indicators,
                        p,
                        direction,
                        changes,
                        &mut buffers.events,
                    );
                }
            }
            return;
        }
        let end = end.min(bars.len());
        for (p, changes) in params.iter().zip(out.iter_mut()) {
            changes.reset(end);
            self.rules
                .hold(bars, indicators, p, direction, end, changes);
        }
    }
}
