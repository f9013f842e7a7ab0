//! The full, score and holdout windows of the data (where each begins,
//! checked against the data), and [`WindowStats`], which streams one
//! window's metrics from the bars and trades of a simulation.

use std::fmt;

use super::{Drawdown, Metrics, ReturnMoments, TradeStats};
use crate::data::{Bars, MS_PER_DAY};
use crate::engine::Trade;
use crate::error::{Error, Result};
use crate::key::{HOLDOUT_START, SCORE_START};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowKind {
    Full,
    Score,
    Holdout,
}

impl fmt::Display for WindowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WindowKind::Full => "full",
            WindowKind::Score => "score",
            WindowKind::Holdout => "holdout",
        })
    }
}

/// Bars `start..end` of the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub kind: WindowKind,
    pub start: usize,
    pub end: usize,
}

impl Window {
    /// Whether `other` spans the same bars (whatever either is called).
    pub fn same_bars(&self, other: &Window) -> bool {
        (self.start, self.end) == (other.start, other.end)
    }
}

/// The full, score and (optional) holdout windows of one data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    pub full: Window,
    pub score: Window,
    pub holdout: Option<Window>,
}

/// Where a window begins: a time, or a share of the bars (`"40%"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    /// Unix milliseconds: the window begins at the first bar at or after it.
    Time(i64),
    /// A fraction in [0, 1): the window begins at bar ⌊share · bars⌋.
    Share(f64),
}

impl Boundary {
    /// The first bar index of a window beginning here.
    pub fn index(self, bars: &Bars) -> usize {
        match self {
            Boundary::Time(t) => bars.index_at_or_after(t),
            Boundary::Share(f) => ((f * bars.len() as f64).floor() as usize).min(bars.len()),
        }
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Boundary::Time(t) => f.write_str(&crate::format::time(*t)),
            Boundary::Share(s) => write!(f, "{}%", crate::format::float(s * 100.0)),
        }
    }
}

impl Windows {
    /// Each window begins at its boundary's bar. Every problem with the
    /// boundaries is reported at once, with the data's span.
    pub fn new(
        bars: &Bars,
        score_start: Option<Boundary>,
        holdout_start: Option<Boundary>,
    ) -> Result<Self> {
        let n = bars.len();
        let split = holdout_start.map_or(n, |b| b.index(bars));
        let score_from = score_start.map_or(0, |b| b.index(bars));
        let mut after: Vec<String> = Vec::new();
        let mut other: Vec<String> = Vec::new();
        if let Some(s) = score_start {
            if score_from == n {
                after.push(format!("{SCORE_START} {s}"));
            }
        }
        if let Some(h) = holdout_start {
            if split == 0 {
                other.push(format!(
                    "{HOLDOUT_START} {h} is at or before the first bar: no data is left to select on"
                ));
            } else if split == n {
                after.push(format!("{HOLDOUT_START} {h}"));
            }
        }
        if let Some(s) = score_start {
            if score_from < n && score_from >= split && split > 0 {
                let h = holdout_start.map_or(String::new(), |h| h.to_string());
                other.push(format!(
                    "{SCORE_START} {s} is at or after {HOLDOUT_START} {h}: the score window would be empty"
                ));
            }
        }
        if !after.is_empty() || !other.is_empty() {
            let span = if n == 0 {
                "no bars".to_string()
            } else {
                format!(
                    "{} .. {}, {n} bars",
                    crate::format::time(bars.time[0]),
                    crate::format::time(bars.time[n - 1])
                )
            };
            // The span goes where it answers the question: after "after
            // the data", else at the end.
            let message = if after.is_empty() {
                format!("{} (data: {span})", other.join("; "))
            } else {
                let verb = if after.len() == 1 { "is" } else { "are" };
                let first = format!("{} {verb} after the data ({span})", after.join(" and "));
                std::iter::once(first)
                    .chain(other)
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            return Err(Error::config("windows", message));
        }
        Ok(Windows {
            full: Window {
                kind: WindowKind::Full,
                start: 0,
                end: split,
            },
            score: Window {
                kind: WindowKind::Score,
                start: score_from,
                end: split,
            },
            holdout: holdout_start.map(|_| Window {
                kind: WindowKind::Holdout,
                start: split,
                end: n,
            }),
        })
    }

    pub fn all(&self) -> impl Iterator<Item = Window> + '_ {
        [Some(self.full), Some(self.score), self.holdout]
            .into_iter()
            .flatten()
    }
}

