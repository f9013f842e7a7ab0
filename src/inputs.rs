//! Turns the common flags into a checked config and loaded bars.
//!
//! Flags that mirror config keys (`--data`, `--strategy`, `--top`,
//! `--backend`) become `-O` overrides applied after the user's own, so every
//! command validates them the same way, in one place.

use std::path::{Path, PathBuf};

use anyhow::Result;
use sieve_core::config::Config;
use sieve_core::data::{self, Bars, LoadOptions};

use crate::args::Common;

/// Bars of the built-in example data (`sieve synth` defaults).
pub const EXAMPLE_BARS: usize = 4000;
pub const EXAMPLE_SEED: u64 = 42;

impl Inputs {
    /// The checked study (strategy, grid, windows, hashes).
    /// Also prints the settings that make results unreliable.
    pub fn into_study(self) -> Result<sieve_run::Study> {
        let study = sieve_run::Study::of_instruments(self.config, self.data, self.data_label)?;
        for i in &study.market.instruments {
            for w in sieve_run::study::warnings(&study.config, &i.scoring) {
                match study.market.is_several() {
                    true => eprintln!("warning: {}: {w}", i.name),
                    false => eprintln!("warning: {w}"),
                }
            }
        }
        Ok(study)
    }
}

pub struct Inputs {
    pub config: Config,
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
pub fn load_config(common: &Common, flags: &[(&str, Option<String>)]) -> Result<Config> {
    let config = Config::load(common.config.as_deref(), &overrides(common, flags))?;
    // Every command checks the run sections too: a typo is an error anywhere.
    sieve_run::settings::RunSettings::of(&config)?;
    Ok(config)
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

/// Whether the config (file and `-O` overrides) defines rules: its
/// `[strategy]` has an `entry` or `exit`.
pub fn has_rules(common: &Common) -> Result<bool> {
    let in_file = match &common.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            text.parse::<toml::Table>()
                .ok()
                .and_then(|t| t.get("strategy").and_then(|s| s.as_table()).cloned())
                .is_some_and(|s| s.contains_key("entry") || s.contains_key("exit"))
        }
        None => false,
    };
    let in_options = common
        .options
        .iter()
        .any(|o| o.starts_with("strategy.entry=") || o.starts_with("strategy.exit="));
    Ok(in_file || in_options)
}

/// Loads the data of an already checked config.
pub fn with_config(common: &Common, mut config: Config) -> Result<Inputs> {
    if !config.paths.is_empty() {
        let files = instrument_files(&config)?;
        let mut data = Vec::with_capacity(files.len());
        for (name, path) in &files {
            let loaded = load_bars(path, &config)?;
            for n in &loaded.notices {
                eprintln!("{name}: {n}");
            }
            data.push((name.clone(), loaded.bars));
        }
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        let data_label = format!("{} instruments ({})", names.len(), names.join(", "));
        // From here on the files, not the patterns: run folders record them.
        config.paths = files.into_iter().map(|(_, p)| p).collect();
        return Ok(Inputs {
            config,
            data,
            data_label,
        });
    }
    let (bars, data_label) = match &config.data {
        Some(path) => {
            let loaded = load_bars(path, &config)?;
            for n in &loaded.notices {
                eprintln!("{n}");
            }
            let label = common.data.as_deref().unwrap_or(path);
            (loaded.bars, label.display().to_string())
        }
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
        data: vec![(String::new(), bars)],
        data_label,
    })
}

/// `data.paths` expanded (glob patterns, each pattern's matches sorted) and
/// named (`data.names`, else the file stems).
pub fn instrument_files(config: &Config) -> Result<Vec<(String, PathBuf)>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for pattern in &config.paths {
        let text = pattern.to_string_lossy();
        if !text.contains(['*', '?', '[']) {
            files.push(pattern.clone());
            continue;
        }
        let matches = glob::glob(&text)
            .map_err(|e| anyhow::anyhow!("config: data.paths: bad pattern \"{text}\": {e}"))?;
        let mut found: Vec<PathBuf> = Vec::new();
        for m in matches {
            let path = m.map_err(|e| anyhow::anyhow!("config: data.paths: \"{text}\": {e}"))?;
            if path.is_file() {
                found.push(path);
            }
        }
        if found.is_empty() {
            anyhow::bail!("config: data.paths: \"{text}\" matches no file");
        }
        found.sort();
        files.extend(found);
    }
    let names: Vec<String> = match &config.names {
        Some(names) if names.len() != files.len() => anyhow::bail!(
            "config: data.names: {} name(s) for {} file(s) of data.paths ({})",
            names.len(),
            files.len(),
            files
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Some(names) => names.clone(),
        None => files
            .iter()
            .map(|p| sieve_core::market::name_of(p))
            .collect(),
    };
    for (i, name) in names.iter().enumerate() {
        if !sieve_core::market::is_instrument_name(name) {
            anyhow::bail!(
                "config: data.paths: the file stem \"{name}\" ({}) cannot name an instrument; set data.names",
                files[i].display()
            );
        }
        if let Some(j) = names[..i].iter().position(|n| n == name) {
            let hint = match config.names {
                Some(_) => "",
                None => " (name them with data.names)",
            };
            anyhow::bail!(
                "config: data.names: instrument '{name}' names both {} and {}; instruments must not repeat{hint}",
                files[j].display(),
                files[i].display()
            );
        }
    }
    Ok(names.into_iter().zip(files).collect())
}

/// Reads a data file the way `config` says (`data.adjust`).
pub fn load_bars(path: &Path, config: &Config) -> Result<data::Loaded> {
    let options = LoadOptions {
        adjust: config.adjust,
        columns: config.columns.clone(),
    };
    Ok(data::load(path, &options)?)
}

/// Files a command reads (config, data), which no output may overwrite.
pub fn input_paths<'a>(common: &'a Common, config: &'a Config) -> Vec<&'a Path> {
    [common.config.as_deref(), config.data.as_deref()]
        .into_iter()
        .flatten()
        .chain(config.paths.iter().map(PathBuf::as_path))
        .collect()
}
