//! Strategies: bars + one parameter set → a target position per bar
//! (−1, 0, +1), decided on each bar's close from data up to that bar.
//!
//! A strategy reads shared inputs ([`Bars`], the [`IndicatorSet`]) and one
//! parameter set (`&[f64]`, in the order of [`Strategy::params`]); it cannot
//! reach into the engine. Adding one is a file here plus a line in
//! [`registry`].

mod activation;
mod average_cross;
mod changes;
mod crossing;
mod donchian_breakout;
mod ema_cross;
mod gpu;
mod registry;
mod rsi_reversion;
mod sma_cross;
mod space;

use std::ops::Deref;
use std::sync::Arc;

use crate::data::Bars;
use crate::engine::{self, EngineConfig, Sink};
use crate::error::Result;
use crate::grid::ParamSpace;
use crate::indicators::{Builtin, Indicator, IndicatorSet, SeriesSource};
use crate::simd::Level;

pub use activation::Activation;
pub use average_cross::AverageCross;
pub use changes::{Changes, Cursor};
pub(crate) use changes::{PerBar, Targets};
pub(crate) use crossing::CrossJob;
pub use donchian_breakout::DonchianBreakout;
pub use ema_cross::EMA_CROSS;
pub use gpu::{GeneratedKernel, GpuKernel};
pub use registry::{lookup, registry};
pub use rsi_reversion::RsiReversion;
pub use sma_cross::SMA_CROSS;

pub use crate::param::{ParamKind, ParamSpec};

/// Long only, or long and short: with `LongShort` a strategy's exit becomes a
/// reversal into a short and its entry a reversal back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    #[default]
    Long,
    LongShort,
}

impl Direction {
    /// The next position given this bar's entry and exit signals.
    #[inline(always)]
    pub fn step(self, position: i8, enter: bool, exit: bool) -> i8 {
        match self {
            Direction::Long => {
                if position == 0 && enter {
                    1
                } else if position == 1 && exit {
                    0
                } else {
                    position
                }
            }
            Direction::LongShort => {
                if enter && position != 1 {
                    1
                } else if exit && position != -1 {
                    -1
                } else {
                    position
                }
            }
        }
    }
}

/// What a strategy needs of the engine besides filling its targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TradeManagement {
    /// Targets only: the plain engine fills them.
    #[default]
    None,
    /// Targets only, but the strategy knows why it leaves a position (a
    /// trailing stop): exact backtests run through [`Strategy::simulate`]
    /// for the exit reasons; the screen may fill its targets (the same
    /// numbers).
    ExitReasons,
    /// Stops, targets, `max_bars` or sizes: what the engine does changes
    /// what the strategy decides, so every run goes through
    /// [`Strategy::simulate`].
    Full,
}

pub trait Strategy: Send + Sync {
    /// The CLI / config name.
    fn name(&self) -> &str;

    /// One line for `sieve strategies`.
    fn summary(&self) -> &str;

    fn params(&self) -> &[ParamSpec];