/// Streaming metrics of one window. Feed it the close before the window (if
/// any) and every bar inside it, in order, plus every trade; bars and trades
/// outside the window are ignored, so a whole simulation can be streamed in.
#[derive(Debug, Clone)]
pub struct WindowStats {
    window: Window,
    start_equity: f64,
    prev_equity: f64,
    returns: ReturnMoments,
    drawdown: Drawdown,
    trades: TradeStats,
    exposed_bars: u64,
    bars: u64,
    /// Off when only an objective that needs no return moments is wanted.
    track_returns: bool,
    /// Off when the Sortino ratio will not be read (the screen, unless it
    /// ranks by it): the held-stretch loop then skips the downside sum.
    track_downside: bool,
}

impl WindowStats {
    pub fn new(window: &Window, initial_cash: f64) -> Self {
        WindowStats {
            window: *window,
            start_equity: initial_cash,
            prev_equity: initial_cash,
            returns: ReturnMoments::default(),
            drawdown: Drawdown::new(initial_cash),
            trades: TradeStats::default(),
            exposed_bars: 0,
            bars: 0,
            track_returns: true,
            track_downside: true,
        }
    }

    /// Tracks only what `objective` needs (the screen's fast path); the
    /// objective comes out identical to [`WindowStats::new`]'s.
    pub fn for_objective(window: &Window, initial_cash: f64, objective: super::Objective) -> Self {
        let mut stats = WindowStats::new(window, initial_cash);
        stats.track_returns = matches!(
            objective,
            super::Objective::Sharpe | super::Objective::Sortino
        );
        stats.track_downside = objective == super::Objective::Sortino;
        stats
    }

    /// Sets everything but the trades from a simulation accumulated
    /// elsewhere (the screen's lanes): the window's starting and last
    /// equity, its return moments and drawdown, and its exposed bars.
    pub(crate) fn set_accumulated(
        &mut self,
        start_equity: f64,
        last_equity: f64,
        returns: ReturnMoments,
        drawdown: Drawdown,
        exposed_bars: u64,
    ) {
        self.start_equity = start_equity;
        self.prev_equity = last_equity;
        self.bars = returns.count();
        self.returns = returns;
        self.drawdown = drawdown;
        self.exposed_bars = exposed_bars;
    }

    /// Turns the return moments on (`for_objective` may have left them off).
    pub fn track_returns(&mut self, on: bool) {
        self.track_returns |= on;
    }

    /// mean / std (ddof = 1) of the window's returns, not annualised; NaN
    /// when undefined or when returns were not tracked.
    pub fn per_period_sharpe(&self) -> f64 {
        if self.track_returns {
            self.returns.sharpe(1.0)
        } else {
            f64::NAN
        }
    }

    #[inline(always)]
    pub fn bar(&mut self, t: usize, equity: f64, position: i8) {
        if t + 1 == self.window.start {
            // The close before the window is its starting value.
            self.start_equity = equity;
            self.prev_equity = equity;
            self.drawdown = Drawdown::new(equity);
        } else if t >= self.window.start && t < self.window.end {
            if self.track_returns {
                self.returns.push(equity / self.prev_equity - 1.0);
            }
            self.drawdown.push(equity);
            self.exposed_bars += u64::from(position != 0);
            self.bars += 1;
            self.prev_equity = equity;
        }
    }

    /// Counts a trade when it closed inside the window.
    #[inline]
    pub fn trade(&mut self, trade: &Trade) {
        if let Some(exit) = trade.exit_bar {
            if exit >= self.window.start && exit < self.window.end {
                self.trades.push(trade.pnl, trade.ret);
            }
        }
    }

