//! What a screen is to its backends: the [`Batch`] of grid indices, the
//! [`ScreenJob`], how its shared series are held, checkpoints, the
//! [`ScreenBackend`] trait and the [`Screen`] it returns.

use std::ops::{ControlFlow, Range};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sieve_core::grid::{GridIndex, ParamSpace};
use sieve_core::market::Market;
use sieve_core::strategy::Strategy;
use sieve_core::Result;

use crate::stats::StatsTree;
use crate::topk::{Scored, TopK};

/// The grid indices a screen covers: a contiguous range (a grid, or a
/// shard of it) or a list (a search's proposal), ascending without repeats.
///
/// A screen walks its batch by *position*: a range's positions are its grid
/// indices themselves (so shards and checkpoints of a range are what they
/// always were), a list's are places in the list (a slice of it keeps
/// them, so a shard's chunks are the whole list's). [`Checkpoint::next`]
/// is a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    Range(Range<GridIndex>),
    Indices(Arc<[GridIndex]>, Range<u64>),
}

impl Batch {
    /// Every index of a grid of `size` combinations.
    pub fn whole(size: u64) -> Batch {
        Batch::Range(0..size)
    }

    /// A list of grid indices, sorted and without repeats; an index at or
    /// past `size` (the grid's) is an error.
    pub fn of_indices(indices: Vec<GridIndex>, size: u64) -> Result<Batch> {
        let list: Arc<[GridIndex]> = sorted_indices(indices, size)?.into();
        let len = list.len() as u64;
        Ok(Batch::Indices(list, 0..len))
    }

    /// The positions a screen walks.
    pub fn positions(&self) -> Range<u64> {
        match self {
            Batch::Range(r) => r.clone(),
            Batch::Indices(_, positions) => positions.clone(),
        }
    }

    /// The grid index at a position.
    #[inline]
    pub fn index_at(&self, position: u64) -> GridIndex {
        match self {
            Batch::Range(_) => position,
            Batch::Indices(list, _) => list[position as usize],
        }
    }

    /// Combinations in the batch (before constraints).
    pub fn len(&self) -> u64 {
        let p = self.positions();
        p.end - p.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The part of the batch at `positions` (a sub-range of
    /// [`Batch::positions`]): the same kind of batch, so that a shard of a
    /// range is a range.
    pub fn slice(&self, positions: Range<u64>) -> Batch {
        match self {
            Batch::Range(_) => Batch::Range(positions),
            Batch::Indices(list, _) => Batch::Indices(list.clone(), positions),
        }
    }
}

/// Grid indices sorted, without repeats, checked to lie in a grid of
/// `size` combinations: what a list [`Batch`] holds.
pub fn sorted_indices(mut indices: Vec<GridIndex>, size: u64) -> Result<Vec<GridIndex>> {
    indices.sort_unstable();
    indices.dedup();
    if let Some(&last) = indices.last() {
        if last >= size {
            return Err(sieve_core::Error::Invalid(format!(
                "grid index {last} is outside the grid (0..{size})"
            )));
        }
    }
    Ok(indices)
}

/// One screening task: a slice of a grid, scored on the instruments of a market.
pub struct ScreenJob<'a> {
    /// The instruments, each with its bars and scoring, and how their
    /// objectives combine.
    pub market: &'a Market,
    pub strategy: &'a dyn Strategy,
    pub space: &'a ParamSpace,
    /// Grid indices to screen: a range (the whole grid, a shard) or a
    /// list (a search's proposal).
    pub batch: Batch,
    /// K: how many of the best to keep.
    pub top: usize,
    /// Worker threads; 0 = all cores.
    pub threads: usize,
    /// Continue from a checkpoint instead of the batch's first position.
    pub resume: Option<Checkpoint>,
    /// Bytes the shared indicator series of the whole grid may take; past
    /// it they are computed per batch of combinations instead.
    pub series_budget: u64,
    /// Once set, the screen stops inside the batch it is in: that batch is
    /// dropped, and the state after the last whole batch is shown to
    /// `on_batch` once more (whose stop it should see) before the screen
    /// ends [`Screened::Stopped`]. A batch of a long screen can take
    /// seconds; this keeps a stop within a fraction of one.
    pub stop: Option<&'a AtomicBool>,
}

impl ScreenJob<'_> {
    /// Whether [`ScreenJob::stop`] is set.
    pub fn stopping(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }
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
        let bars: u64 = market.traded().iter().map(|i| i.bars.len() as u64).sum();
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

