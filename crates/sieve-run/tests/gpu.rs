//! GPU vs CPU screening (`--features gpu`) on grids of 50,000–100,000+
//! combinations, built-ins and rule strategies: the GPU top 1,000 overlaps
//! the CPU's by at least 99 %, and verifying either gives the same best. Skipped without an adapter unless
//! `SIEVE_REQUIRE_GPU` is set (CI installs lavapipe and sets it).
#![cfg(feature = "gpu")]

use sieve_core::config::Config;
use sieve_core::data::synth;
use sieve_run::candidates::Candidate;
use sieve_run::shard::Shard;
use sieve_run::sweep::{self, SweepPlan};
use sieve_run::{verify, Study};
use sieve_screen::{CpuBackend, GpuBackend, Screen, ScreenBackend};

fn gpu() -> Option<GpuBackend> {
    match GpuBackend::new() {
        Ok(b) => Some(b),
        Err(e) if std::env::var_os("SIEVE_REQUIRE_GPU").is_none() => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("SIEVE_REQUIRE_GPU is set but: {e}"),
    }
}

fn screen(study: &Study, backend: &dyn ScreenBackend, top: usize) -> Screen {
    let plan = SweepPlan {
        backend,
        batch: sieve_screen::Batch::whole(study.space().size()),
        shard: Shard::WHOLE,
        top,
        threads: 0,
        resume: None,
        stop: None,
    };
    match sweep::run(study, &plan, &mut |_| {
        Ok(std::ops::ControlFlow::Continue(()))
    })
    .unwrap()
    {
        sieve_run::control::Ended::Done(swept) => swept.screen,
        sieve_run::control::Ended::Stopped(_) => panic!("never stopped"),
    }
}

fn best_verified(study: &Study, screen: &Screen) -> Vec<f64> {
    let list: Vec<Candidate> = screen
        .top
        .iter()
        .enumerate()
        .map(|(i, s)| Candidate {
            line: i as u64 + 2,
            grid_index: s.index,
            screen_rank: i as u64 + 1,
            params: study.space().params_of(s.index),
        })
        .collect();
    let sieve_run::control::Ended::Done(v) = verify::verify(study, list, 0, None, &|| {}).unwrap()
    else {
        panic!("never stopped")
    };
    v.rows[0].candidate.params.clone()
}

/// Sweeps of at least `least` combinations: the built-ins' hand-written
/// kernels and rule strategies' generated ones.
const CASES: [(&str, &str, &str, u64); 5] = [
    (
        "sma_cross",
        "name = \"sma_cross\"",
        "fast = { start = 2, stop = 400, step = 1 }\nslow = { start = 10, stop = 600, step = 1 }",
        100_000,
    ),
    (
        "activation",
        "name = \"activation\"",
        "trend_len = { start = 20, stop = 200, step = 20 }\nrsi_len = 14\ndc_len = { values = [20, 30, 40] }\natr_len = 14\nw_trend = 1.0\nw_rsi = { start = 0, stop = 1, step = 0.25 }\nw_dc = 1.0\nentry = { start = 0.1, stop = 0.7, step = 0.05 }\nexit = { start = -0.3, stop = 0.3, step = 0.05 }\nstop_atr = { start = 0, stop = 4, step = 1 }",
        100_000,
    ),
    (
        "rule cross",
        "name = \"sma_rules\"\nentry = \"cross_above(sma(close, fast), sma(close, slow))\"\nexit = \"cross_below(sma(close, fast), sma(close, slow))\"",
        "fast = { start = 2, stop = 250, step = 1 }\nslow = { start = 10, stop = 260, step = 1 }",
        50_000,
    ),
    (
        "rule MACD with defines",
        "name = \"macd_rules\"\nentry = \"cross_above(macd, signal) and close > sma(close, trend)\"\nexit = \"cross_below(macd, signal)\"\nconstraints = [\"fast < slow\"]\ndefine = { macd = \"ema(close, fast) - ema(close, slow)\", signal = \"ema(macd, sig)\" }",
        "fast = { start = 4, stop = 30, step = 1 }\nslow = { start = 20, stop = 80, step = 2 }\nsig = { values = [5, 7, 9, 13] }\ntrend = { start = 50, stop = 390, step = 20 }",
        50_000,
    ),
    (
        "rule threshold with if and clamp",
        "name = \"threshold_rules\"\nentry = \"clamp(rsi(close, n), 0, 100) < lo and close > if(lo > 30, sma(close, 50), lowest(close, 20))\"\nexit = \"rsi(close, n) > lo + band or cross_below(close, sma(close, 50))\"",
        "n = { start = 5, stop = 30, step = 1 }\nlo = { start = 20, stop = 45, step = 0.5 }\nband = { start = 10, stop = 50, step = 1 }",
        50_000,
    ),
];

