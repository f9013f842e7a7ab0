//! One parameter set through strategy → engine → metrics, with the shared
//! inputs held once. Verification calls [`Evaluator::backtest`]; screening
//! calls [`Evaluator::screen`], which streams the same simulation into the
//! same accumulator, so both give the same objective bit for bit.

use crate::data::Bars;
use crate::engine::{
    self, simulate_portfolio, Backtest, Costs, EngineConfig, Leg, OnSteps, PortfolioRules,
    PortfolioScratch, Schedule, Signal, SizeOf, Want,
};
use crate::engine::{simulate_weights, WeightLeg, WeightsScratch};
use crate::error::Result;
use crate::indicators::{Indicator, IndicatorSet};
use crate::metrics::{
    self, Aggregation, Boundary, Metrics, Objective, Window, WindowStats, Windows,
};
use crate::rules::{Expression, Weights};
use crate::simd::{Level, LANES};
use crate::strategy::{Changes, LaneBuffers};
use crate::strategy::{Direction, Strategy, TradeManagement};
use std::sync::Arc;

/// P in the annualised ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Annualization {
    /// Bars per year measured from the data's timestamps.
    Auto,
    Periods(f64),
}

impl Annualization {
    pub fn periods_per_year(self, bars: &Bars) -> f64 {
        match self {
            Annualization::Auto => bars.bars_per_year(),
            Annualization::Periods(p) => p,
        }
    }
}

/// The window the screen ranks by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScreenWindow {
    #[default]
    Score,
    Full,
}

/// How a study is scored, before any data is seen: the engine, the
/// windows' boundaries, the objective and how instruments combine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoringSpec {
    pub engine: EngineConfig,
    pub direction: Direction,
    pub annualization: Annualization,
    pub objective: Objective,
    pub score_start: Option<Boundary>,
    pub holdout_start: Option<Boundary>,
    pub screen_window: ScreenWindow,
    pub min_trades: u64,
    pub aggregation: Aggregation,
    /// What a share boundary ("40%") is a share of, with several
    /// instruments.
    pub shares: Shares,
    /// `[portfolio]`: the instruments trade from one account.
    pub portfolio: Option<PortfolioSpec>,
}

/// `[portfolio]` as written: how a portfolio sizes and limits its entries
/// (the default size depends on the number of instruments).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortfolioSpec {
    pub size: Option<f64>,
    pub size_of: SizeOf,
    pub max_positions: Option<usize>,
    pub max_exposure: Option<f64>,
}

impl PortfolioSpec {
    /// The rules for `instruments` instruments starting with `initial_cash`:
    /// `size` defaults to an equal share of the positions that can be open
    /// (1 / `max_positions`, else 1 / the number of instruments).
    pub fn rules(&self, instruments: usize, engine: &EngineConfig) -> PortfolioRules {
        let slots = self
            .max_positions
            .unwrap_or(instruments)
            .clamp(1, instruments.max(1));
        PortfolioRules {
            initial_cash: engine.initial_cash,
            at_close: engine.fill == engine::Fill::Close,
            size: self.size.unwrap_or(1.0 / slots as f64),
            size_of: self.size_of,
            max_positions: self.max_positions,
            max_exposure: self.max_exposure,
        }
    }
}

/// With several instruments, what `score_start = "40%"` is a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shares {
    /// Of the instruments' combined timeline: every instrument's windows
    /// start on the same dates.
    #[default]
    Combined,
    /// Of each instrument's own bars: every instrument has its own windows,
    /// whatever span it covers.
    Each,
}

/// Everything about scoring that comes from the spec and the data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scoring {
    pub engine: EngineConfig,
    pub direction: Direction,
    pub objective: Objective,
    pub min_trades: u64,
    pub periods_per_year: f64,
    pub windows: Windows,
    /// The window the screen ranks by.
    pub screen: Window,
}

impl Scoring {
    /// The metrics of each of `windows` for `targets` (the position held
    /// after each bar's close, from any source: a strategy, or signals of
    /// one's own), streamed from one simulation up to the last window's end.
    pub fn metrics_of_targets(
        &self,
        bars: &Bars,
        targets: &[i8],
        windows: &[Window],
    ) -> Vec<Metrics> {
        self.metrics_of_run(bars, windows, |end, mut stats| {
            engine::simulate(bars, targets, &self.engine, end, &mut stats);
        })
    }

