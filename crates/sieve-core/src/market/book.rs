//! A portfolio's book (`[portfolio]`): the instruments of a study trading
//! from one account, and how one parameter set runs on them.
//!
//! A portfolio study looks like a study of one instrument to everything
//! above it: its bars are the portfolio's own timeline (the union of the
//! instruments' times, [`Book::timeline`]), its scoring's windows are on
//! that timeline, and its evaluator
//! ([`crate::evaluate::PortfolioLegs`]) streams the portfolio's equity
//! there. So the screen, verification, the optimize loop and the
//! walk-forward score the portfolio's returns with the same accumulators,
//! and the CPU screen equals verification bit for bit.

use super::instrument::Instrument;
use crate::data::{Bars, ExtraColumn};
use crate::engine::{run_weights, PortfolioRules, Schedule, Trade, WeightLeg, WeightsRun};
use crate::error::{Error, Result};
use crate::evaluate::RankBy;
use crate::key;
use crate::rules::{cross_section, Across, Expression, ExternalFunctions, Weights};
use std::sync::Arc;

/// The instruments of a portfolio and its account's rules.
#[derive(Debug, Clone)]
pub struct Book {
    pub rules: PortfolioRules,
    /// Each instrument with its bars and engine settings (its scoring's
    /// windows are unused: the portfolio is scored on its timeline).
    pub members: Vec<Instrument>,
    /// The union of their times.
    pub schedule: Schedule,
    /// `portfolio.rank_by`: on a step with more entries than room or cash,
    /// the highest go first.
    pub rank_by: Option<RankBy>,
    /// `portfolio.weight` and `portfolio.rebalance`: a target-weight
    /// portfolio.
    pub weights: Option<Arc<Weights>>,
}

impl Book {
    /// The book of `members`, which must share some stretch of time.
    pub fn new(members: Vec<Instrument>, rules: PortfolioRules) -> Result<Book> {
        share_time(&members)?;
        let bars: Vec<&Bars> = members.iter().map(|m| &m.bars).collect();
        let schedule = Schedule::new(&bars);
        Ok(Book {
            rules,
            members,
            schedule,
            rank_by: None,
            weights: None,
        })
    }

    /// Ranks entries by `expression` (`portfolio.rank_by`, a rule
    /// expression that may read the parameters `params`: names, and
    /// whether each is a whole number) on each instrument's bars.
    pub fn rank_by(
        &mut self,
        expression: &str,
        functions: &ExternalFunctions,
        params: &[(&str, bool)],
    ) -> Result<()> {
        let key = key::PORTFOLIO_RANK_BY;
        let named = |m: &Instrument, e: Error| match (self.members.len() > 1, e) {
            (true, Error::Config { key, message }) => Error::Config {
                key,
                message: format!("instrument '{}': {message}", m.name),
            },
            (_, e) => e,
        };
        // Without a parameter it is computed once here.
        let (compiled, reads_params) =
            Expression::compile_reading(key, expression, params, functions, true)?;
        for m in &self.members {
            compiled.check_data(&m.bars).map_err(|e| named(m, e))?;
        }
        self.rank_by = Some(match reads_params {
            false => RankBy::Fixed(
                self.members
                    .iter()
                    .map(|m| compiled.values(&m.bars, &[]))
                    .collect(),
            ),
            true => RankBy::Params(Arc::new(compiled)),
        });
        Ok(())
    }

    /// Rebalances to `weight` (`portfolio.weight`) on the bars where
    /// `rebalance` holds (`portfolio.rebalance`; every bar without it):
    /// rule expressions that may read the parameters `params` and compare
    /// the instruments (`rank`, `count`, `total`).
    pub fn weights(
        &mut self,
        weight: &str,
        rebalance: Option<&str>,
        functions: &ExternalFunctions,
        params: &[(&str, bool)],
    ) -> Result<()> {
        let members: Vec<(&str, &Bars)> = self
            .members
            .iter()
            .map(|m| (m.name.as_str(), &m.bars))
            .collect();
        let weights = Weights::compile(
            [key::PORTFOLIO_WEIGHT, key::PORTFOLIO_REBALANCE],
            weight,
            rebalance,
            functions,
            params,
            &members,
            &self.schedule,
        )?;
        self.weights = Some(Arc::new(weights));
        Ok(())
    }