#[test]
fn gpu_top_1000_overlaps_cpu_and_verifies_to_the_same_best() {
    let Some(gpu) = gpu() else { return };
    // The first case also screens the full window with the score window
    // inside it: the trials' Sharpe is then the score window's, from the
    // same pass.
    let full = ("full window", CASES[0].1, CASES[0].2, CASES[0].3);
    for (k, (name, strategy, grid, least)) in CASES.iter().copied().chain([full]).enumerate() {
        let screen_window = if k == CASES.len() {
            "screen_window = \"full\"\n"
        } else {
            ""
        };
        let config = Config::parse(&format!(
            "[strategy]\n{strategy}\n[strategy.params]\n{grid}\n[score]\nscore_start = \"2019-01-01\"\n{screen_window}"
        ))
        .unwrap();
        let study = Study::new(config, synth(4000, 42), "synthetic".into()).unwrap();
        if study.config().rules.is_some() {
            // The generated kernel runs these (no CPU fallback).
            assert!(
                sieve_screen::wgsl::strategy_module(study.strategy()).is_ok(),
                "{name}"
            );
        }
        let cpu = screen(&study, &CpuBackend, 1000);
        assert!(
            cpu.stats.total().evaluated >= least,
            "{name}: {} combinations",
            cpu.stats.total().evaluated
        );
        let gpu_screen = screen(&study, &gpu, 1000);
        assert_eq!(
            gpu_screen.stats.total().evaluated,
            cpu.stats.total().evaluated
        );
        // Chunk by chunk, the same tree (what merges shards exactly).
        let shape = |t: &sieve_screen::StatsTree| -> Vec<(u64, u32, u64, u64)> {
            t.nodes()
                .iter()
                .map(|n| (n.start, n.level, n.stats.evaluated, n.stats.nan))
                .collect()
        };
        assert_eq!(shape(&gpu_screen.stats), shape(&cpu.stats), "{name}");
        let cpu_set: std::collections::HashSet<u64> = cpu.top.iter().map(|s| s.index).collect();
        let overlap = gpu_screen
            .top
            .iter()
            .filter(|s| cpu_set.contains(&s.index))
            .count();
        eprintln!(
            "{name}: {} combinations, top-1000 overlap {overlap}",
            cpu.stats.total().evaluated
        );
        assert!(overlap >= 990, "{name}: overlap {overlap} of 1000");
        // The Deflated Sharpe's trial variance, from f32 Sharpes on the
        // device: within 1e-3 of the exact one.
        let (c, g) = (cpu.sharpe.total(), gpu_screen.sharpe.total());
        assert!(
            g.count as f64 >= c.count as f64 * 0.999,
            "{name}: {} vs {}",
            g.count,
            c.count
        );
        let (vc, vg) = (c.variance(), g.variance());
        assert!((vc - vg).abs() <= 1e-3 * vc, "{name}: V {vg} vs {vc}");
        assert_eq!(
            best_verified(&study, &gpu_screen),
            best_verified(&study, &cpu),
            "{name}"
        );
    }
}