    /// [`Scoring::metrics_of_targets`] with the whole record (equity and
    /// position per bar, every trade) from the same simulation, run to the
    /// last bar.
    pub fn backtest_of_targets(
        &self,
        bars: &Bars,
        targets: &[i8],
        windows: &[Window],
    ) -> (Backtest, Vec<Metrics>) {
        self.backtest_of_run(bars, windows, |n, sink| {
            engine::simulate(bars, targets, &self.engine, n, sink);
        })
    }

    /// The whole record and each of `windows`' metrics from one
    /// simulation that `run` streams into the sink it is given, over all
    /// the bars it is given.
    pub fn backtest_of_run(
        &self,
        bars: &Bars,
        windows: &[Window],
        run: impl FnOnce(usize, &mut dyn engine::Sink),
    ) -> (Backtest, Vec<Metrics>) {
        let n = bars.len();
        let mut bt = Backtest {
            equity: vec![0.0; n],
            position: vec![0; n],
            trades: Vec::new(),
            instruments: Vec::new(),
            detail: None,
        };
        let metrics = self.metrics_of_run(bars, windows, |_, stats| {
            run(n, &mut engine::Tee(&mut bt, stats));
        });
        (bt, metrics)
    }

    /// The metrics of each of `windows` from one simulation that `run`
    /// streams into the windows' accumulators, up to the end it is given
    /// (the last window's).
    pub fn metrics_of_run(
        &self,
        bars: &Bars,
        windows: &[Window],
        run: impl FnOnce(usize, &mut [WindowStats]),
    ) -> Vec<Metrics> {
        let cash = self.engine.initial_cash;
        let mut stats: Vec<WindowStats> =
            windows.iter().map(|w| WindowStats::new(w, cash)).collect();
        let end = windows.iter().map(|w| w.end).max().unwrap_or(0);
        run(end, &mut stats);
        stats
            .iter()
            .map(|s| s.finish(bars, self.periods_per_year))
            .collect()
    }

    /// The objective of `m` measured over `window`: `min_trades` is a
    /// ranking rule, so it applies only to the windows that rank (the score
    /// window and the screen window); others report the plain objective.
    pub fn window_objective(&self, window: &Window, m: &Metrics) -> f64 {
        let ranks = window.kind == crate::metrics::WindowKind::Score || *window == self.screen;
        let min_trades = if ranks { self.min_trades } else { 0 };
        self.objective.of(m, min_trades)
    }

    pub fn new(spec: &ScoringSpec, bars: &Bars) -> Result<Scoring> {
        let windows = Windows::new(bars, spec.score_start, spec.holdout_start)?;
        Ok(Scoring {
            engine: spec.engine,
            direction: spec.direction,
            objective: spec.objective,
            min_trades: spec.min_trades,
            periods_per_year: spec.annualization.periods_per_year(bars),
            windows,
            screen: match spec.screen_window {
                ScreenWindow::Score => windows.score,
                ScreenWindow::Full => windows.full,
            },
        })
    }
}

/// Evaluates parameter sets of one strategy on one data set.
pub struct Evaluator<'a> {
    pub bars: &'a Bars,
    pub strategy: &'a dyn Strategy,
    pub indicators: &'a IndicatorSet,
    pub scoring: &'a Scoring,
    /// A portfolio's instruments (`[portfolio]`): `bars` and `scoring` are
    /// then the portfolio's timeline and windows, and every run is the
    /// portfolio's.
    pub portfolio: Option<PortfolioLegs<'a>>,
}