    /// The target-weight portfolio of `params` over all its steps, with
    /// its orders and occupancy (`None`: not a target-weight portfolio).
    pub fn weights_run(&self, params: &[f64]) -> Option<WeightsRun> {
        let weights = self.weights.as_ref()?;
        let bars: Vec<&Bars> = self.members.iter().map(|m| &m.bars).collect();
        let mut room = Vec::new();
        let columns = weights.of(&bars, &self.schedule, params, &mut room);
        let instruments = self.members.iter().map(|m| (&m.bars, &m.scoring.engine));
        let legs = WeightLeg::each(instruments, columns);
        Some(run_weights(&legs, &self.rules))
    }

    /// `trade` of instrument `leg` with its bars, which a portfolio's run
    /// gives as steps of the timeline, turned back into the instrument's.
    pub fn on_own_bars(&self, leg: usize, trade: &Trade) -> Trade {
        let bar = |t: usize| self.schedule.bar_of(t, leg).unwrap_or(0);
        Trade {
            entry_bar: bar(trade.entry_bar),
            exit_bar: trade.exit_bar.map(bar),
            ..*trade
        }
    }

    /// The portfolio's own bars: the union of the members' times, each
    /// price an equal-weight index of the members (the mean of each one's
    /// last close over its first, over those that have started; 1 at the
    /// first time). What the windows, the annualisation and a report's
    /// buy-and-hold line read.
    pub fn timeline(&self) -> Bars {
        let index: Vec<f64> = (0..self.schedule.len())
            .map(|t| {
                let (mut sum, mut started) = (0.0, 0);
                for (i, m) in self.members.iter().enumerate() {
                    let mark = self.schedule.marks(i)[t];
                    if !mark.is_nan() {
                        sum += mark / m.bars.close[0];
                        started += 1;
                    }
                }
                sum / started as f64
            })
            .collect();
        Bars {
            time: self.schedule.time.clone(),
            open: index.clone(),
            high: index.clone(),
            low: index.clone(),
            close: index,
            volume: None,
            timezone: self.members[0].bars.timezone,
            extra: Vec::new(),
            unread: Vec::new(),
            detail: None,
            frames: None,
        }
    }
}

/// Adds to each instrument's bars its place among the instruments by
/// `values` (each one's `rank_by` on its own bars), as the columns the
/// rules read as `rank` and `count`: at each of its bars, `rank` is 1 for
/// the highest of the instruments' latest values (each as of its last bar
/// then; none past its last bar), ties in instrument order, undefined where its own value is;
/// `count` is how many instruments have a defined value then. A column of
/// the data of either name is replaced.
pub fn add_cross_section(data: &mut [(String, Bars)], values: &[Vec<f64>]) {
    let bars: Vec<&Bars> = data.iter().map(|(_, b)| b).collect();
    let schedule = Schedule::new(&bars);
    let rank = cross_section(&schedule, values, Across::Rank);
    let count = cross_section(&schedule, values, Across::Count);
    for (((_, bars), rank), count) in data.iter_mut().zip(rank).zip(count) {
        bars.extra.retain(|c| c.name != "rank" && c.name != "count");
        for (name, values) in [("rank", rank), ("count", count)] {
            bars.extra.push(ExtraColumn {
                name: name.to_string(),
                values,
                problem: None,
            });
        }
    }
}

/// A portfolio's instruments must share some stretch of time: the one
/// that ends first must end after the one that starts last begins.
pub fn share_time(instruments: &[Instrument]) -> Result<()> {
    let first = |i: &Instrument| i.bars.time.first().copied().unwrap_or(i64::MAX);
    let last = |i: &Instrument| i.bars.time.last().copied().unwrap_or(i64::MIN);
    let (Some(late), Some(early)) = (
        instruments.iter().max_by_key(|i| first(i)),
        instruments.iter().min_by_key(|i| last(i)),
    ) else {
        return Ok(());
    };
    if last(early) < first(late) {
        let t = crate::format::time;
        return Err(Error::Invalid(format!(
            "data: the instruments share no time: '{}' ends at {} before '{}' starts at {}; a portfolio trades them side by side",
            early.name,
            t(last(early)),
            late.name,
            t(first(late))
        )));
    }
    Ok(())
}
