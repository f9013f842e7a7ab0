//! Turns the common flags into a checked config and loaded bars.

use anyhow::Result;
use sieve_core::config::Config;
use sieve_core::data::{self, Bars};

use crate::args::Common;

/// Bars of the built-in example data (`sieve synth` defaults).
pub const EXAMPLE_BARS: usize = 4000;
pub const EXAMPLE_SEED: u64 = 42;

impl Inputs {
    /// The checked study (strategy, grid, windows, hashes).
    pub fn into_study(self) -> Result<sieve_run::Study> {
        Ok(sieve_run::Study::new(
            self.config,
            self.bars,
            self.data_label,
        )?)
    }
}

pub struct Inputs {
    pub config: Config,
    pub bars: Bars,
    /// Where the bars came from, for messages and run files.
    pub data_label: String,
}

pub fn load(common: &Common) -> Result<Inputs> {
    let config = Config::load(common.config.as_deref(), &overrides(common))?;
    with_config(common, config)
}

/// The `-O` overrides plus `--strategy`.
pub fn overrides(common: &Common) -> Vec<String> {
    let mut options = common.options.clone();
    if let Some(name) = &common.strategy {
        options.push(format!("strategy.name=\"{name}\""));
    }
    options
}

/// Loads the data for an already checked config (`--data` wins).
pub fn with_config(common: &Common, mut config: Config) -> Result<Inputs> {
    if let Some(p) = &common.data {
        config.data = Some(p.clone());
    }
    let (bars, data_label) = match &config.data {
        Some(path) => (data::load_csv(path)?, path.display().to_string()),
        None => {
            if common.verbose {
                eprintln!(
                    "note: no data file given; using the built-in synthetic series ({EXAMPLE_BARS} daily bars, seed {EXAMPLE_SEED})"
                );
            }
            (
                data::synth(EXAMPLE_BARS, EXAMPLE_SEED),
                format!("the synthetic series (seed {EXAMPLE_SEED})"),
            )
        }
    };
    Ok(Inputs {
        config,
        bars,
        data_label,
    })
}

/// Files a command reads (config, data), which no output may overwrite.
pub fn input_paths<'a>(common: &'a Common, config: &'a Config) -> Vec<&'a std::path::Path> {
    [common.config.as_deref(), config.data.as_deref()]
        .into_iter()
        .flatten()
        .collect()
}
