//! A checked config's data: one file (`data.path`), several instruments
//! (`data.paths`, with `data.names`), or the built-in synthetic series.
//! The CLI and the Python package load data through here.

use std::path::{Path, PathBuf};

use sieve_core::config::Config;
use sieve_core::data::{self, Bars, LoadOptions};
use sieve_core::key;
use sieve_core::{Error, Result};

/// Bars of the built-in example data (`sieve synth` defaults).
pub const EXAMPLE_BARS: usize = 4000;
pub const EXAMPLE_SEED: u64 = 42;

/// The bars a study runs on.
pub struct Data {
    /// Each instrument's name and bars (one unnamed for `data.path`).
    pub instruments: Vec<(String, Bars)>,
    /// Where the bars came from, for messages and run files.
    pub label: String,
    /// What the loaders noticed (prefixed by the instrument's name).
    pub notices: Vec<String>,
}

/// Loads the data `config` names. With `data.paths`, the config's paths
/// become the expanded files (run folders record them, not the patterns).
/// `label` names a single file as the user wrote it.
pub fn load_data(config: &mut Config, label: Option<&Path>) -> Result<Data> {
    let options = config.load_options();
    load_data_with(config, label, &options)
}

/// [`load_data`] read with `options` (e.g. every other column, where the
/// rules are not yet known).
pub fn load_data_with(
    config: &mut Config,
    label: Option<&Path>,
    options: &LoadOptions,
) -> Result<Data> {
    let mut data = load_instruments(config, label, options)?;
    attach_informative(config, &mut data.instruments, options)?;
    Ok(data)
}

/// Reads `data.informative`'s instruments (none: nothing) and puts them
/// beside each instrument's bars.
pub fn attach_informative(
    config: &Config,
    instruments: &mut [(String, Bars)],
    options: &LoadOptions,
) -> Result<()> {
    let informative = load_informative(config, options)?;
    if !informative.is_empty() {
        give_informative(instruments, &informative);
    }
    Ok(())
}

/// Puts `informative` beside each instrument's bars.
pub fn give_informative(instruments: &mut [(String, Bars)], informative: &[data::Informative]) {
    for (_, bars) in instruments {
        bars.frames = Some(std::sync::Arc::new(data::Frames {
            informative: informative.to_vec(),
            ..data::Frames::default()
        }));
    }
}

/// `data.informative`'s instruments, each file read whole (every column:
/// a rule may read any inside `informative(…)`), prices as they are.
pub fn load_informative(config: &Config, options: &LoadOptions) -> Result<Vec<data::Informative>> {
    let mut out = Vec::new();
    for (name, path) in &config.informative {
        if !path.is_file() {
            return Err(Error::config(
                format!("data.informative.{name}"),
                format!("{}: no such file", path.display()),
            ));
        }
        let options = LoadOptions {
            extra: None,
            columns: None,
            adjust: options.adjust,
        };
        let loaded = data::load(path, &options)?;
        out.push(data::Informative {
            name: name.clone(),
            bars: std::sync::Arc::new(loaded.bars),
        });
    }
    Ok(out)
}

/// The instruments' bars of [`load_data_with`].
fn load_instruments(
    config: &mut Config,
    label: Option<&Path>,
    options: &LoadOptions,
) -> Result<Data> {
    let mut notices = Vec::new();
    if !config.paths.is_empty() {
        let files = instrument_files(config)?;
        let mut instruments = Vec::with_capacity(files.len());
        for (name, path) in &files {
            let loaded = data::load(path, options)?;
            notices.extend(loaded.notices.iter().map(|n| format!("{name}: {n}")));
            instruments.push((name.clone(), loaded.bars));
        }
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        let several = if names.len() == 1 {
            "instrument"
        } else {
            "instruments"
        };
        let label = format!("{} {several} ({})", names.len(), names.join(", "));
        config.paths = files.into_iter().map(|(_, p)| p).collect();
        return Ok(Data {
            instruments,
            label,
            notices,
        });
    }
    let (bars, label) = match &config.data {
        Some(path) => {
            let loaded = data::load(path, options)?;
            notices = loaded.notices;
            let mut bars = loaded.bars;
            notices.extend(attach_detail(config, &mut bars, options)?);
            (bars, label.unwrap_or(path).display().to_string())
        }
        None if config.detail.is_some() => {
            return Err(Error::config(
                key::DATA_DETAIL,
                "detail bars go under the bars of data.path, which is not set",
            ))
        }
        None => (
            data::synth(EXAMPLE_BARS, EXAMPLE_SEED),
            format!("the synthetic series (seed {EXAMPLE_SEED})"),
        ),
    };
    Ok(Data {
        instruments: vec![(String::new(), bars)],
        label,
        notices,
    })
}

