//! Running the rules over bars: the positions they hold (from the gates'
//! bars where the rules have gates, else bar by bar) and the managed
//! engine driven by their decisions.

use super::compiled::Rules;
use super::decide::{decide, Decider};
use super::eval::{Machine, SUB};
use crate::data::Bars;
use crate::engine::{EngineConfig, Managed, Sink, TradeState};
use crate::indicators::IndicatorSet;
use crate::strategy::{Direction, PerBar, Targets};

impl Rules {
    pub(super) fn positions(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        out: &mut [i8],
    ) {
        let n = out.len().min(bars.len());
        self.hold(bars, indicators, params, direction, n, &mut PerBar(out));
        out[n..].fill(0);
    }

    /// The positions of `params` on bars `..n` (at most the bars), into
    /// `out` (the trade's state read as flat throughout: a strategy that
    /// reads it runs through [`Rules::manage`]): from the gates' bars where
    /// the rules have gates, else bar by bar.
    pub(super) fn hold(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        out: &mut impl Targets,
    ) {
        if !self.hold_gated(bars, indicators, params, direction, n, out) {
            self.hold_by_bar(bars, indicators, params, direction, n, out);
        }
    }

    /// [`Rules::hold`] bar by bar.
    pub(super) fn hold_by_bar(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        out: &mut impl Targets,
    ) {
        let mut machine = Machine::default();
        self.blocks(bars, indicators, params, direction, n, |block| {
            block.project(0, TradeState::FLAT);
            machine.run(&block.signals(), block.start, out);
        });
    }

    /// The engine over bars `..n` with these rules' trade-management keys
    /// (evaluated at `params`), `decider` deciding on each close.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn manage(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        cfg: &EngineConfig,
        n: usize,
        decider: &mut impl Decider,
        sink: &mut dyn Sink,
    ) {
        let n = n.min(bars.len());
        // Only trade management liquidates (a trailing stop alone trades
        // as the plain engine does).
        let liquidates = self.roots.managed.any() || self.plan.reads_state();
        let mut engine = Managed::over_bars(cfg, bars, n, liquidates);
        engine.set_moving_stop(self.roots.managed.stop_level.is_some());
        let m = &self.roots.managed;
        engine.set_entry_orders(m.entry_stop.is_some() || m.entry_limit.is_some());
        let reads_state = self.plan.reads_state();
        // Bars from here on pass untouched (streamed when something moves).
        let mut quiet_from: Option<usize> = None;
        self.blocks(bars, indicators, params, direction, n, |block| {
            let start = block.start;
            let mut shown = engine.trade_state();
            block.project(0, shown);
            let mut b = 0;
            while b < block.len {
                let e = (b + SUB).min(block.len);
                let (from, to) = (start + b, start + e);
                if reads_state {
                    let now = engine.trade_state();
                    if !now.same(&shown) {
                        block.project(b, now);
                        shown = now;
                    }
                }
                if engine.quiet(from, to)
                    && (engine.done() || decider.quiet(&block.signals(), start, b, e))
                {
                    quiet_from.get_or_insert(from);
                    b = e;
                    continue;
                }
                if let Some(q) = quiet_from.take() {
                    engine.pass(q, from, sink);
                }
                if !reads_state {
                    // The signals and keys stand for the whole stretch.
                    let (signals, keys) = (block.signals(), block.keys());
                    for t in b..e {
                        if let Some(held) = engine.before_close(start + t, sink) {
                            decider.set_position(held);
                        }
                        decide(&mut engine, decider, &signals, &keys, start, t, sink);
                    }
                } else {
                    for t in b..e {
                        if let Some(held) = engine.before_close(start + t, sink) {
                            decider.set_position(held);
                        }
                        let now = engine.trade_state();
                        if !now.same(&shown) {
                            block.project(t, now);
                            shown = now;
                        }
                        let (signals, keys) = (block.signals(), block.keys());
                        decide(&mut engine, decider, &signals, &keys, start, t, sink);
                    }
                }
                b = e;
            }
        });
        if let Some(q) = quiet_from {
            engine.pass(q, n, sink);
        }
        engine.finish(n, sink);
    }
}