impl<'a> Evaluator<'a> {
    /// The indicator settings needed by every parameter set in `sets`.
    pub fn indicators_for<'p>(
        strategy: &dyn Strategy,
        sets: impl IntoIterator<Item = &'p [f64]>,
    ) -> Vec<Indicator> {
        crate::strategy::indicators_for_sets(strategy, sets)
    }

    pub fn positions(&self, params: &[f64], out: &mut Vec<i8>) {
        self.positions_until(params, self.bars.len(), out);
    }

    /// The positions of the first `end` bars only (what a window ending
    /// there reads; no position depends on a later bar).
    pub fn positions_until(&self, params: &[f64], end: usize, out: &mut Vec<i8>) {
        out.resize(end.min(self.bars.len()), 0);
        self.strategy.positions(
            self.bars,
            self.indicators,
            params,
            self.scoring.direction,
            out,
        );
    }

    /// The full exact backtest of one parameter set.
    pub fn backtest(&self, params: &[f64]) -> Backtest {
        let n = self.bars.len();
        let mut bt = Backtest {
            equity: vec![0.0; n],
            position: vec![0; n],
            trades: Vec::new(),
            instruments: Vec::new(),
            detail: None,
        };
        self.run(params, n, true, &mut Vec::new(), &mut bt);
        bt
    }

    /// The engine over bars `..end` for `params` into `sink`: the plain
    /// engine on the strategy's targets (in `scratch`), or the strategy's
    /// own simulation where it manages its trades (`exact`: also where it
    /// only explains its exits).
    #[inline]
    fn run<S: engine::Sink>(
        &self,
        params: &[f64],
        end: usize,
        exact: bool,
        scratch: &mut Vec<i8>,
        sink: &mut S,
    ) {
        if let Some(portfolio) = &self.portfolio {
            return portfolio.run(params, end.min(self.bars.len()), sink);
        }
        let managed = match self.strategy.trade_management() {
            TradeManagement::None => false,
            TradeManagement::ExitReasons => exact,
            TradeManagement::Full => true,
        };
        if managed {
            self.strategy.simulate(
                self.bars,
                self.indicators,
                params,
                self.scoring.direction,
                &self.scoring.engine,
                end.min(self.bars.len()),
                sink,
            );
        } else {
            self.positions_until(params, end, scratch);
            engine::simulate(self.bars, scratch, &self.scoring.engine, end, sink);
        }
    }

    /// The exact backtest and the metrics of each of `windows`, in one pass:
    /// the metrics are streamed from the simulation (no replay of the equity
    /// curve). Equal to [`Evaluator::metrics`] of [`Evaluator::backtest`].
    pub fn backtest_with_metrics(
        &self,
        params: &[f64],
        windows: &[Window],
    ) -> (Backtest, Vec<Metrics>) {
        let n = self.bars.len();
        let mut bt = Backtest {
            equity: vec![0.0; n],
            position: vec![0; n],
            trades: Vec::new(),
            instruments: Vec::new(),
            detail: None,
        };
        let cash = self.scoring.engine.initial_cash;
        let mut stats: Vec<WindowStats> =
            windows.iter().map(|w| WindowStats::new(w, cash)).collect();
        self.run(
            params,
            n,
            true,
            &mut Vec::new(),
            &mut engine::Tee(&mut bt, stats.as_mut_slice()),
        );
        let metrics = stats
            .iter()
            .map(|s| s.finish(self.bars, self.scoring.periods_per_year))
            .collect();
        (bt, metrics)
    }

    /// Only the metrics of `windows` (what verification needs): the same
    /// stream as [`Evaluator::backtest_with_metrics`], no record kept.
    pub fn window_metrics(
        &self,
        params: &[f64],
        windows: &[Window],
        scratch: &mut Vec<i8>,
    ) -> Vec<Metrics> {
        self.scoring
            .metrics_of_run(self.bars, windows, |end, mut stats| {
                self.run(params, end, true, scratch, &mut stats);
            })
    }

    pub fn metrics(&self, bt: &Backtest, window: &Window) -> Metrics {
        metrics::evaluate(
            self.bars,
            bt,
            window,
            self.scoring.engine.initial_cash,
            self.scoring.periods_per_year,
        )
    }

    /// The objective of `m` under this scoring.
    pub fn objective(&self, m: &Metrics) -> f64 {
        self.scoring.objective.of(m, self.scoring.min_trades)
    }

    /// The objective of `m` measured over `window`: `min_trades` is a
    /// ranking rule, so it applies only to the windows that rank (the score
    /// window and the screen window); others report the plain objective.
    pub fn window_objective(&self, window: &Window, m: &Metrics) -> f64 {
        self.scoring.window_objective(window, m)
    }

    /// Screens one parameter set: simulates only up to the end of the screen
    /// window; returns its objective and trades there, and the per-period
    /// Sharpe of the score window (the trials of the Deflated Sharpe).
    #[inline]
    pub fn screen(&self, params: &[f64], scratch: &mut Vec<i8>) -> ScreenScore {
        self.screen_of(&mut ByParams {
            eval: self,
            params,
            scratch,
        })
    }

    /// [`Evaluator::screen`] of any simulation on this evaluator's bars.
    #[inline]
    fn screen_of(&self, sim: &mut impl Simulation) -> ScreenScore {
        let window = &self.scoring.screen;
        let score_window = &self.scoring.windows.score;
        let cash = self.scoring.engine.initial_cash;
        let mut stats = WindowStats::for_objective(window, cash, self.scoring.objective);
        let same = window.same_bars(score_window);
        stats.track_returns(same);
        let (m, sharpe) = if same {
            sim.run(window.end, &mut stats);
            (
                stats.finish(self.bars, self.scoring.periods_per_year),
                stats.per_period_sharpe(),
            )
        } else {
            let mut both = [stats, WindowStats::new(score_window, cash)];
            let end = window.end.max(score_window.end);
            sim.run(end, &mut both.as_mut_slice());
            (
                both[0].finish(self.bars, self.scoring.periods_per_year),
                both[1].per_period_sharpe(),
            )
        };
        ScreenScore {
            objective: self.objective(&m),
            trades: m.trades,
            sharpe,
        }
    }

    /// The bars the screen simulates: to the end of the screen window, or
    /// of the score window where that ends later.
    fn screen_end(&self) -> usize {
        let (window, score) = (&self.scoring.screen, &self.scoring.windows.score);
        match window.same_bars(score) {
            true => window.end,
            false => window.end.max(score.end),
        }
    }
}