    /// Constraints applied to the default grid (e.g. `fast < slow`).
    fn default_constraints(&self) -> &'static [&'static str] {
        &[]
    }

    /// Appends every indicator setting `params` reads.
    fn indicators(&self, params: &[f64], out: &mut Vec<Indicator>);

    /// How the series in [`Strategy::indicators`] are computed (the
    /// built-in indicators unless the strategy brings its own).
    fn series(&self) -> &dyn SeriesSource {
        &Builtin
    }

    /// Refuses data the strategy cannot run on (a column it reads is missing).
    fn check_data(&self, _bars: &Bars) -> Result<()> {
        Ok(())
    }

    /// The data's extra columns ([`Bars::extra`]) the strategy reads; a
    /// study keeps these and drops the rest.
    fn data_columns(&self) -> Vec<String> {
        Vec::new()
    }

    /// The first bar at which `params` can take a position.
    fn warmup(&self, params: &[f64]) -> usize {
        warmup(&indicators_for(self, params))
    }

    /// Every indicator setting any combination of `space` needs.
    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        indicators_for_space(self, space)
    }

    /// The kernel the GPU screen runs for this strategy (none by default).
    fn gpu_kernel(&self) -> GpuKernel<'_> {
        GpuKernel::None
    }

    /// More about the strategy for `sieve strategies --config` (a rule
    /// strategy's rules, definitions and shared series), over `space`.
    fn describe(&self, _space: &ParamSpace) -> Option<String> {
        None
    }

    /// Whether its screen also reads each series' codes
    /// ([`IndicatorSet::with_codes`]: 2 more bytes per value, which the
    /// series budget counts).
    fn coded_series(&self) -> bool {
        false
    }

    /// Keys of the targets of up to [`crate::lanes::LANES`] parameter sets
    /// over the first `end` bars (`out[i]` for `params[i]`), for the
    /// screen's memo: sets with equal keys must have equal targets on
    /// these bars (a weight of 0 makes a length irrelevant, say). With
    /// them the screen skips a batch whose scores it already has, before
    /// finding its targets. `false`: no keys (the default).
    fn lane_keys(
        &self,
        _bars: &Bars,
        _indicators: &IndicatorSet,
        _params: &[&[f64]],
        _end: usize,
        _out: &mut [Vec<u64>],
    ) -> bool {
        false
    }

    /// Whether the screen should run these parameter sets of this strategy
    /// in lanes ([`crate::lanes`]). Lanes mark every bar where one of them
    /// (on AVX2: one of a half's four) holds a position, where one
    /// combination at a time skips each flat stretch in O(1): they pay
    /// where the lanes' targets come cheaply and hold alike (measured on
    /// AVX2: `sma_cross` 2.1×, `activation` 1.4× — both find their changes
    /// in vector code; rule strategies 1.01–1.27×).
    fn lanes_pay(&self, _params: &[&[f64]]) -> bool {
        false
    }

    /// How the CPU screen finds this strategy's positions, in words (what
    /// `-v` says): [`crate::lanes::screen_path`] adds the windows and the
    /// vector level.
    fn screen_path(&self) -> String {
        "one combination at a time (no lane code for this strategy)".into()
    }

    /// The targets of up to [`crate::lanes::LANES`] parameter sets over
    /// the first `end` bars, as changes (`out[i]` for `params[i]`): what the
    /// screen's lanes read. The default runs [`Strategy::positions`] for
    /// each (in `buffers`); a strategy that finds its changes
    /// faster overrides it (with vector code up to `level`, one this CPU
    /// runs), and must give exactly what the default gives.
    #[allow(clippy::too_many_arguments)]
    fn lane_changes(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[&[f64]],
        direction: Direction,
        end: usize,
        _level: Level,
        buffers: &mut LaneBuffers,
        out: &mut [Changes],
    ) {
        changes_by_positions(self, bars, indicators, params, direction, end, buffers, out);
    }

    /// What the strategy needs of the engine (nothing but fills by
    /// default).
    fn trade_management(&self) -> TradeManagement {
        TradeManagement::None
    }

    /// The exact engine over bars `..end` for `params`, streamed to
    /// `sink`, with the trade management the strategy carries. The
    /// default fills [`Strategy::positions`].
    #[allow(clippy::too_many_arguments)]
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
        let mut positions = vec![0; end.min(bars.len())];
        self.positions(bars, indicators, params, direction, &mut positions);
        engine::simulate(bars, &positions, cfg, end, sink);
    }

    /// Writes the target position of each of the first `out.len()` bars
    /// (at most all of them) into `out`. Holds 0 until every indicator it
    /// reads is defined.
    fn positions(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        out: &mut [i8],
    );
}

/// A strategy a run holds: a built-in (static) or one compiled from the
/// config (shared, and dropped when the last run holding it ends).
#[derive(Clone)]
pub enum SharedStrategy {
    Builtin(&'static dyn Strategy),
    Compiled(Arc<dyn Strategy>),
}

impl Deref for SharedStrategy {
    type Target = dyn Strategy;

    fn deref(&self) -> &(dyn Strategy + 'static) {
        match self {
            SharedStrategy::Builtin(s) => *s,
            SharedStrategy::Compiled(s) => s.as_ref(),
        }
    }
}

impl std::fmt::Debug for SharedStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedStrategy({})", self.name())
    }
}

/// Position of the parameter called `name`.
pub fn param_index(strategy: &dyn Strategy, name: &str) -> Result<usize> {
    crate::param::param_index(strategy.name(), strategy.params(), name)
}

/// The default parameter values.
pub fn default_params(strategy: &dyn Strategy) -> Vec<f64> {
    crate::param::default_params(strategy.params())
}

