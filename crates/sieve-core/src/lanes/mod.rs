//! The screen, [`LANES`] combinations at a time.
//!
//! [`Evaluator::screen_lanes`] gives exactly what [`Evaluator::screen`] gives
//! for each parameter set — bit for bit — with the engine and the window
//! metrics of all lanes in one pass over the bars (see [`engine`]). Where a
//! lane cannot be exact, or the screen needs something the lanes do not
//! compute (a screen window other than the score window), that parameter set
//! goes through the scalar path instead.
//!
//! A parameter set whose targets repeat an earlier one's on the same
//! instrument takes that one's score from a [`TargetMemo`] (the engine
//! sees a set only through its targets), and a strategy that keys its
//! targets by parameters ([`crate::strategy::Strategy::lane_keys`]) lets a
//! batch of known sets skip finding them; sets the memo does not know fill
//! the engine's batches.

mod engine;
mod memo;

/// Combinations screened together, and the vector code that runs them.
pub use crate::simd::{Level, LANES};
pub use memo::TargetMemo;

use std::sync::Arc;

use crate::evaluate::{Evaluator, Scoring, ScreenScore};
use crate::metrics::{Aggregation, Objective, Window};
use crate::strategy::{Changes, LaneBuffers, Strategy, TradeManagement};
use memo::Key;

/// Scratch space of one worker.
pub struct LaneScratch {
    level: Level,
    /// Lanes for every strategy, not only where they pay.
    always: bool,
    /// The targets of the strategy's current lanes.
    changes: [Changes; LANES],
    /// What finding the changes reuses (`positions` also serves the
    /// scalar path).
    buffers: LaneBuffers,
    /// Targets waiting for the engine.
    pending: Pending,
    /// Each lane's fills.
    plans: engine::FillPlans,
    /// Scores by targets, shared with other workers.
    memo: Arc<TargetMemo>,
    /// The memo key of the lane at hand.
    key: Key,
    /// The strategy's keys of the current batch's targets.
    param_words: [Vec<u64>; LANES],
    /// Memo keys of those keys whose sets wait for their scores (the
    /// first `param_waiting.len()`), and those sets' places.
    param_keys: Vec<Key>,
    param_waiting: Vec<usize>,
    /// Lookups in the memo and hits, not yet reported to it.
    lookups: u64,
    hits: u64,
    /// Several instruments: each one's scores, instrument after instrument.
    scores: Vec<ScreenScore>,
    /// Several instruments: one combination's objective on each.
    objectives: Vec<f64>,
}

/// Distinct targets gathered for one run of the engine: the strategy's
/// lanes lose those the memo knows and those that repeat a waiting one, so
/// the engine gets full batches of new targets.
#[derive(Default)]
struct Pending {
    changes: [Changes; LANES],
    keys: [Key; LANES],
    /// Whether `keys[l]` holds `changes[l]` (targets too far out for a
    /// key are compared whole and not memoized).
    keyed: [bool; LANES],
    /// Each waiting lane's place in the parameter sets.
    at: [usize; LANES],
    len: usize,
    /// (place, waiting lane): sets whose targets repeat a waiting lane's.
    repeats: Vec<(usize, usize)>,
}

impl Default for LaneScratch {
    fn default() -> Self {
        LaneScratch::sharing(Arc::default())
    }
}

impl LaneScratch {
    /// Scratch space that screens every strategy in lanes (tests and
    /// benchmarks) with the vector code of `level`, which must be one of
    /// [`Level::available`]. Like all scratch space it remembers scores by
    /// targets: it serves the evaluators of one screen (the same bars,
    /// scoring and strategy for each instrument) and panics if given others.
    pub fn always(level: Level) -> Self {
        assert!(level <= Level::best(), "{level:?} on a CPU without it");
        LaneScratch {
            level,
            always: true,
            ..LaneScratch::default()
        }
    }

