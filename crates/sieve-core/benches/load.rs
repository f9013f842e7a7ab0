//! Loading 1,000,000 one-minute bars (with volume) from CSV, Parquet (zstd)
//! and Arrow IPC/Feather (uncompressed), each written by `write_bars`.

use criterion::{criterion_group, criterion_main, Criterion};
use sieve_core::data::{load, synth, write_bars, LoadOptions};

const BARS: usize = 1_000_000;

fn load_formats(c: &mut Criterion) {
    let mut bars = synth(BARS, 42);
    // One-minute bars from 2015: a million daily bars would pass the year 2200.
    let t0 = bars.time[0];
    for (i, t) in bars.time.iter_mut().enumerate() {
        *t = t0 + i as i64 * 60_000;
    }
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut group = c.benchmark_group("load_1m_bars");
    group.sample_size(10);
    for name in ["bars.csv", "bars.parquet", "bars.feather"] {
        let path = dir.path().join(name);
        write_bars(&bars, &path).expect("write");
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        eprintln!("{name}: {:.1} MB", size as f64 / 1e6);
        group.bench_function(name, |b| {
            b.iter(|| {
                let loaded = load(&path, &LoadOptions::default()).expect("load");
                assert_eq!(loaded.bars.len(), BARS);
                loaded
            })
        });
    }
    group.finish();
}

criterion_group!(benches, load_formats);
criterion_main!(benches);