/// A simulation over the first `end` bars, streamed to a sink.
trait Simulation {
    fn run<S: engine::Sink>(&mut self, end: usize, sink: &mut S);
}

/// The screen's simulation of one parameter set.
struct ByParams<'e, 'a> {
    eval: &'e Evaluator<'a>,
    params: &'e [f64],
    scratch: &'e mut Vec<i8>,
}

impl Simulation for ByParams<'_, '_> {
    #[inline(always)]
    fn run<S: engine::Sink>(&mut self, end: usize, sink: &mut S) {
        self.eval.run(self.params, end, false, self.scratch, sink);
    }
}

/// Screens one parameter set on every instrument (`evals`, one each, in
/// instrument order): the objective is their aggregate, trades are summed,
/// and the Sharpe is their mean. One instrument gives exactly
/// [`Evaluator::screen`]. `objectives` is scratch space.
pub fn screen_all(
    evals: &[Evaluator<'_>],
    aggregation: &Aggregation,
    params: &[f64],
    scratch: &mut Vec<i8>,
    objectives: &mut Vec<f64>,
) -> ScreenScore {
    if let [eval] = evals {
        return eval.screen(params, scratch);
    }
    objectives.clear();
    let (mut trades, mut sharpe) = (0, 0.0);
    for eval in evals {
        let s = eval.screen(params, scratch);
        objectives.push(s.objective);
        trades += s.trades;
        sharpe += s.sharpe;
    }
    ScreenScore {
        objective: aggregation.of(objectives),
        trades,
        sharpe: sharpe / evals.len() as f64,
    }
}

/// One parameter set of a portfolio (`[portfolio]`): each instrument runs
/// the strategy on its own bars as if alone; the changes of that position
/// are the portfolio's signals (an entry where it turns long, an exit where
/// it leaves long), filled from one cash balance by [`simulate_portfolio`]
/// on the portfolio's timeline. An entry the portfolio skips (no room, no
/// cash) is not retried until the instrument's next entry.
/// `portfolio.rank_by`, computed once per instrument where it reads no
/// parameter, else compiled to run per combination.
#[derive(Clone)]
pub enum RankBy {
    /// Each instrument's values.
    Fixed(Vec<Vec<f64>>),
    /// An expression of the strategy's parameters.
    Params(Arc<Expression>),
}

impl std::fmt::Debug for RankBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RankBy::Fixed(v) => write!(f, "RankBy::Fixed({} instruments)", v.len()),
            RankBy::Params(_) => write!(f, "RankBy::Params"),
        }
    }
}