    /// Scratch space that never reuses a score (tests and benchmarks that
    /// time the work itself).
    pub fn without_memo(self) -> Self {
        LaneScratch {
            memo: Arc::new(TargetMemo::disabled()),
            ..self
        }
    }

    /// Counts a lookup in the memo, reporting every few.
    fn count(&mut self, hit: bool) {
        self.lookups += 1;
        self.hits += u64::from(hit);
        if self.lookups == memo::REPORT_EVERY {
            self.memo.report(self.lookups, self.hits);
            (self.lookups, self.hits) = (0, 0);
        }
    }

    /// Scratch space whose scores by targets are `memo`'s, which other
    /// workers share. A memo serves one screen (the same bars, scoring and
    /// strategy per instrument); another screen needs another memo.
    pub fn sharing(memo: Arc<TargetMemo>) -> Self {
        LaneScratch {
            level: Level::best(),
            always: false,
            changes: Default::default(),
            buffers: LaneBuffers::default(),
            pending: Pending::default(),
            plans: engine::FillPlans::default(),
            memo,
            key: Key::default(),
            param_words: Default::default(),
            param_keys: Vec::new(),
            param_waiting: Vec::new(),
            lookups: 0,
            hits: 0,
            scores: Vec::new(),
            objectives: Vec::new(),
        }
    }
}

/// How the CPU screen runs `strategy` under `scoring` at the CPU's vector
/// level, in words (`sieve sweep -v`): the path, what makes it leave the
/// lanes, and whether the score window is accumulated in the same pass.
pub fn screen_path(strategy: &dyn Strategy, scoring: &Scoring) -> String {
    let level = Level::best();
    let (screen, score) = (&scoring.screen, &scoring.windows.score);
    let windows = if screen.same_bars(score) {
        "screen and score windows are the same bars"
    } else if screen.start <= score.start && score.end <= screen.end {
        "the score window's statistics accumulated in the same pass"
    } else {
        return "one combination at a time: the score window is not inside the screen window"
            .into();
    };
    if strategy.trade_management() == TradeManagement::Full {
        return format!(
            "one combination at a time: trade management (the engine's exits feed back into the rules): {}; {windows}",
            strategy.screen_path()
        );
    }
    let path = strategy.screen_path();
    match (level, path.starts_with("lanes")) {
        (Level::Portable, true) => format!(
            "one combination at a time: no AVX2 here (the portable lanes run slower); {windows}"
        ),
        (_, true) => format!("{path}, {LANES} at a time ({level:?}); {windows}"),
        (_, false) => format!("{path}; {windows}"),
    }
}

