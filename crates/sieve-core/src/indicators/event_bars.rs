//! The bars where a rule's crossing holds, per setting, found on first use
//! and kept beside the indicators: a rule whose every decision waits on a
//! crossing of fewer settings than the grid has combinations (`cross_above
//! (macd, signal) and close > sma(close, trend)`) then reads its rules on
//! those bars alone.
//!
//! The memo pays only when settings repeat; it turns itself off (and the
//! rules take their bar-by-bar path, with the same results) when most
//! lookups miss or it holds [`MAX_EVENTS`] bars.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;

use super::RuleSeries;

/// The most bars the memo keeps, all settings together (4 bytes each).
pub const MAX_EVENTS: usize = 1 << 22;
/// Lookups before the memo judges its hit rate.
const JUDGE_AFTER: u64 = 512;

#[derive(Default)]
pub struct EventBars {
    bars: RwLock<FxHashMap<RuleSeries, Arc<[u32]>>>,
    lookups: AtomicU64,
    misses: AtomicU64,
    kept: AtomicUsize,
    off: AtomicBool,
}

impl EventBars {
    /// The event bars of `key`, computed by `find` when not kept yet;
    /// `None` once the memo is off (the caller takes its other path).
    pub fn get(&self, key: RuleSeries, find: impl FnOnce() -> Vec<u32>) -> Option<Arc<[u32]>> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let lookups = self.lookups.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(found) = self.bars.read().ok()?.get(&key) {
            return Some(Arc::clone(found));
        }
        let misses = self.misses.fetch_add(1, Ordering::Relaxed) + 1;
        // Settings that rarely repeat: finding each costs what the rules'
        // own pass does, so the memo only adds work.
        if lookups >= JUDGE_AFTER && misses * 4 > lookups {
            self.off.store(true, Ordering::Relaxed);
            return None;
        }
        let found: Arc<[u32]> = find().into();
        if self.kept.fetch_add(found.len(), Ordering::Relaxed) + found.len() > MAX_EVENTS {
            self.off.store(true, Ordering::Relaxed);
            return None;
        }
        let mut map = self.bars.write().ok()?;
        Some(Arc::clone(map.entry(key).or_insert(found)))
    }

    /// Whether the memo turned itself off.
    pub fn is_off(&self) -> bool {
        self.off.load(Ordering::Relaxed)
    }
}

/// A copy starts empty (the bars are found again on first use).
impl Clone for EventBars {
    fn clone(&self) -> Self {
        EventBars::default()
    }
}

impl std::fmt::Debug for EventBars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBars")
            .field("settings", &self.bars.read().map(|m| m.len()).unwrap_or(0))
            .field("off", &self.is_off())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(node: u32, v: u64) -> RuleSeries {
        RuleSeries {
            node,
            setting: [v, 0, 0, 0, 0, 0],
        }
    }

    #[test]
    fn found_once_per_setting() {
        let memo = EventBars::default();
        let calls = std::cell::Cell::new(0);
        let find = || {
            calls.set(calls.get() + 1);
            vec![3, 7]
        };
        for _ in 0..10 {
            assert_eq!(&*memo.get(key(1, 5), find).unwrap(), &[3, 7]);
        }
        assert_eq!(&*memo.get(key(2, 5), || vec![1]).unwrap(), &[1]);
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn off_when_settings_rarely_repeat() {
        let memo = EventBars::default();
        let mut served = 0;
        for v in 0..2 * JUDGE_AFTER {
            served += usize::from(memo.get(key(0, v), || vec![1]).is_some());
        }
        assert!(memo.is_off());
        assert_eq!(served as u64, JUDGE_AFTER - 1);
        // Off stays off, even for a kept setting.
        assert!(memo.get(key(0, 0), || vec![1]).is_none());
    }

    #[test]
    fn off_past_its_budget() {
        let memo = EventBars::default();
        assert!(memo.get(key(0, 0), || vec![0; MAX_EVENTS]).is_some());
        assert!(memo.get(key(0, 1), || vec![0; 1]).is_none());
        assert!(memo.is_off());
    }
}
