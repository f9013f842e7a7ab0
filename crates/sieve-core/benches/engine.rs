//! One `activation` backtest on 4,000 synthetic daily bars, single thread:
//! with its indicators computed inside the measurement, and with them
//! precomputed (the verify / screen situation).

use criterion::{criterion_group, criterion_main, Criterion};
use sieve_core::config::Config;
use sieve_core::data::synth;
use sieve_core::evaluate::{Evaluator, Scoring};
use sieve_core::indicators::IndicatorSet;
use sieve_core::strategy;

fn activation(c: &mut Criterion) {
    let bars = synth(4000, 42);
    let config = Config::parse("[score]\nscore_start = \"2019-01-01\"\n").unwrap();
    let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
    let s = strategy::lookup("activation").unwrap();
    let params = strategy::default_params(s);
    let keys = strategy::indicators_for(s, &params);

    c.bench_function("activation_backtest_with_indicators", |b| {
        b.iter(|| {
            // Sequential build: this measures one backtest on one thread.
            let ind = IndicatorSet::build_sequential(&bars, keys.iter().copied());
            let eval = Evaluator {
                bars: &bars,
                strategy: s,
                indicators: &ind,
                scoring: &scoring,
                portfolio: None,
            };
            eval.backtest_with_metrics(&params, &[scoring.windows.score])
        })
    });

    let ind = IndicatorSet::build(&bars, keys.iter().copied());
    let eval = Evaluator {
        bars: &bars,
        strategy: s,
        indicators: &ind,
        scoring: &scoring,
        portfolio: None,
    };
    c.bench_function("activation_backtest_precomputed", |b| {
        b.iter(|| eval.backtest_with_metrics(&params, &[scoring.windows.score]))
    });
    let mut scratch = Vec::new();
    c.bench_function("activation_screen_precomputed", |b| {
        b.iter(|| eval.screen(&params, &mut scratch))
    });
}

criterion_group!(benches, activation);
criterion_main!(benches);