impl Evaluator<'_> {
    /// Screens parameter sets [`LANES`] at a time; `out[i]` is exactly
    /// [`Evaluator::screen`] of `params[i]`.
    pub fn screen_lanes(
        &self,
        params: &[&[f64]],
        scratch: &mut LaneScratch,
        out: &mut [ScreenScore],
    ) {
        self.screen_lanes_of(0, params, scratch, out);
    }

    /// [`Evaluator::screen_lanes`] for instrument `slot` (its memo keys).
    fn screen_lanes_of(
        &self,
        slot: usize,
        params: &[&[f64]],
        scratch: &mut LaneScratch,
        out: &mut [ScreenScore],
    ) {
        assert!(out.len() >= params.len());
        scratch.memo.claim(
            slot,
            memo::Owner {
                bars: (std::ptr::from_ref(self.bars) as usize, self.bars.len()),
                scoring: *self.scoring,
                strategy: std::ptr::from_ref(self.strategy).cast::<()>() as usize,
            },
        );
        if let Some(portfolio) = &self.portfolio {
            return portfolio.screen_lanes(self, params, scratch.level, &mut scratch.buffers, out);
        }
        let window = &self.scoring.screen;
        // A score window outside the screen window (the lanes accumulate
        // one span of bars), or a strategy managing its trades (the
        // engine's stops feed back into its decisions: not targets the
        // lanes can fill): one combination at a time.
        let scalar = self.inner_window().is_err()
            || self.strategy.trade_management() == TradeManagement::Full;
        for (b, batch) in params.chunks(LANES).enumerate() {
            // Measured on an AVX2 CPU: the portable lane code (SSE2 there)
            // ran sma_cross at half the scalar speed; the AVX2 code runs it
            // at 2×.
            let pays = scratch.always
                || (self.strategy.lanes_pay(batch) && scratch.level > Level::Portable);
            if scalar || !pays {
                // Or the strategy is faster one combination at a time.
                for (p, o) in batch.iter().zip(&mut out[b * LANES..]) {
                    *o = self.screen(p, &mut scratch.buffers.positions);
                }
                continue;
            }
            let known = self.known_scores(slot, b * LANES, batch, scratch, out);
            if known.count_ones() as usize == batch.len() {
                continue;
            }
            self.strategy.lane_changes(
                self.bars,
                self.indicators,
                batch,
                self.scoring.direction,
                window.end,
                scratch.level,
                &mut scratch.buffers,
                &mut scratch.changes,
            );
            for l in 0..batch.len() {
                if known & (1 << l) != 0 {
                    continue;
                }
                if let Some(score) = self.take_lane(slot, b * LANES + l, l, scratch) {
                    out[b * LANES + l] = score;
                }
                if scratch.pending.len == LANES {
                    self.run_pending(params, scratch, out);
                }
            }
        }
        self.run_pending(params, scratch, out);
        // Every score is known now: keep those the strategy keyed.
        for (key, &at) in scratch.param_keys.iter().zip(&scratch.param_waiting) {
            scratch.memo.insert(key, out[at]);
        }
        scratch.param_waiting.clear();
    }

    /// The score window as the lanes read it inside the screen window:
    /// `None` where the two are the same bars (one accumulator serves
    /// both), `Err` where the score window is not within the screen window.
    fn inner_window(&self) -> Result<Option<&Window>, ()> {
        let (screen, score) = (&self.scoring.screen, &self.scoring.windows.score);
        if screen.same_bars(score) {
            Ok(None)
        } else if screen.start <= score.start && score.end <= screen.end {
            Ok(Some(score))
        } else {
            Err(())
        }
    }

    /// The scores of the sets `at..` of a batch that the memo has by the
    /// strategy's keys of their targets
    /// ([`crate::strategy::Strategy::lane_keys`]), written
    /// to `out`; as bits by lane. The others' keys wait in `scratch` for
    /// their scores.
    fn known_scores(
        &self,
        slot: usize,
        at: usize,
        batch: &[&[f64]],
        scratch: &mut LaneScratch,
        out: &mut [ScreenScore],
    ) -> u8 {
        if !scratch.memo.is_on()
            || !self.strategy.lane_keys(
                self.bars,
                self.indicators,
                batch,
                self.scoring.screen.end,
                &mut scratch.param_words[..batch.len()],
            )
        {
            return 0;
        }
        let mut known = 0u8;
        // Sets of a batch mostly share their group: once one is not known,
        // the rest are not looked up.
        let mut looking = true;
        for l in 0..batch.len() {
            let waiting = scratch.param_waiting.len();
            if scratch.param_keys.len() == waiting {
                scratch.param_keys.push(Key::default());
            }
            let key = &mut scratch.param_keys[waiting];
            if !key.set_params(slot, &scratch.param_words[l]) {
                continue;
            }
            let found = looking.then(|| scratch.memo.get(key)).flatten();
            if looking {
                scratch.count(found.is_some());
            }
            match found {
                Some(score) => {
                    out[at + l] = score;
                    known |= 1 << l;
                }
                None => {
                    looking = false;
                    scratch.param_waiting.push(at + l);
                }
            }
        }
        known
    }

    /// Lane `l` of the strategy's batch, set `at` of the call: its score
    /// if the memo has it; else it waits for the engine (or repeats a
    /// waiting lane).
    fn take_lane(
        &self,
        slot: usize,
        at: usize,
        l: usize,
        scratch: &mut LaneScratch,
    ) -> Option<ScreenScore> {
        let keyed = scratch.memo.is_on() && scratch.key.set(slot, &scratch.changes[l]);
        if keyed {
            let found = scratch.memo.get(&scratch.key);
            scratch.count(found.is_some());
            if found.is_some() {
                return found;
            }
        }
        let p = &mut scratch.pending;
        let same = (0..p.len).find(|&w| {
            if keyed && p.keyed[w] {
                p.keys[w] == scratch.key
            } else {
                p.changes[w] == scratch.changes[l]
            }
        });
        if let Some(w) = same {
            p.repeats.push((at, w));
            return None;
        }
        let w = p.len;
        std::mem::swap(&mut p.changes[w], &mut scratch.changes[l]);
        std::mem::swap(&mut p.keys[w], &mut scratch.key);
        p.keyed[w] = keyed;
        p.at[w] = at;
        p.len += 1;
        None
    }

    /// Runs the waiting lanes through the engine: their scores into `out`
    /// (and the memo), and those of the sets that repeat them.
    fn run_pending(&self, params: &[&[f64]], scratch: &mut LaneScratch, out: &mut [ScreenScore]) {
        let p = &mut scratch.pending;
        let n = p.len;
        if n == 0 {
            return;
        }
        // Unused lanes repeat the first one; their results are dropped.
        let lanes: [&Changes; LANES] =
            std::array::from_fn(|l| &p.changes[if l < n { l } else { 0 }]);
        let downside = self.scoring.objective == Objective::Sortino;
        let inner = self.inner_window().ok().flatten();
        let run = engine::simulate(
            self.bars,
            &lanes,
            &self.scoring.engine,
            &self.scoring.screen,
            inner,
            downside,
            scratch.level,
            &mut scratch.plans,
        );
        for (l, lane) in run.stats.iter().enumerate().take(n) {
            let at = p.at[l];
            let score = if run.inexact & (1 << l) != 0 {
                self.screen(params[at], &mut scratch.buffers.positions)
            } else {
                let m = lane.finish(self.bars, self.scoring.periods_per_year);
                ScreenScore {
                    objective: self.objective(&m),
                    trades: m.trades,
                    sharpe: match inner {
                        Some(_) => run.inner_sharpe[l],
                        None => lane.per_period_sharpe(),
                    },
                }
            };
            out[at] = score;
            if p.keyed[l] {
                scratch.memo.insert(&p.keys[l], score);
            }
        }
        for (at, w) in p.repeats.drain(..) {
            out[at] = out[p.at[w]];
        }
        p.len = 0;
    }
}