/// What a portfolio's evaluator runs: the book, and one evaluator per
/// instrument (its bars, series and engine settings).
pub struct PortfolioLegs<'a> {
    pub rules: &'a PortfolioRules,
    /// The union of the instruments' times.
    pub schedule: &'a Schedule,
    /// What orders entries on one step (`None`: the instruments' order).
    pub rank_by: Option<&'a RankBy>,
    /// `portfolio.weight`: a target-weight portfolio, rebalanced to each
    /// instrument's weight (the strategy's positions are not read).
    pub weights: Option<&'a Weights>,
    pub members: Vec<Evaluator<'a>>,
}

impl PortfolioLegs<'_> {
    /// The portfolio of `params` over the first `end` steps of its
    /// timeline, streamed to `sink` (bars are steps; trades come with
    /// their instrument).
    pub fn run<S: engine::Sink + ?Sized>(&self, params: &[f64], end: usize, sink: &mut S) {
        if let Some(weights) = self.weights {
            return self.rebalance(weights, params, end, sink);
        }
        BUFFERS.with_borrow_mut(|b| {
            b.fit(self.members.len());
            for (m, member) in self.members.iter().enumerate() {
                let bars = self.schedule.bars_until(m, end);
                if member.strategy.trade_management() == TradeManagement::Full {
                    // Its stops and targets feed back into its rules: its
                    // trades alone, the exits inside a bar with their price.
                    b.trades.0.clear();
                    member.strategy.simulate(
                        member.bars,
                        member.indicators,
                        params,
                        member.scoring.direction,
                        &member.scoring.engine,
                        bars,
                        &mut b.trades,
                    );
                    let cfg = &member.scoring.engine;
                    let at_close = cfg.fill == engine::Fill::Close;
                    signals_of_trades(&b.trades.0, cfg.slippage, at_close, &mut b.signals[m]);
                    continue;
                }
                member.positions_until(params, bars, &mut b.targets);
                b.changes.set_from(&b.targets);
                signals_of_changes(&b.changes, &mut b.signals[m]);
            }
            self.rank(params, end, &mut b.ranks);
            self.simulate(&b.signals, &b.ranks, &mut b.sim, end, sink);
        });
    }

    /// The target-weight portfolio of `params` over the first `end` steps.
    fn rebalance<S: engine::Sink + ?Sized>(
        &self,
        weights: &Weights,
        params: &[f64],
        end: usize,
        sink: &mut S,
    ) {
        BUFFERS.with_borrow_mut(|b| {
            let bars: Vec<&Bars> = self.members.iter().map(|m| m.bars).collect();
            let PortfolioBuffers {
                weights: room,
                rebalance,
                sim,
                ..
            } = b;
            let columns = weights.of(&bars, self.schedule, params, room);
            let instruments = self.members.iter().map(|m| (m.bars, &m.scoring.engine));
            let legs = WeightLeg::each(instruments, columns);
            simulate_weights(
                &legs,
                self.rules,
                self.schedule,
                end,
                rebalance,
                &mut OnSteps(sink, &mut sim.1),
            );
        });
    }

    /// Each instrument's `rank_by` for `params` over the first `end` steps
    /// into `out` (where it reads parameters).
    fn rank(&self, params: &[f64], end: usize, out: &mut [Vec<f64>]) {
        if let Some(RankBy::Params(e)) = self.rank_by {
            for (m, (member, out)) in self.members.iter().zip(out).enumerate() {
                let bars = self.schedule.bars_until(m, end);
                *out = e.values(member.bars, params);
                out.truncate(bars);
            }
        }
    }

    /// The portfolio of each instrument's `signals`.
    fn simulate<S: engine::Sink + ?Sized>(
        &self,
        signals: &[Vec<Signal>],
        ranks: &[Vec<f64>],
        scratch: &mut (PortfolioScratch, Vec<f64>),
        end: usize,
        sink: &mut S,
    ) {
        let legs: Vec<Leg<'_>> = self
            .members
            .iter()
            .zip(signals)
            .enumerate()
            .map(|(m, (member, signals))| Leg {
                bars: member.bars,
                signals,
                rank: match self.rank_by {
                    Some(RankBy::Fixed(r)) => Some(r[m].as_slice()),
                    Some(RankBy::Params(_)) => Some(ranks[m].as_slice()),
                    None => None,
                },
                costs: Costs::of(&member.scoring.engine),
            })
            .collect();
        let (scratch, equity) = scratch;
        simulate_portfolio(
            &legs,
            self.rules,
            self.schedule,
            end,
            scratch,
            &mut OnSteps(sink, equity),
        );
    }

    /// Screens `params` (`out[i]` for `params[i]`, exactly what
    /// [`Evaluator::screen`] gives): each instrument's changes found for
    /// [`LANES`] sets at a time by the strategy's lane code (which must
    /// give what its positions give), then each set's portfolio.
    /// `portfolio` is the portfolio's evaluator.
    pub fn screen_lanes(
        &self,
        portfolio: &Evaluator<'_>,
        params: &[&[f64]],
        level: Level,
        buffers: &mut LaneBuffers,
        out: &mut [ScreenScore],
    ) {
        let managed = self
            .members
            .iter()
            .any(|m| m.strategy.trade_management() == TradeManagement::Full);
        if managed || self.weights.is_some() {
            // No lane code finds a managed strategy's trades (nor weights).
            let mut scratch = Vec::new();
            for (p, o) in params.iter().zip(out.iter_mut()) {
                *o = portfolio.screen(p, &mut scratch);
            }
            return;
        }
        let end = portfolio.screen_end();
        BUFFERS.with_borrow_mut(|b| {
            b.fit(self.members.len());
            for (batch, out) in params.chunks(LANES).zip(out.chunks_mut(LANES)) {
                for (m, member) in self.members.iter().enumerate() {
                    member.strategy.lane_changes(
                        member.bars,
                        member.indicators,
                        batch,
                        member.scoring.direction,
                        self.schedule.bars_until(m, end),
                        level,
                        buffers,
                        &mut b.lanes[m],
                    );
                }
                for (l, o) in out.iter_mut().enumerate().take(batch.len()) {
                    for m in 0..self.members.len() {
                        signals_of_changes(&b.lanes[m][l], &mut b.signals[m]);
                    }
                    self.rank(batch[l], end, &mut b.ranks);
                    *o = portfolio.screen_of(&mut Signals {
                        legs: self,
                        signals: &b.signals,
                        ranks: &b.ranks,
                        scratch: &mut b.sim,
                    });
                }
            }
        });
    }
}

