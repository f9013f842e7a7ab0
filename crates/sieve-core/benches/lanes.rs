//! The screen of 8 combinations on 4,000 synthetic daily bars, one thread:
//! one at a time ([`Evaluator::screen`]) against all 8 in lanes
//! ([`Evaluator::screen_lanes`]), and the strategy's position pass alone
//! (what both share), for `sma_cross` and `activation`.

use criterion::{criterion_group, criterion_main, Criterion};
use sieve_core::config::Config;
use sieve_core::data::synth;
use sieve_core::evaluate::{Evaluator, Scoring, ScreenScore};
use sieve_core::indicators::IndicatorSet;
use sieve_core::lanes::{LaneScratch, Level, LANES};
use sieve_core::strategy;

fn lanes(c: &mut Criterion) {
    let bars = synth(4000, 42);
    let config = Config::parse("[score]\nscore_start = \"2019-01-01\"\n").unwrap();
    let scoring = Scoring::new(&config.scoring(), &bars).unwrap();
    for name in ["sma_cross", "activation"] {
        let s = strategy::lookup(name).unwrap();
        let base = strategy::default_params(s);
        // Eight neighbours in grid order: the last parameter varies.
        let sets: Vec<Vec<f64>> = (0..LANES)
            .map(|l| {
                let mut p = base.clone();
                *p.last_mut().unwrap() += l as f64;
                p
            })
            .collect();
        let keys = Evaluator::indicators_for(s, sets.iter().map(Vec::as_slice));
        let ind = IndicatorSet::build(&bars, keys);
        let eval = Evaluator {
            bars: &bars,
            strategy: s,
            indicators: &ind,
            scoring: &scoring,
            portfolio: None,
        };
        let params: Vec<&[f64]> = sets.iter().map(Vec::as_slice).collect();
        let mut scratch = Vec::new();
        c.bench_function(&format!("{name}_screen_8_scalar"), |b| {
            b.iter(|| {
                params
                    .iter()
                    .map(|p| eval.screen(p, &mut scratch).objective)
                    .sum::<f64>()
            })
        });
        // Without the memo: every iteration would find the scores of the
        // one before.
        let mut lanes = LaneScratch::always(Level::best()).without_memo();
        let mut out = [ScreenScore {
            objective: 0.0,
            trades: 0,
            sharpe: 0.0,
        }; LANES];
        c.bench_function(&format!("{name}_screen_8_lanes"), |b| {
            b.iter(|| {
                eval.screen_lanes(&params, &mut lanes, &mut out);
                out[0].objective
            })
        });
        c.bench_function(&format!("{name}_positions_8"), |b| {
            b.iter(|| {
                for p in &params {
                    eval.positions(p, &mut scratch);
                }
                scratch[scratch.len() - 1]
            })
        });
    }
}

criterion_group!(benches, lanes);
criterion_main!(benches);