    /// How many distinct series fit in `budget` (at least 1: a
    /// combination's own series are computed whatever the budget).
    pub fn fitting(&self, budget: u64) -> usize {
        match self.series {
            0 => usize::MAX,
            n => {
                let each = (self.bytes / n as u64).max(1);
                usize::try_from(budget / each).unwrap_or(usize::MAX).max(1)
            }
        }
    }

    /// One line for `-v`.
    pub fn describe(&self, budget: u64) -> String {
        let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
        if self.grouped {
            format!(
                "shared series: {} ({:.0} MiB) exceed sweep.series_memory_mb = {:.0}: computed for groups of combinations in grid order, at most {} series at a time",
                self.series,
                mb(self.bytes),
                mb(budget),
                self.fitting(budget)
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
    /// batch's first position with nothing screened.
    pub fn start(&self) -> Running {
        let mut top = TopK::new(self.top);
        match &self.resume {
            Some(c) => {
                c.top.iter().for_each(|s| top.push(*s));
                Running {
                    next: c.next,
                    top,
                    stats: c.stats.clone(),
                    sharpe: c.sharpe.clone(),
                }
            }
            None => Running {
                next: self.batch.positions().start,
                top,
                stats: StatsTree::default(),
                sharpe: StatsTree::default(),
            },
        }
    }
}

/// A screen in progress, as every backend keeps it: the next position,
/// the top K so far, the objective's and the Sharpe's statistics so far.
pub struct Running {
    pub next: u64,
    pub top: TopK,
    pub stats: StatsTree,
    pub sharpe: StatsTree,
}

impl Running {
    /// Shows `on_batch` where the screen stands after a batch; whether it
    /// said to stop there.
    pub fn report(
        &self,
        on_batch: &mut dyn FnMut(&Checkpoint) -> Result<ControlFlow<()>>,
    ) -> Result<bool> {
        let flow = on_batch(&Checkpoint {
            next: self.next,
            top: self.top.to_unsorted(),
            stats: self.stats.clone(),
            sharpe: self.sharpe.clone(),
        })?;
        Ok(flow.is_break())
    }

    /// The screen of the whole batch.
    pub fn done(self) -> Screened {
        Screened::Done(Screen {
            top: self.top.into_sorted(),
            stats: self.stats,
            sharpe: self.sharpe,
        })
    }
}

/// Where a screen stands: everything needed to continue it later.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The first position of the batch not yet screened (for a range, a
    /// grid index).
    pub next: u64,
    /// The best so far, in no particular order (sort with
    /// [`Scored::rank_cmp`] for best first).
    pub top: Vec<Scored>,
    pub stats: StatsTree,
    pub sharpe: StatsTree,
}

/// A backend scores every constraint-satisfying combination in a job's batch.
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

    /// Why this backend hands `job` to the CPU backend rather than run it
    /// itself, for the user; `None` when it runs it. The backend says
    /// nothing itself: whoever runs the screen shows this first (the
    /// optimize loop through its observer).
    fn fallback(&self, _job: &ScreenJob<'_>) -> Option<String> {
        None
    }

    fn screen(
        &self,
        job: &ScreenJob<'_>,
        on_batch: &mut dyn FnMut(&Checkpoint) -> Result<ControlFlow<()>>,
    ) -> Result<Screened>;
}

/// How a screen ended: its whole batch screened, or stopped by `on_batch`
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
    /// The objective's statistics, chunk by chunk ([`StatsTree::total`]).
    pub stats: StatsTree,
    /// The per-period score-window Sharpe of every combination (the
    /// Deflated Sharpe's trial variance); empty where a backend does not
    /// compute it.
    pub sharpe: StatsTree,
}
