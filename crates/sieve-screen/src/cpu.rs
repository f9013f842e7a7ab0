//! The CPU backend: rayon over fixed chunks of the index range.
//!
//! Chunks are aligned to multiples of [`CHUNK`] in grid-index space, each
//! scored by one worker into its own top K and objective stats; after every
//! batch of chunks the results are folded in chunk order. Nothing depends on
//! which thread ran which chunk, so any thread count — and any resume point,
//! which is always a chunk boundary — gives identical results.

use rayon::prelude::*;
use sieve_core::evaluate::{Evaluator, ScreenScore};
use sieve_core::grid::ParamSpace;
use sieve_core::indicators::IndicatorSet;
use sieve_core::lanes::{screen_all_lanes, LaneScratch, LANES};
use sieve_core::metrics::Aggregation;
use sieve_core::Result;

use crate::backend::{Checkpoint, ScreenBackend, ScreenJob, SeriesPlan};
use crate::{ObjectiveStats, Scored, Screen, TopK};

/// Combinations per chunk: small enough to balance threads, large enough
/// that per-chunk bookkeeping vanishes next to the backtests.
pub const CHUNK: u64 = 256;
/// Chunks per batch per thread (progress/checkpoint granularity).
const CHUNKS_PER_THREAD: u64 = 16;

pub struct CpuBackend;

impl ScreenBackend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn screen(
        &self,
        job: &ScreenJob<'_>,
        on_batch: &mut dyn FnMut(&Checkpoint) -> Result<()>,
    ) -> Result<Screen> {
        let pool = crate::thread_pool(job.threads)?;
        screen_in_pool(&pool, job, on_batch)
    }
}

fn screen_in_pool(
    pool: &rayon::ThreadPool,
    job: &ScreenJob<'_>,
    on_batch: &mut dyn FnMut(&Checkpoint) -> Result<()>,
) -> Result<Screen> {
    let grouped = SeriesPlan::of(job.strategy, job.space, job.market, job.series_budget).grouped;
    let instruments = &job.market.instruments;
    let whole: Option<Vec<IndicatorSet>> = (!grouped).then(|| {
        let keys = job.strategy.space_indicators(job.space);
        pool.install(|| {
            instruments
                .iter()
                .map(|i| IndicatorSet::build_for(&i.bars, job.strategy.series(), keys.clone()))
                .collect()
        })
    });
    let (mut next, mut top, mut stats, mut sharpe) = job.start();
    let end = job.range.end;
    let batch = CHUNK * CHUNKS_PER_THREAD * pool.current_num_threads() as u64;
    let n_params = job.strategy.params().len();
    while next < end {
        let batch_end = end.min((next / CHUNK) * CHUNK + batch);
        // Chunk-aligned sub-ranges of [next, batch_end).
        let mut chunks = Vec::new();
        let mut lo = next;
        while lo < batch_end {
            let hi = batch_end.min((lo / CHUNK + 1) * CHUNK);
            chunks.push(lo..hi);
            lo = hi;
        }
        let batch_sets;
        let sets = match &whole {
            Some(sets) => sets,
            None => {
                batch_sets = pool.install(|| batch_series(job, next..batch_end));
                &batch_sets
            }
        };
        let evals: Vec<Evaluator<'_>> = instruments
            .iter()
            .zip(sets)
            .map(|(i, indicators)| Evaluator {
                bars: &i.bars,
                strategy: job.strategy,
                indicators,
                scoring: &i.scoring,
            })
            .collect();
        let aggregation = &job.market.aggregation;
        let results: Vec<(ObjectiveStats, ObjectiveStats, TopK)> = pool.install(|| {
            chunks
                .into_par_iter()
                .map_init(
                    || (LaneGroup::new(n_params), LaneScratch::default()),
                    |(group, scratch), range| {
                        let mut chunk = ChunkResult::new(job.top);
                        for index in range {
                            if group.add(job.space, index) == LANES {
                                group.screen(&evals, aggregation, scratch, &mut chunk);
                            }
                        }
                        group.screen(&evals, aggregation, scratch, &mut chunk);
                        (chunk.stats, chunk.sharpe, chunk.top)
                    },
                )
                .collect()
        });
        for (chunk_stats, chunk_sharpe, chunk_top) in results {
            stats.combine(&chunk_stats);
            sharpe.combine(&chunk_sharpe);
            top.merge(chunk_top);
        }
        next = batch_end;
        on_batch(&Checkpoint {
            next,
            top: top.clone().into_sorted(),
            stats,
            sharpe,
        })?;
    }
    Ok(Screen {
        top: top.into_sorted(),
        stats,
        sharpe,
    })
}

/// What one chunk keeps: its objective stats and its top K.
struct ChunkResult {
    stats: ObjectiveStats,
    sharpe: ObjectiveStats,
    top: TopK,
}

impl ChunkResult {
    fn new(k: usize) -> Self {
        ChunkResult {
            stats: ObjectiveStats::default(),
            sharpe: ObjectiveStats::default(),
            top: TopK::new(k),
        }
    }
}

/// Up to [`LANES`] allowed combinations waiting to be screened together.
struct LaneGroup {
    n_params: usize,
    indices: Vec<u64>,
    /// Their parameter sets, one after another.
    params: Vec<f64>,
    scores: [ScreenScore; LANES],
}

impl LaneGroup {
    fn new(n_params: usize) -> Self {
        LaneGroup {
            n_params,
            indices: Vec::with_capacity(LANES),
            params: vec![0.0; n_params * LANES],
            scores: [ScreenScore {
                objective: 0.0,
                trades: 0,
                sharpe: 0.0,
            }; LANES],
        }
    }

    /// Adds combination `index` if the constraints allow it; returns how
    /// many are waiting.
    fn add(&mut self, space: &ParamSpace, index: u64) -> usize {
        let n = self.indices.len();
        let params = &mut self.params[n * self.n_params..(n + 1) * self.n_params];
        space.params_at(index, params);
        if space.allowed(params) {
            self.indices.push(index);
        }
        self.indices.len()
    }

    /// Screens the waiting combinations into `chunk`, in index order.
    fn screen(
        &mut self,
        evals: &[Evaluator<'_>],
        aggregation: &Aggregation,
        scratch: &mut LaneScratch,
        chunk: &mut ChunkResult,
    ) {
        let n = self.indices.len();
        if n == 0 {
            return;
        }
        let k = self.n_params;
        let sets: [&[f64]; LANES] = std::array::from_fn(|i| &self.params[i * k..(i + 1) * k]);
        screen_all_lanes(
            evals,
            aggregation,
            &sets[..n],
            scratch,
            &mut self.scores[..n],
        );
        for (&index, s) in self.indices.iter().zip(&self.scores) {
            let (score, trades) = (s.objective, s.trades);
            chunk.stats.push(score);
            chunk.sharpe.push(s.sharpe);
            if chunk.top.admits(score, index) {
                chunk.top.push(Scored {
                    index,
                    score,
                    trades,
                });
            }
        }
        self.indices.clear();
    }
}

/// The shared series of the allowed combinations in `range` only, for each
/// instrument.
fn batch_series(job: &ScreenJob<'_>, range: std::ops::Range<u64>) -> Vec<IndicatorSet> {
    let sets: Vec<Vec<f64>> = range
        .map(|index| job.space.params_of(index))
        .filter(|p| job.space.allowed(p))
        .collect();
    let keys = Evaluator::indicators_for(job.strategy, sets.iter().map(Vec::as_slice));
    job.market
        .instruments
        .iter()
        .map(|i| IndicatorSet::build_for(&i.bars, job.strategy.series(), keys.clone()))
        .collect()
}
