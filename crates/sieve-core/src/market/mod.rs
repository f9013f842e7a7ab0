//! The instruments a study runs on. Each has its own bars and its own
//! scoring (windows at the same dates, its own annualization); a
//! combination's objective is the [`Aggregation`] of theirs. One instrument
//! is the common case, and gives exactly the single-instrument numbers.

use std::path::Path;

mod book;
mod instrument;

pub use book::{add_cross_section, share_time, Book};
pub use instrument::Instrument;

use crate::data::Bars;
use crate::error::{Error, Result};
use crate::evaluate::{Scoring, ScoringSpec, Shares};
use crate::metrics::Aggregation;
use crate::metrics::Boundary;
use crate::strategy::Strategy;

/// Every instrument of a study, in the order given, and how their
/// objectives combine.
#[derive(Debug, Clone)]
pub struct Market {
    /// The instruments; under `[portfolio]` one, the portfolio: its bars
    /// are its timeline ([`Book::timeline`]) and its scoring is on them.
    pub instruments: Vec<Instrument>,
    pub aggregation: Aggregation,
    /// `[portfolio]`: the instruments that trade from one account.
    pub portfolio: Option<Book>,
}

impl Market {
    /// Each instrument's series `keys` of `strategy`, in instrument order.
    pub fn series(
        &self,
        strategy: &dyn Strategy,
        keys: impl IntoIterator<Item = crate::indicators::Indicator> + Clone,
    ) -> Vec<crate::indicators::IndicatorSet> {
        self.traded()
            .iter()
            .map(|i| {
                crate::indicators::IndicatorSet::build_for(&i.bars, strategy.series(), keys.clone())
            })
            .collect()
    }

    /// One evaluator per instrument over its series (`sets`, as
    /// [`Market::series`] gives them).
    pub fn evaluators<'a>(
        &'a self,
        strategy: &'a dyn Strategy,
        sets: &'a [crate::indicators::IndicatorSet],
    ) -> Vec<crate::evaluate::Evaluator<'a>> {
        let evaluators = self
            .traded()
            .iter()
            .zip(sets)
            .map(|(i, indicators)| crate::evaluate::Evaluator {
                bars: &i.bars,
                strategy,
                indicators,
                scoring: &i.scoring,
                portfolio: None,
            })
            .collect();
        let Some(book) = &self.portfolio else {
            return evaluators;
        };
        // One evaluator, the portfolio's, on its timeline.
        let timeline = &self.instruments[0];
        vec![crate::evaluate::Evaluator {
            bars: &timeline.bars,
            strategy,
            indicators: &sets[0],
            scoring: &timeline.scoring,
            portfolio: Some(crate::evaluate::PortfolioLegs {
                rules: &book.rules,
                schedule: &book.schedule,
                rank_by: book.rank_by.as_ref(),
                weights: book.weights.as_deref(),
                members: evaluators,
            }),
        }]
    }

    /// The instruments that trade: a portfolio's, or the study's.
    pub fn traded(&self) -> &[Instrument] {
        match &self.portfolio {
            Some(book) => &book.members,
            None => &self.instruments,
        }
    }

    /// Scores each named bar series under `spec`; `strategy` checks that
    /// each has what it reads. Errors name the instrument when there are
    /// several.
    pub fn new(
        spec: &ScoringSpec,
        data: Vec<(String, Bars)>,
        strategy: &dyn Strategy,
    ) -> Result<Market> {
        if data.is_empty() {
            return Err(Error::Invalid("no instrument to study".into()));
        }
        let several = data.len() > 1;
        // Windows on the combined timeline can miss a short instrument.
        let hint = match (several, spec.shares) {
            (true, Shares::Combined) => "; with instruments covering different spans, score.shares = \"each\" takes each one's windows from its own bars",
            _ => "",
        };
        let name_it = |name: &str, e: Error| match (several, e) {
            (true, Error::Config { key, message }) => Error::Config {
                key,
                message: format!("instrument '{name}': {message}{hint}"),
            },
            (true, Error::Invalid(message)) => {
                Error::Invalid(format!("instrument '{name}': {message}"))
            }
            (
                true,
                Error::Rule {
                    key,
                    column,
                    message,
                },
            ) => Error::Rule {
                key,
                column,
                message: format!("instrument '{name}': {message}"),
            },
            (_, e) => e,
        };
        let windows_spec = spec;
        // A portfolio's instruments are scored on its timeline, not their own.
        let spec = &match spec.portfolio {
            Some(_) => ScoringSpec {
                score_start: None,
                holdout_start: None,
                ..*spec
            },
            None => *spec,
        };
        let spec = &if several && spec.shares == Shares::Combined {
            on_common_dates(spec, &data)
        } else {
            *spec
        };
        let mut instruments = Vec::with_capacity(data.len());
        let wanted = strategy.data_columns();
        for (name, mut bars) in data {
            if instruments.iter().any(|i: &Instrument| i.name == name) {
                return Err(Error::config(
                    crate::key::DATA_NAMES,
                    format!("instrument name '{name}' is used twice; instruments must not repeat (set data.names)"),
                ));
            }
            strategy.check_data(&bars).map_err(|e| name_it(&name, e))?;
            // Columns nothing reads take no memory for the run.
            bars.extra.retain(|c| wanted.contains(&c.name));
            let scoring = Scoring::new(spec, &bars).map_err(|e| name_it(&name, e))?;
            instruments.push(Instrument {
                name,
                bars,
                scoring,
            });
        }
        let Some(p) = windows_spec.portfolio else {
            return Ok(Market {
                instruments,
                aggregation: spec.aggregation,
                portfolio: None,
            });
        };
        let rules = p.rules(instruments.len(), &spec.engine);
        let book = Book::new(instruments, rules)?;
        let bars = book.timeline();
        let scoring = Scoring::new(windows_spec, &bars)?;
        Ok(Market {
            instruments: vec![Instrument {
                name: "portfolio".into(),
                bars,
                scoring,
            }],
            aggregation: spec.aggregation,
            portfolio: Some(book),
        })
    }

    /// One instrument named `name`.
    pub fn single(
        spec: &ScoringSpec,
        name: &str,
        bars: Bars,
        strategy: &dyn Strategy,
    ) -> Result<Market> {
        Market::new(spec, vec![(name.to_string(), bars)], strategy)
    }

    /// The first instrument: the only one of a single-instrument study.
    pub fn primary(&self) -> &Instrument {
        &self.instruments[0]
    }

    /// More than one instrument.
    pub fn is_several(&self) -> bool {
        self.instruments.len() > 1
    }

    /// The instruments' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.instruments.iter().map(|i| i.name.as_str()).collect()
    }
}

