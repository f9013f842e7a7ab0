//! Turns the common flags into a checked config and loaded bars.
//!
//! Flags that mirror config keys (`--data`, `--strategy`, `--top`,
//! `--backend`) become `-O` overrides applied after the user's own, so every
//! command validates them the same way, in one place.

use std::path::{Path, PathBuf};

use anyhow::Result;
use sieve_core::config::Config;
use sieve_core::data::Bars;
use sieve_run::settings::Checked;

use crate::args::Common;

pub use sieve_run::inputs::{EXAMPLE_BARS, EXAMPLE_SEED};

impl Inputs {
    /// The checked study (strategy, grid, windows, hashes).
    /// Also prints the settings that make results unreliable.
    pub fn into_study(self) -> Result<sieve_run::Study> {
        let study = sieve_run::Study::of_checked(self.config, self.data, self.data_label)?;
        for w in sieve_run::study::study_warnings(&study) {
            eprintln!("warning: {w}");
        }
        Ok(study)
    }
}

pub struct Inputs {
    pub config: Checked,
    /// Each instrument's name and bars (one unnamed for `data.path`).
    pub data: Vec<(String, Bars)>,
    /// Where the bars came from, for messages and run files.
    pub data_label: String,
}

/// Loads the config (file + overrides + `flags`) and then its data.
pub fn load(common: &Common, flags: &[(&str, Option<String>)]) -> Result<Inputs> {
    let config = load_config(common, flags)?;
    with_config(common, config)
}

/// The config file (if any) with the `-O` overrides, then the flags.
pub fn load_config(
    common: &Common,
    flags: &[(&str, Option<String>)],
) -> sieve_core::Result<Checked> {
    let config = Config::load(common.config.as_deref(), &overrides(common, flags))?;
    // Every command reads the run sections too (once): a typo is an error
    // anywhere.
    Checked::new(config)
}

/// A TOML string literal of `s` (quoted and escaped).
pub fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The `-O` overrides, then `--data`, `--strategy` and `flags` (`key`,
/// value as text): a flag wins over an `-O` of the same key.
pub fn overrides(common: &Common, flags: &[(&str, Option<String>)]) -> Vec<String> {
    let mut options = common.options.clone();
    if let Some(path) = &common.data {
        // Relative to where the user typed it, not to the config's folder.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        options.push(format!(
            "data.path={}",
            toml_string(&path.to_string_lossy())
        ));
    }
    if let Some(name) = &common.strategy {
        options.push(format!("strategy.name={}", toml_string(name)));
    }
    for (key, value) in flags {
        if let Some(v) = value {
            options.push(format!("{key}={v}"));
        }
    }
    options
}

/// Loads the data of an already checked config, printing what the loaders
/// noticed.
pub fn with_config(common: &Common, mut config: Checked) -> Result<Inputs> {
    if common.verbose && config.config.data.is_none() && config.config.paths.is_empty() {
        eprintln!(
            "note: no data file given; using the built-in synthetic series ({EXAMPLE_BARS} daily bars, seed {EXAMPLE_SEED})"
        );
    }
    let data = sieve_run::inputs::load_data(&mut config.config, common.data.as_deref())?;
    for n in &data.notices {
        eprintln!("{n}");
    }
    Ok(Inputs {
        config,
        data: data.instruments,
        data_label: data.label,
    })
}

/// Files a command reads (config, data, detail bars), which no output may overwrite.
pub fn input_paths<'a>(common: &'a Common, config: &'a Config) -> Vec<&'a Path> {
    [
        common.config.as_deref(),
        config.data.as_deref(),
        config.detail.as_deref(),
    ]
    .into_iter()
    .flatten()
    .chain(config.paths.iter().map(PathBuf::as_path))
    .collect()
}

/// What `-v` says of the GPU kernel a strategy gets.
pub fn gpu_kernel_note(strategy: &dyn sieve_core::strategy::Strategy) -> String {
    use sieve_core::strategy::GpuKernel;
    match strategy.gpu_kernel() {
        GpuKernel::Generated(k) => format!(
            "gpu kernel: generated from the rules of '{}' ({} bytes of WGSL; --emit-wgsl FILE writes it)",
            strategy.name(),
            sieve_screen::wgsl::generated_module(k.as_ref()).len()
        ),
        GpuKernel::Unsupported(why) => format!("gpu kernel: none; the rules use {why}: the CPU screens them"),
        GpuKernel::Cross | GpuKernel::Activation | GpuKernel::None => format!("gpu kernel: the hand-written one for '{}' where there is one", strategy.name()),
    }
}