/// Checks a whole parameter set against the strategy's specs.
pub fn check_params(strategy: &dyn Strategy, params: &[f64]) -> Result<()> {
    crate::param::check_params(strategy.name(), strategy.params(), params)
}

/// The indicators `params` needs, as a fresh list.
pub fn indicators_for(strategy: &(impl Strategy + ?Sized), params: &[f64]) -> Vec<Indicator> {
    let mut v = Vec::new();
    strategy.indicators(params, &mut v);
    v
}

/// Every indicator setting any combination of `space` needs.
///
/// Strategies derive indicators from their whole-number (length) parameters
/// only, so this walks the product of the int axes, not the whole grid.
pub fn indicators_for_space(
    strategy: &(impl Strategy + ?Sized),
    space: &ParamSpace,
) -> Vec<Indicator> {
    let int_params: Vec<usize> = space
        .axes
        .iter()
        .map(|a| a.param)
        .filter(|&p| strategy.params()[p].kind == ParamKind::Int)
        .collect();
    let mut keys = space::Keys::default();
    space.for_each_setting(&int_params, |params| {
        keys.add(|out| strategy.indicators(params, out))
    });
    keys.finish()
}

/// The indicator settings needed by every parameter set in `sets`.
pub fn indicators_for_sets<'p>(
    strategy: &(impl Strategy + ?Sized),
    sets: impl IntoIterator<Item = &'p [f64]>,
) -> Vec<Indicator> {
    let mut keys = space::Keys::default();
    for params in sets {
        keys.add(|out| strategy.indicators(params, out));
    }
    keys.finish()
}

/// First bar at which every listed indicator is defined.
pub fn warmup(indicators: &[Indicator]) -> usize {
    indicators
        .iter()
        .map(|i| i.first_valid())
        .max()
        .unwrap_or(0)
}

/// Buffers that [`Strategy::lane_changes`] reuses from call to call.
#[derive(Debug, Default)]
pub struct LaneBuffers {
    /// One parameter set's target on each bar.
    pub positions: Vec<i8>,
    /// Bytes per bar of vector code (`activation`: each lane's moves).
    pub marks: Vec<u8>,
    /// A series shared by the lanes (`activation`: the score).
    pub values: Vec<f64>,
    /// Bits per bar and lane (`activation`: where each lane moves).
    pub moves: Vec<u64>,
    /// Changes of one lane being rewritten (a crossing pair's filtered).
    pub events: Vec<(usize, i8)>,
}

/// The default [`Strategy::lane_changes`]: each set's
/// [`Strategy::positions`] (held in `buffers`), as changes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn changes_by_positions<S: Strategy + ?Sized>(
    strategy: &S,
    bars: &Bars,
    indicators: &IndicatorSet,
    params: &[&[f64]],
    direction: Direction,
    end: usize,
    buffers: &mut LaneBuffers,
    out: &mut [Changes],
) {
    let end = end.min(bars.len());
    let positions = &mut buffers.positions;
    for (p, changes) in params.iter().zip(out.iter_mut()) {
        positions.resize(end, 0);
        strategy.positions(bars, indicators, p, direction, positions);
        changes.set_from(positions);
    }
}

/// A length parameter as `usize` (validated whole and ≥ 1 by [`ParamSpec`]).
#[inline]
pub(crate) fn len_param(v: f64) -> usize {
    v as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_long_only_ignores_exit_when_flat() {
        let d = Direction::Long;
        assert_eq!(d.step(0, false, true), 0);
        assert_eq!(d.step(0, true, false), 1);
        assert_eq!(d.step(1, false, true), 0);
        assert_eq!(d.step(1, false, false), 1);
    }

    #[test]
    fn step_long_short_reverses() {
        let d = Direction::LongShort;
        assert_eq!(d.step(1, false, true), -1);
        assert_eq!(d.step(-1, true, false), 1);
        assert_eq!(d.step(0, false, true), -1);
        assert_eq!(d.step(-1, false, false), -1);
    }

    #[test]
    fn every_default_is_allowed_and_grid_inside_range() {
        for s in registry() {
            check_params(*s, &default_params(*s)).unwrap();
            for p in s.params() {
                let (start, stop, step) = p.grid;
                assert!(
                    start >= p.min && stop <= p.max && step > 0.0,
                    "{}.{}",
                    s.name(),
                    p.name
                );
            }
        }
    }
}