/// The screen's simulation of a portfolio's signals.
struct Signals<'e, 'a> {
    legs: &'e PortfolioLegs<'a>,
    signals: &'e [Vec<Signal>],
    ranks: &'e [Vec<f64>],
    scratch: &'e mut (PortfolioScratch, Vec<f64>),
}

impl Simulation for Signals<'_, '_> {
    fn run<S: engine::Sink>(&mut self, end: usize, sink: &mut S) {
        self.legs
            .simulate(self.signals, self.ranks, self.scratch, end, sink);
    }
}

/// What a portfolio's runs reuse, one set per thread.
#[derive(Default)]
struct PortfolioBuffers {
    targets: Vec<i8>,
    changes: Changes,
    /// Each instrument's signals, and its `rank_by` where that reads
    /// parameters.
    signals: Vec<Vec<Signal>>,
    ranks: Vec<Vec<f64>>,
    /// Each instrument's changes of a batch of sets.
    lanes: Vec<[Changes; LANES]>,
    /// The engine's, and room for a stretch's equity.
    sim: (PortfolioScratch, Vec<f64>),
    /// A managed instrument's trades alone.
    trades: TradesOnly,
    /// A target-weight portfolio's weights, and its engine's scratch.
    weights: Vec<Vec<f64>>,
    rebalance: WeightsScratch,
}