/// [`crate::evaluate::screen_all`] for many parameter sets: `out[i]` is
/// exactly its result for `params[i]`.
pub fn screen_all_lanes(
    evals: &[Evaluator<'_>],
    aggregation: &Aggregation,
    params: &[&[f64]],
    scratch: &mut LaneScratch,
    out: &mut [ScreenScore],
) {
    if let [eval] = evals {
        return eval.screen_lanes_of(0, params, scratch, out);
    }
    let n = params.len();
    let mut scores = std::mem::take(&mut scratch.scores);
    scores.clear();
    scores.resize(n * evals.len(), ScreenScore::default());
    for (slot, (eval, one)) in evals.iter().zip(scores.chunks_mut(n.max(1))).enumerate() {
        eval.screen_lanes_of(slot, params, scratch, one);
    }
    for (i, o) in out[..n].iter_mut().enumerate() {
        scratch.objectives.clear();
        let (mut trades, mut sharpe) = (0u64, 0.0f64);
        for one in scores.chunks(n.max(1)) {
            scratch.objectives.push(one[i].objective);
            trades += one[i].trades;
            sharpe += one[i].sharpe;
        }
        *o = ScreenScore {
            objective: aggregation.of(&scratch.objectives),
            trades,
            sharpe: sharpe / evals.len() as f64,
        };
    }
    scratch.scores = scores;
}