    /// Bars `from..to` holding `position`, bar t's equity `equity(t)`: in
    /// one tight loop over the window's part of them.
    #[inline(always)]
    fn stretch(&mut self, from: usize, to: usize, position: i8, equity: impl Fn(usize) -> f64) {
        let (start, end) = (self.window.start, self.window.end);
        if start > from && start - 1 < to {
            WindowStats::bar(self, start - 1, equity(start - 1), position);
        }
        let (lo, hi) = (from.max(start), to.min(end));
        if lo >= hi {
            return;
        }
        if self.track_returns {
            // Locals, not fields: the accumulators stay in registers and
            // each bar's division depends on the closes only, not on the
            // previous bar's work.
            let (mut returns, mut drawdown) = (self.returns, self.drawdown);
            let mut prev = self.prev_equity;
            if self.track_downside {
                for t in lo..hi {
                    let e = equity(t);
                    returns.push(e / prev - 1.0);
                    drawdown.push(e);
                    prev = e;
                }
            } else {
                for t in lo..hi {
                    let e = equity(t);
                    returns.push_no_downside(e / prev - 1.0);
                    drawdown.push(e);
                    prev = e;
                }
            }
            (self.returns, self.drawdown, self.prev_equity) = (returns, drawdown, prev);
        } else {
            for t in lo..hi {
                self.drawdown.push(equity(t));
            }
            self.prev_equity = equity(hi - 1);
        }
        let k = (hi - lo) as u64;
        self.exposed_bars += k;
        self.bars += k;
    }

    pub fn finish(&self, bars: &Bars, periods_per_year: f64) -> Metrics {
        let Window { start, end, .. } = self.window;
        let end_equity = if self.bars > 0 {
            self.prev_equity
        } else {
            self.start_equity
        };
        let years = if end > start {
            let from = bars.time[start.saturating_sub(1)];
            (bars.time[end - 1] as f64 - from as f64) / MS_PER_DAY as f64 / 365.25
        } else {
            0.0
        };
        // Equity that overflowed (∞, then NaN) leaves every figure but the
        // count of trades undefined; a drawdown or win rate of 0 would be
        // a number made up.
        if !end_equity.is_finite() {
            return Metrics::undefined(self.trades.count());
        }
        let cagr = super::cagr(self.start_equity, end_equity, years);
        let max_drawdown = self.drawdown.max_drawdown();
        Metrics {
            total_return: super::total_return(self.start_equity, end_equity),
            cagr,
            max_drawdown,
            calmar: super::drawdown::calmar(cagr, max_drawdown),
            sharpe: self.returns.sharpe(periods_per_year),
            sortino: self.returns.sortino(periods_per_year),
            trades: self.trades.count(),
            win_rate: self.trades.win_rate(),
            profit_factor: self.trades.profit_factor(),
            avg_trade: self.trades.avg_trade(),
            exposure: if self.bars == 0 {
                f64::NAN
            } else {
                self.exposed_bars as f64 / self.bars as f64
            },
        }
    }
}

impl crate::engine::Sink for WindowStats {
    #[inline(always)]
    fn bar(&mut self, t: usize, equity: f64, position: i8) {
        WindowStats::bar(self, t, equity, position);
    }

    /// O(1) for a flat stretch: after its first bar the equity repeats, so
    /// each further bar adds a zero return and leaves the drawdown alone.
    fn flat(&mut self, from: usize, to: usize, equity: f64) {
        if from >= to {
            return;
        }
        WindowStats::bar(self, from, equity, 0);
        let mut t = from + 1;
        let start = self.window.start;
        if start > t && start - 1 < to {
            WindowStats::bar(self, start - 1, equity, 0);
            t = start;
        }
        let (lo, hi) = (t.max(start), to.min(self.window.end));
        if lo < hi {
            let k = (hi - lo) as u64;
            self.bars += k;
            if self.track_returns {
                self.returns.push_zeros(k);
            }
            self.prev_equity = equity;
        }
    }

    /// A held stretch in one tight loop over the window's part of it.
    fn held(
        &mut self,
        from: usize,
        to: usize,
        cash: f64,
        signed_units: f64,
        close: &[f64],
        position: i8,
    ) {
        self.stretch(from, to, position, |t| cash + signed_units * close[t]);
    }

    /// As [`WindowStats::held`], the equity given.
    fn equities(&mut self, from: usize, equity: &[f64], position: i8) {
        self.stretch(from, from + equity.len(), position, |t| equity[t - from]);
    }

    #[inline]
    fn trade(&mut self, trade: &Trade) {
        WindowStats::trade(self, trade);
    }
}
