//! The deterministic synthetic daily series used by tests, benchmarks and the
//! zero-config demo.
//!
//! Model: a regime-switching geometric random walk. Three regimes (bull,
//! bear, sideways) each have a daily drift and volatility; each day the regime
//! persists with probability 0.985, else jumps to one of the other two. Close
//! is the previous close times exp(drift + vol·z). Open gaps slightly from
//! the previous close; high/low extend beyond open/close by a half-normal
//! fraction of the day's volatility, so every bar is valid OHLC. One bar per
//! calendar day from 2015-01-01 UTC, like a crypto market.
//!
//! The random numbers come from [`SplitMix64`] (written here rather than
//! taken from a crate so the series can never change under a dependency
//! update).

use crate::data::{Bars, MS_PER_DAY};
use crate::random::SplitMix64;

/// 2015-01-01T00:00:00Z in unix milliseconds.
const START_MS: i64 = 1_420_070_400_000;

/// (daily drift, daily volatility) per regime.
const REGIMES: [(f64, f64); 3] = [(0.0015, 0.025), (-0.0012, 0.035), (0.0, 0.015)];
const STAY_PROBABILITY: f64 = 0.985;

/// `n` synthetic daily bars from `seed`.
pub fn synth(n: usize, seed: u64) -> Bars {
    let mut rng = SplitMix64(seed);
    let mut bars = Bars {
        time: Vec::with_capacity(n),
        open: Vec::with_capacity(n),
        high: Vec::with_capacity(n),
        low: Vec::with_capacity(n),
        close: Vec::with_capacity(n),
        volume: Some(Vec::with_capacity(n)),
        timezone: None,
        extra: Vec::new(),
        unread: Vec::new(),
        detail: None,
        frames: None,
    };
    let mut regime = 2usize;
    let mut prev_close = 100.0_f64;
    for i in 0..n {
        if rng.uniform() > STAY_PROBABILITY {
            regime = (regime + 1 + (rng.uniform() * 2.0) as usize % 2) % 3;
        }
        let (drift, vol) = REGIMES[regime];
        let open = prev_close * (0.002 * rng.normal()).exp();
        let close = prev_close * (drift + vol * rng.normal()).exp();
        let high = open.max(close) * (0.5 * vol * rng.normal().abs()).exp();
        let low = open.min(close) * (-0.5 * vol * rng.normal().abs()).exp();
        let volume = (1.0e6 * (0.3 * rng.normal()).exp()).round();
        bars.time.push(START_MS + i as i64 * MS_PER_DAY);
        bars.open.push(open);
        bars.high.push(high);
        bars.low.push(low);
        bars.close.push(close);
        if let Some(v) = bars.volume.as_mut() {
            v.push(volume);
        }
        prev_close = close;
    }
    bars
}

/// Bars of `k` consecutive bars of `fine` each (the last may have fewer),
/// stamped at the first's time: open the first's, high the highest, low
/// the lowest, close the last's, volume the sum. For detail bars
/// (`data.detail`) under bars made from them.
pub fn coarsen(fine: &Bars, k: usize) -> Bars {
    let k = k.max(1);
    let first = |col: &[f64]| col.iter().step_by(k).copied().collect::<Vec<f64>>();
    let each = |col: &[f64], f: fn(&[f64]) -> f64| col.chunks(k).map(f).collect::<Vec<f64>>();
    Bars {
        time: fine.time.iter().step_by(k).copied().collect(),
        open: first(&fine.open),
        high: each(&fine.high, |c| c.iter().fold(f64::MIN, |a, &b| a.max(b))),
        low: each(&fine.low, |c| c.iter().fold(f64::MAX, |a, &b| a.min(b))),
        close: each(&fine.close, |c| c[c.len() - 1]),
        volume: fine.volume.as_ref().map(|v| each(v, |c| c.iter().sum())),
        timezone: fine.timezone,
        extra: Vec::new(),
        unread: Vec::new(),
        detail: None,
        frames: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_series_other_seed_other_series() {
        let a = synth(500, 7);
        assert_eq!(a, synth(500, 7));
        assert_ne!(a.close, synth(500, 8).close);
    }

    #[test]
    fn bars_are_valid_daily_ohlc_from_2015() {
        let b = synth(4000, 42);
        assert_eq!(crate::format::time(b.time[0]), "2015-01-01");
        // 4,000 daily bars reach late 2025.
        assert!(crate::format::time(b.time[3999]).starts_with("2025-"));
        for i in 0..b.len() {
            assert!(b.low[i] > 0.0);
            assert!(b.high[i] >= b.open[i].max(b.close[i]));
            assert!(b.low[i] <= b.open[i].min(b.close[i]));
        }
    }

    #[test]
    fn written_file_loads_back_identically() {
        let b = synth(300, 3);
        let dir = std::env::temp_dir().join(format!("sieve-synth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.csv");
        crate::data::write_bars(&b, &path).unwrap();
        assert_eq!(
            crate::data::load(&path, &Default::default()).unwrap().bars,
            b
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
