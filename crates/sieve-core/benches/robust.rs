//! CSCV of the PBO at the size an optimize run meets: 5,000 verified
//! candidates × 16 blocks (12,870 splits).

use criterion::{criterion_group, criterion_main, Criterion};
use sieve_core::robust::pbo::{block_sums, pbo};

fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 0.02 - 0.01
        })
        .collect()
}

fn cscv(c: &mut Criterion) {
    let sums: Vec<_> = (0..5000)
        .map(|i| block_sums(&noise(i + 1, 2192), 16))
        .collect();
    let mut group = c.benchmark_group("pbo");
    group.sample_size(10);
    group.bench_function("cscv_5000x16", |b| b.iter(|| pbo(&sums, 16)));
    group.finish();
}

criterion_group!(benches, cscv);
criterion_main!(benches);
