//! `sieve strategies`: list the built-in strategies with their parameters,
//! defaults and default grids; with --config, describe the config's one.

use std::io::Write;

use anyhow::Result;
use sieve_core::config::Config;
use sieve_core::format::float;
use sieve_core::strategy::{registry, ParamKind};

use crate::args::StrategiesArgs;

pub fn run(a: StrategiesArgs) -> Result<()> {
    let mut out = String::new();
    let only = match &a.config {
        Some(path) => {
            let config = Config::load(Some(path), &a.options)?;
            let strategy = config.strategy()?;
            // A rule strategy is described over its grid; a built-in is
            // listed as `sieve strategies` lists it, whatever the grid says.
            if config.rules.is_some() || config.managed_builtin.is_some() {
                if let Some(text) = strategy.describe(&config.space(&*strategy)?) {
                    out.push_str(&text);
                    std::io::stdout().write_all(out.as_bytes())?;
                    return Ok(());
                }
            }
            Some(strategy.name().to_string())
        }
        None => None,
    };
    for s in registry()
        .iter()
        .filter(|s| only.as_deref().is_none_or(|n| n == s.name()))
    {
        out.push_str(&format!("{}\n    {}\n", s.name(), s.summary()));
        if !s.default_constraints().is_empty() {
            out.push_str(&format!(
                "    default constraints: {}\n",
                s.default_constraints().join(", ")
            ));
        }
        let header: Vec<String> = ["parameter", "kind", "default", "default grid", "about"]
            .iter()
            .map(|h| h.to_string())
            .collect();
        let rows: Vec<Vec<String>> = s
            .params()
            .iter()
            .map(|p| {
                let (start, stop, step) = p.grid;
                vec![
                    p.name.to_string(),
                    match p.kind {
                        ParamKind::Int => "int",
                        ParamKind::Float => "float",
                    }
                    .to_string(),
                    float(p.default),
                    format!("{}..={} step {}", float(start), float(stop), float(step)),
                    p.doc.to_string(),
                ]
            })
            .collect();
        for line in crate::output::table(&header, &rows).lines() {
            out.push_str(&format!("    {line}\n"));
        }
        out.push('\n');
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}
