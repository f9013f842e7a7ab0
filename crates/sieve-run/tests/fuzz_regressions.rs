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

/// Corrupt Parquet/Arrow files: an error naming the format, never a panic
/// (arrow-ipc panicked on the first one kept).
#[test]
fn columnar_reader() {
    for (path, bytes) in inputs("columnar_reader") {
        match sieve_core::data::parse(bytes, &Default::default()) {
            Ok(loaded) => assert!(!loaded.bars.is_empty(), "{}", path.display()),
            Err(e) => assert!(e.contains("not a readable"), "{}: {e}", path.display()),
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
            let strategy = config.strategy().unwrap();
            let _ = config.space(&*strategy).map(|space| space.size());
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

/// Corrupt or tampered shard metas (huge or zero counts, indices past the
/// count, ranges that do not match, mixed backends): an error, never a
/// panic; a valid set is accepted only when complete.
#[test]
fn sweep_meta() {
    let mut accepted = 0;
    for (path, bytes) in inputs("sweep_meta") {
        let metas: Vec<_> = bytes
            .split(|&b| b == 0)
            .take(4)
            .enumerate()
            .filter_map(|(i, part)| {
                let meta = serde_json::from_slice::<sieve_run::sweep::SweepMeta>(part).ok()?;
                Some((PathBuf::from(format!("part-{i}.csv")), meta))
            })
            .collect();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match sieve_run::merge::check_parts(&metas) {
            Ok(()) => {
                assert!(name.starts_with("valid"), "{name} was accepted");
                assert_eq!(metas.len() as u64, metas[0].1.shard.count);
                accepted += 1;
            }
            Err(e) => {
                assert!(!name.starts_with("valid"), "{name}: {e}");
                if name == "mixed-backends" {
                    assert!(e.to_string().contains("gpu backend"), "{e}");
                }
            }
        }
    }
    assert_eq!(accepted, 1);
}

#[test]
fn rule_parser() {
    for (_, bytes) in inputs("rule_parser") {
        if let Ok(text) = std::str::from_utf8(&bytes) {
            sieve_core::rules::fuzz_one(text);
        }
    }
}