/// Maps the detail bars of `data.detail` (no other column, not adjusted)
/// under `bars`; the line saying how much they cover.
pub fn attach_detail(
    config: &Config,
    bars: &mut Bars,
    options: &LoadOptions,
) -> Result<Option<String>> {
    let Some(path) = &config.detail else {
        return Ok(None);
    };
    if !path.is_file() {
        return Err(Error::config(
            key::DATA_DETAIL,
            format!("{}: no such file", path.display()),
        ));
    }
    // The layout of a header-less data file (`data.columns`) is the
    // detail file's too, where it has no header of its own; prices are
    // read as they are (intraday files carry no adjusted close).
    let read = |columns: Option<Vec<String>>| {
        let options = LoadOptions {
            columns,
            adjust: false,
            extra: Some(Vec::new()),
        };
        data::load(path, &options)
    };
    let fine = match read(None) {
        Err(e) if options.columns.is_some() => read(options.columns.clone()).map_err(|_| e),
        read => read,
    }?
    .bars;
    let mapped =
        data::Detail::map(bars.prices(), fine.prices()).map_err(|message| Error::Data {
            path: path.to_path_buf(),
            message,
        })?;
    let summary = mapped.summary(bars.len());
    bars.detail = Some(std::sync::Arc::new(mapped));
    Ok(Some(summary))
}

/// `data.paths` expanded (glob patterns, each pattern's matches sorted) and
/// named (`data.names`, else the file stems).
pub fn instrument_files(config: &Config) -> Result<Vec<(String, PathBuf)>> {
    let bad = |message: String| Error::config(key::DATA_PATHS, message);
    let mut files: Vec<PathBuf> = Vec::new();
    for pattern in &config.paths {
        let text = pattern.to_string_lossy();
        if !text.contains(['*', '?', '[']) {
            files.push(pattern.clone());
            continue;
        }
        let matches = glob::glob(&text).map_err(|e| bad(format!("bad pattern \"{text}\": {e}")))?;
        let mut found: Vec<PathBuf> = Vec::new();
        for m in matches {
            let path = m.map_err(|e| bad(format!("\"{text}\": {e}")))?;
            if path.is_file() {
                found.push(path);
            }
        }
        if found.is_empty() {
            return Err(bad(format!("\"{text}\" matches no file")));
        }
        found.sort();
        files.extend(found);
    }
    let list = |files: &[PathBuf]| {
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let names: Vec<String> = match &config.names {
        Some(names) if names.len() != files.len() => {
            return Err(Error::config(
                key::DATA_NAMES,
                format!(
                    "{} name(s) for {} file(s) of data.paths ({})",
                    names.len(),
                    files.len(),
                    list(&files)
                ),
            ))
        }
        Some(names) => names.clone(),
        None => files
            .iter()
            .map(|p| sieve_core::market::name_of(p))
            .collect(),
    };
    for (i, name) in names.iter().enumerate() {
        if !sieve_core::market::is_instrument_name(name) {
            return Err(bad(format!(
                "the file stem \"{name}\" ({}) cannot name an instrument; set data.names",
                files[i].display()
            )));
        }
        if let Some(j) = names[..i].iter().position(|n| n == name) {
            let hint = match config.names {
                Some(_) => "",
                None => " (name them with data.names)",
            };
            return Err(Error::config(
                key::DATA_NAMES,
                format!(
                    "instrument '{name}' names both {} and {}; instruments must not repeat{hint}",
                    files[j].display(),
                    files[i].display()
                ),
            ));
        }
    }
    Ok(names.into_iter().zip(files).collect())
}

/// Reads a data file the way `config` says (`data.adjust`, `data.columns`).
pub fn load_bars(path: &Path, config: &Config) -> Result<data::Loaded> {
    data::load(path, &config.load_options())
}
