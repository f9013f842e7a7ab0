//! The instruments a study runs on. Each has its own bars and its own
//! scoring (windows at the same dates, its own annualization); a
//! combination's objective is the [`Aggregation`] of theirs. One instrument
//! is the common case, and gives exactly the single-instrument numbers.

use std::path::Path;

use crate::config::Config;
use crate::data::Bars;
use crate::error::{Error, Result};
use crate::evaluate::Scoring;
use crate::metrics::Aggregation;
use crate::strategy::Strategy;

/// One instrument: a name, its bars and how they are scored.
#[derive(Debug, Clone)]
pub struct Instrument {
    pub name: String,
    pub bars: Bars,
    pub scoring: Scoring,
}

/// Every instrument of a study, in the order given, and how their
/// objectives combine.
#[derive(Debug, Clone)]
pub struct Market {
    pub instruments: Vec<Instrument>,
    pub aggregation: Aggregation,
}

impl Market {
    /// Scores each named bar series under `config`; `strategy` checks that
    /// each has what it reads. Errors name the instrument when there are
    /// several.
    pub fn new(
        config: &Config,
        data: Vec<(String, Bars)>,
        strategy: &dyn Strategy,
    ) -> Result<Market> {
        if data.is_empty() {
            return Err(Error::Invalid("no instrument to study".into()));
        }
        let several = data.len() > 1;
        let name_it = |name: &str, e: Error| match (several, e) {
            (true, Error::Config { key, message }) => Error::Config {
                key,
                message: format!("instrument '{name}': {message}"),
            },
            (true, Error::Invalid(message)) => {
                Error::Invalid(format!("instrument '{name}': {message}"))
            }
            (_, e) => e,
        };
        let mut instruments = Vec::with_capacity(data.len());
        for (name, bars) in data {
            if instruments.iter().any(|i: &Instrument| i.name == name) {
                return Err(Error::config(
                    "data.names",
                    format!("instrument name '{name}' is used twice; instruments must not repeat (set data.names)"),
                ));
            }
            strategy.check_data(&bars).map_err(|e| name_it(&name, e))?;
            let scoring = Scoring::new(config, &bars).map_err(|e| name_it(&name, e))?;
            instruments.push(Instrument {
                name,
                bars,
                scoring,
            });
        }
        Ok(Market {
            instruments,
            aggregation: config.aggregation,
        })
    }

    /// One instrument named `name`.
    pub fn single(
        config: &Config,
        name: &str,
        bars: Bars,
        strategy: &dyn Strategy,
    ) -> Result<Market> {
        Market::new(config, vec![(name.to_string(), bars)], strategy)
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
