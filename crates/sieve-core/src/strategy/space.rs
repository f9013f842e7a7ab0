//! The indicator settings a whole grid needs, gathered without
//! materialising the grid.

use crate::grid::ParamSpace;
use crate::indicators::Indicator;
use crate::param::ParamKind;
use crate::strategy::Strategy;

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
    let mut keys = Keys::default();
    space.for_each_setting(&int_params, |params| keys.add(strategy, params));
    keys.finish()
}

/// Indicator keys gathered from many parameter sets: a set, so memory is
/// the distinct keys however many sets name them.
#[derive(Default)]
struct Keys {
    /// A fast hash: a grid names its keys millions of times.
    seen: rustc_hash::FxHashSet<Indicator>,
    scratch: Vec<Indicator>,
}

impl Keys {
    fn add(&mut self, strategy: &(impl Strategy + ?Sized), params: &[f64]) {
        self.scratch.clear();
        strategy.indicators(params, &mut self.scratch);
        self.seen.extend(self.scratch.iter().copied());
    }

    /// The distinct keys, sorted.
    fn finish(self) -> Vec<Indicator> {
        let mut keys: Vec<Indicator> = self.seen.into_iter().collect();
        keys.sort_unstable();
        keys
    }
}

/// The indicator settings needed by every parameter set in `sets`.
pub fn indicators_for_sets<'p>(
    strategy: &(impl Strategy + ?Sized),
    sets: impl IntoIterator<Item = &'p [f64]>,
) -> Vec<Indicator> {
    let mut keys = Keys::default();
    for p in sets {
        keys.add(strategy, p);
    }
    keys.finish()
}