/// Whether `s` can name an instrument (it becomes part of a CSV column name).
pub fn is_instrument_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphanumeric())
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// An instrument's default name: its file's stem (`data/BTCUSDT.parquet`
/// is `BTCUSDT`).
pub fn name_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// `spec` with its share boundaries ("40%") turned into dates on the
/// instruments' combined timeline (every time any of them has a bar), so that
/// every instrument's windows start on the same dates.
fn on_common_dates(spec: &ScoringSpec, data: &[(String, Bars)]) -> ScoringSpec {
    let is_share = |b: Option<Boundary>| matches!(b, Some(Boundary::Share(_)));
    let mut config = *spec;
    if !is_share(config.score_start) && !is_share(config.holdout_start) {
        return config;
    }
    let mut times: Vec<i64> = data
        .iter()
        .flat_map(|(_, b)| b.time.iter().copied())
        .collect();
    times.sort_unstable();
    times.dedup();
    let date = |b: Option<Boundary>| match b {
        Some(Boundary::Share(f)) => {
            let i = ((f * times.len() as f64).floor() as usize).min(times.len());
            // Past the last bar: a time after every instrument's data.
            let t = times.get(i).copied().unwrap_or(times[times.len() - 1] + 1);
            Some(Boundary::Time(t))
        }
        other => other,
    };
    config.score_start = date(config.score_start);
    config.holdout_start = date(config.holdout_start);
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::data::synth;

    /// Share boundaries fall on the same dates for every instrument, on the
    /// combined timeline, even when the instruments cover different spans.
    #[test]
    fn share_windows_start_on_the_same_dates_for_every_instrument() {
        let config = Config::parse(
            "[strategy]\nname = \"sma_cross\"\n[score]\nscore_start = \"40%\"\nholdout_start = \"80%\"\n",
        )
        .unwrap();
        let long = synth(1000, 1);
        // The second half of the same days, other prices.
        let mut short = synth(500, 2);
        short.time.copy_from_slice(&long.time[500..]);
        let strategy = config.strategy().unwrap();
        let market = Market::new(
            &config.scoring(),
            vec![
                ("long".into(), long.clone()),
                ("short".into(), short.clone()),
            ],
            &*strategy,
        )
        .unwrap();
        // Combined timeline = the long series' 1,000 days: 40% → day 400, 80% → day 800.
        let starts = |i: &Instrument| {
            let w = &i.scoring.windows;
            (
                i.bars.time[w.score.start],
                i.bars.time[w.holdout.unwrap().start],
            )
        };
        assert_eq!(
            starts(&market.instruments[0]),
            (long.time[400], long.time[800])
        );
        // The short series starts after day 400: its score window starts at its first bar.
        assert_eq!(market.instruments[1].scoring.windows.score.start, 0);
        assert_eq!(starts(&market.instruments[1]).1, long.time[800]);
        // One instrument keeps the plain share of its own bars.
        let alone =
            Market::new(&config.scoring(), vec![("short".into(), short)], &*strategy).unwrap();
        assert_eq!(
            alone.instruments[0].scoring.windows.holdout.unwrap().start,
            400
        );
    }
}
