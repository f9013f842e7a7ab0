use std::ops::{ControlFlow, Range};

use sieve_core::grid::{GridIndex, ParamSpace};
use sieve_core::market::Market;
use sieve_core::strategy::Strategy;
use sieve_core::Result;

use crate::stats::ObjectiveStats;
use crate::topk::{Scored, TopK};

/// One screening task: a slice of a grid, scored on the instruments of a market.
pub struct ScreenJob<'a> {
    /// The instruments, each with its bars and scoring, and how their
    /// objectives combine.
    pub market: &'a Market,
    pub strategy: &'a dyn Strategy,
    pub space: &'a ParamSpace,
    /// Grid indices to screen (a shard, or the whole grid).
    pub range: Range<GridIndex>,
    /// K: how many of the best to keep.
    pub top: usize,
    /// Worker threads; 0 = all cores.
    pub threads: usize,
    /// Continue from a checkpoint instead of `range.start`.
    pub resume: Option<Checkpoint>,
    /// Bytes the shared indicator series of the whole grid may take; past
    /// it they are computed per batch of combinations instead.
    pub series_budget: u64,
}

/// The default of [`ScreenJob::series_budget`]: the memory for the shared
/// indicator series of a screen
/// (`sweep.series_memory_mb` = 1024): 1 GiB.
pub const SERIES_BUDGET: u64 = 1 << 30;

/// How a grid's shared series are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesPlan {
    /// Distinct series the whole grid reads (before their inputs).
    pub series: usize,
    pub bytes: u64,
    /// Over the budget: computed per batch of combinations, in grid order.
    pub grouped: bool,
}

impl SeriesPlan {
    /// Every instrument holds its own copy of each series.
    pub fn of(strategy: &dyn Strategy, space: &ParamSpace, market: &Market, budget: u64) -> Self {
        let series = strategy.space_indicators(space).len();
        let bars: u64 = market.instruments.iter().map(|i| i.bars.len() as u64).sum();
        // Each value as f64, and its 16-bit code where the screen reads
        // that too.
        let per_value = if strategy.coded_series() { 10 } else { 8 };
        let bytes = series as u64 * bars * per_value;
        SeriesPlan {
            series,
            bytes,
            grouped: bytes > budget,
        }
    }

    /// One line for `-v`.
    pub fn describe(&self, budget: u64) -> String {
        let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
        if self.grouped {
            format!(
                "shared series: {} ({:.0} MiB) exceed sweep.series_memory_mb = {:.0}: computed per batch of combinations, in grid order",
                self.series,
                mb(self.bytes),
                mb(budget)
            )
        } else {
            format!(
                "shared series: {} ({:.1} MiB), computed once for the whole grid",
                self.series,
                mb(self.bytes)
            )
        }
    }
}

impl ScreenJob<'_> {
    /// Where a backend starts: the checkpoint to resume from, or the
    /// beginning of the range — (next index, top K so far, objective and
    /// Sharpe stats so far).
    pub fn start(&self) -> (GridIndex, TopK, ObjectiveStats, ObjectiveStats) {
        let mut top = TopK::new(self.top);
        match &self.resume {
            Some(c) => {
                c.top.iter().for_each(|s| top.push(*s));
                (c.next, top, c.stats, c.sharpe)
            }
            None => (
                self.range.start,
                top,
                ObjectiveStats::default(),
                ObjectiveStats::default(),
            ),
        }
    }
}

/// Where a screen stands: everything needed to continue it later.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The first grid index not yet screened.
    pub next: GridIndex,
    /// The best so far, in no particular order (sort with
    /// [`Scored::rank_cmp`] for best first).
    pub top: Vec<Scored>,
    pub stats: ObjectiveStats,
    pub sharpe: ObjectiveStats,
}

/// A backend scores every constraint-satisfying combination in a job's range.
///
/// `on_batch` is called after each batch with the state so far (progress
/// bars, checkpoints); `Break` from it stops the screen there
/// ([`Screened::Stopped`], resumable from that checkpoint), an error stops
/// it and is returned.
/// Results are identical whatever the thread count, and identical whether a
/// screen ran in one go or was resumed from any checkpoint it reported.
pub trait ScreenBackend: Send + Sync {
    fn name(&self) -> &'static str;

    /// What runs the work (for `-v`): e.g. the GPU adapter's name and type.
    fn describe(&self) -> String {
        self.name().to_string()
    }

    fn screen(
        &self,
        job: &ScreenJob<'_>,
        on_batch: &mut dyn FnMut(&Checkpoint) -> Result<ControlFlow<()>>,
    ) -> Result<Screened>;
}

/// How a screen ended: its whole range screened, or stopped by `on_batch`
/// after the batch of the last checkpoint it was shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Screened {
    Done(Screen),
    Stopped,
}

impl Screened {
    /// The screen, when it ran to the end.
    pub fn done(self) -> Option<Screen> {
        match self {
            Screened::Done(s) => Some(s),
            Screened::Stopped => None,
        }
    }
}

/// What a screen returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Screen {
    /// Best first, at most K.
    pub top: Vec<Scored>,
    pub stats: ObjectiveStats,
    /// The per-period score-window Sharpe of every combination (the
    /// Deflated Sharpe's trial variance); empty where a backend does not
    /// compute it.
    pub sharpe: ObjectiveStats,
}
