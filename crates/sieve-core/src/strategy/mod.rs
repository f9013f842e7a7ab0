//! Strategies: bars + one parameter set → a target position per bar
//! (−1, 0, +1), decided on each bar's close from data up to that bar.
//!
//! A strategy reads shared inputs ([`Bars`], the [`IndicatorSet`]) and one
//! parameter set (`&[f64]`, in the order of [`Strategy::params`]); it cannot
//! reach into the engine. Adding one is a file here plus a line in
//! [`registry`].

mod activation;
mod changes;
mod cross;
mod donchian_breakout;
mod ema_cross;
mod rsi_reversion;
mod sma_cross;

use crate::data::Bars;
use crate::error::{Error, Result};
use crate::grid::ParamSpace;
use crate::indicators::{Builtin, Indicator, IndicatorSet, SeriesSource};
use crate::simd::Level;

pub use activation::Activation;
pub use changes::{Changes, Cursor};
pub(crate) use changes::{PerBar, Targets};
pub use cross::AverageCross;
pub use donchian_breakout::DonchianBreakout;
pub use ema_cross::EMA_CROSS;
pub use rsi_reversion::RsiReversion;
pub use sma_cross::SMA_CROSS;

/// Whether a parameter takes whole numbers (lengths) or any real value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Int,
    Float,
}

/// One parameter of a strategy: its name, kind, allowed range, default value
/// and default grid (`start..=stop` by `step`).
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub grid: (f64, f64, f64),
    pub doc: &'static str,
}

impl ParamSpec {
    /// Checks one value; the error names the parameter and the allowed range.
    pub fn check(&self, value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(Error::param(
                self.name,
                format!("{value} is not a finite number"),
            ));
        }
        if self.kind == ParamKind::Int && value.fract() != 0.0 {
            return Err(Error::param(
                self.name,
                format!("{value} is not a whole number"),
            ));
        }
        if value < self.min || value > self.max {
            return Err(Error::param(
                self.name,
                format!(
                    "{value} is outside the allowed range {}..={}",
                    self.min, self.max
                ),
            ));
        }
        Ok(())
    }
}

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

pub trait Strategy: Send + Sync {
    /// The CLI / config name.
    fn name(&self) -> &'static str;

    /// One line for `sieve strategies`.
    fn summary(&self) -> &'static str;

    fn params(&self) -> &'static [ParamSpec];

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

    /// The first bar at which `params` can take a position.
    fn warmup(&self, params: &[f64]) -> usize {
        warmup(&indicators_for(self, params))
    }

    /// Every indicator setting any combination of `space` needs.
    fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        crate::evaluate::indicators_for_space(self, space)
    }

    /// The compiled rules, for a strategy defined by rules in the config.
    fn as_rules(&self) -> Option<&crate::rules::RuleStrategy> {
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

/// Every built-in strategy, in the order `sieve strategies` lists them.
pub fn registry() -> &'static [&'static dyn Strategy] {
    static REGISTRY: [&dyn Strategy; 5] = [
        &SMA_CROSS,
        &EMA_CROSS,
        &RsiReversion,
        &DonchianBreakout,
        &Activation,
    ];
    &REGISTRY
}

/// The strategy called `name`, or an error listing the known ones.
pub fn lookup(name: &str) -> Result<&'static dyn Strategy> {
    registry()
        .iter()
        .copied()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            let known: Vec<_> = registry().iter().map(|s| s.name()).collect();
            Error::config(
                "strategy.name",
                format!("unknown strategy '{name}'; known: {}", known.join(", ")),
            )
        })
}

/// Position of the parameter called `name`.
pub fn param_index(strategy: &dyn Strategy, name: &str) -> Result<usize> {
    strategy
        .params()
        .iter()
        .position(|p| p.name == name)
        .ok_or_else(|| {
            let known: Vec<_> = strategy.params().iter().map(|p| p.name).collect();
            Error::param(
                name,
                format!(
                    "'{}' has no such parameter; its parameters are {}",
                    strategy.name(),
                    known.join(", ")
                ),
            )
        })
}

/// The default parameter values.
pub fn default_params(strategy: &dyn Strategy) -> Vec<f64> {
    strategy.params().iter().map(|p| p.default).collect()
}

/// Checks a whole parameter set against the strategy's specs.
pub fn check_params(strategy: &dyn Strategy, params: &[f64]) -> Result<()> {
    let specs = strategy.params();
    if params.len() != specs.len() {
        return Err(Error::Invalid(format!(
            "'{}' takes {} parameters, got {}",
            strategy.name(),
            specs.len(),
            params.len()
        )));
    }
    specs.iter().zip(params).try_for_each(|(s, &v)| s.check(v))
}

/// The indicators `params` needs, as a fresh list.
pub fn indicators_for(strategy: &(impl Strategy + ?Sized), params: &[f64]) -> Vec<Indicator> {
    let mut v = Vec::new();
    strategy.indicators(params, &mut v);
    v
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
