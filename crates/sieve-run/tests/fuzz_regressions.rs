//! Inputs kept from fuzzing (`tests/data/fuzz/<target>/`) and edge cases
//! written for the fuzz targets: each must give a value or an error, never
//! a panic, exactly as the `fuzz/` targets check.

use std::path::PathBuf;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/fuzz")
        .join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no inputs in {}", dir.display());
    v
}

#[test]
fn csv_loader() {
    for (path, bytes) in inputs("csv_loader") {
        if let Ok(bars) = sieve_core::data::parse_csv(&bytes) {
            assert!(
                bars.close.iter().all(|c| c.is_finite() && *c > 0.0),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn config_parser() {
    for (_, bytes) in inputs("config_parser") {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Ok(config) = sieve_core::config::Config::parse(text) {
            let strategy = sieve_core::strategy::lookup(&config.strategy).unwrap();
            let _ = sieve_core::grid::ParamSpace::from_config(
                strategy,
                config.params.as_ref(),
                config.constraints.as_deref(),
            )
            .map(|space| space.size());
        }
    }
}

#[test]
fn candidates_reader() {
    for (path, bytes) in inputs("candidates_reader") {
        for name in ["sma_cross", "activation"] {
            let strategy = sieve_core::strategy::lookup(name).unwrap();
            if let Ok(list) = sieve_run::candidates::parse(&bytes, strategy, Some(100)) {
                for c in &list {
                    sieve_core::strategy::check_params(strategy, &c.params)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
            }
        }
    }
}