/// A sink that keeps the trades only.
#[derive(Default)]
struct TradesOnly(Vec<engine::Trade>);

impl engine::Sink for TradesOnly {
    #[inline]
    fn bar(&mut self, _: usize, _: f64, _: i8) {}
    fn trade(&mut self, trade: &engine::Trade) {
        self.0.push(*trade);
    }
}

/// Signals of an instrument's trades alone: each entry wants its side from
/// the open of its bar (or its close, `at_close`); each exit there (its
/// rules, a reversal, a trailing stop, a bar limit) wants flat, and each
/// exit inside a bar (a stop or a target touched, a liquidation) is that
/// exit at its price before slippage. A trade still open at the end ends
/// nothing.
fn signals_of_trades(
    trades: &[engine::Trade],
    slippage: f64,
    at_close: bool,
    out: &mut Vec<Signal>,
) {
    use engine::ExitReason as R;
    out.clear();
    for t in trades {
        let side = match t.side {
            engine::Side::Long => 1,
            engine::Side::Short => -1,
        };
        // The close that decided a fill: the bar before its open, or its own.
        let decided_for = |bar: usize| match at_close {
            true => Some(bar),
            false => bar.checked_sub(1),
        };
        if let Some(decided) = decided_for(t.entry_bar) {
            // A reversal's exit is in its entry.
            if out
                .last()
                .is_some_and(|s: &Signal| s.bar == decided && s.inside.is_none())
            {
                out.pop();
            }
            out.push(Signal::new(decided, Want::of_target(side)));
        }
        let Some(exit) = t.exit_bar else { continue };
        let Some(decided) = exit.checked_sub(1) else {
            continue;
        };
        match t.exit_reason {
            R::Rule | R::Reversal | R::TrailingStop | R::MaxBars => {
                out.push(Signal::new(decided, Want::Flat));
            }
            R::End => {}
            reason => {
                let raw = t.exit_price / (1.0 - f64::from(side) * slippage);
                out.push(Signal {
                    bar: decided,
                    want: Want::Flat,
                    inside: Some((raw, reason)),
                });
            }
        }
    }
}

impl PortfolioBuffers {
    fn fit(&mut self, instruments: usize) {
        self.signals.resize_with(instruments, Vec::new);
        self.ranks.resize_with(instruments, Vec::new);
        self.lanes.resize_with(instruments, Default::default);
    }
}

thread_local! {
    static BUFFERS: std::cell::RefCell<PortfolioBuffers> = Default::default();
}

/// Signals of a position held alone (its changes): each change wants the
/// side it changes to.
fn signals_of_changes(changes: &Changes, out: &mut Vec<Signal>) {
    out.clear();
    let mut before = 0;
    for (bar, target) in changes.entries() {
        if target != before {
            out.push(Signal::new(bar, Want::of_target(target)));
        }
        before = target;
    }
}

/// What the screen keeps of one combination.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScreenScore {
    pub objective: f64,
    /// Trades closed in the screen window.
    pub trades: u64,
    /// mean / std (ddof = 1) of the score window's returns, not annualised.
    pub sharpe: f64,
}

/// Several window accumulators fed by one simulation.
impl engine::Sink for [WindowStats] {
    #[inline]
    fn bar(&mut self, t: usize, equity: f64, position: i8) {
        self.iter_mut().for_each(|s| s.bar(t, equity, position));
    }
    fn trade(&mut self, trade: &engine::Trade) {
        self.iter_mut().for_each(|s| s.trade(trade));
    }
    fn flat(&mut self, from: usize, to: usize, equity: f64) {
        self.iter_mut()
            .for_each(|s| engine::Sink::flat(s, from, to, equity));
    }
    fn held(
        &mut self,
        from: usize,
        to: usize,
        cash: f64,
        signed_units: f64,
        close: &[f64],
        position: i8,
    ) {
        self.iter_mut()
            .for_each(|s| engine::Sink::held(s, from, to, cash, signed_units, close, position));
    }
    fn equities(&mut self, from: usize, equity: &[f64], position: i8) {
        self.iter_mut()
            .for_each(|s| engine::Sink::equities(s, from, equity, position));
    }
}
