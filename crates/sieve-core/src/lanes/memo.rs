//! Scores already computed, by the targets that produced them.
//!
//! The engine sees a combination only through its targets, so two
//! combinations with the same targets on the same instrument score exactly
//! the same. Grids repeat targets often: a weight of 0 makes another
//! parameter irrelevant, a stop of 0 ignores the ATR length, thresholds past
//! the score's range never fire (on the `activation` benchmark grid 47 % of
//! the combinations repeat an earlier one's targets). [`TargetMemo`] keeps
//! the scores of recent targets, shared by all workers: a hit skips the
//! engine and returns the very bits the engine gave. Which worker computed
//! an entry first changes nothing in any result.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::evaluate::{Scoring, ScreenScore};
use crate::strategy::Changes;

/// What an instrument slot of a memo was screened with: its bars (where
/// they are and how many), its scoring, and the strategy (whose keys of
/// parameter sets are its own).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner {
    pub bars: (usize, usize),
    pub scoring: Scoring,
    pub strategy: usize,
}

impl PartialEq for Owner {
    /// The same owner bit for bit: the bars per year measured from one bar
    /// are NaN, and a NaN is the same scoring as itself.
    fn eq(&self, other: &Owner) -> bool {
        let plain = |s: &Scoring| Scoring {
            periods_per_year: 0.0,
            ..*s
        };
        self.bars == other.bars
            && self.strategy == other.strategy
            && self.scoring.periods_per_year.to_bits() == other.scoring.periods_per_year.to_bits()
            && plain(&self.scoring) == plain(&other.scoring)
    }
}

/// Locks that divide the memo, so that many workers rarely wait.
const SHARDS: usize = 16;
/// Bytes kept by default (each shard holds two generations of at most
/// half its share).
pub const DEFAULT_BYTES: usize = 64 << 20;
/// Bytes an entry costs besides its key's words: its place in the index
/// and in the entry list.
const ENTRY_BYTES: usize = 16 + std::mem::size_of::<Entry>();

/// Scores by (instrument, targets), bounded in memory: when a shard's
/// newer generation is full, the older one is dropped and the newer takes
/// its place, so recent targets stay and memory stays under the budget.
pub struct TargetMemo {
    shards: Vec<Mutex<Shard>>,
    shard_bytes: usize,
    /// Set once targets are seen to rarely repeat: looking them up would
    /// cost more than the hits save (`sma_cross` over all pairs: 0.9×).
    off: AtomicBool,
    /// Lookups and hits reported by the workers.
    lookups: AtomicU64,
    hits: AtomicU64,
    /// Per instrument slot, what scored it: a memo serves one screen, and
    /// mixing screens would return another screen's scores.
    owners: Mutex<Vec<Option<Owner>>>,
}

#[derive(Default)]
struct Shard {
    newer: Generation,
    older: Generation,
}

/// Lookups a worker counts before it reports them.
pub(crate) const REPORT_EVERY: u64 = 128;
/// Lookups before the hit rate decides anything.
const MIN_LOOKUPS: u64 = 1024;
/// The memo stays on while at least one lookup in this many hits.
const MIN_HIT_RATE: u64 = 16;

/// Entries with their keys' words in one buffer: no allocation per entry,
/// and a turnover keeps every buffer's capacity.
#[derive(Default)]
struct Generation {
    /// Key hash → the last entry with that hash (others chain from it).
    index: FxHashMap<u64, u32>,
    entries: Vec<Entry>,
    words: Vec<u32>,
}

struct Entry {
    start: usize,
    len: usize,
    /// The entry before it with the same hash, or `NONE`.
    next: u32,
    score: ScreenScore,
}

const NONE: u32 = u32::MAX;

impl Default for TargetMemo {
    fn default() -> Self {
        TargetMemo::with_budget(DEFAULT_BYTES)
    }
}

impl TargetMemo {
    /// A memo that is never used (its scratch space runs every set).
    pub fn disabled() -> Self {
        let memo = TargetMemo::with_budget(0);
        memo.off.store(true, Ordering::Relaxed);
        memo
    }

    /// A memo that keeps about `bytes` of entries (their tables' slack
    /// aside).
    pub fn with_budget(bytes: usize) -> Self {
        TargetMemo {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            shard_bytes: bytes / SHARDS / 2,
            off: AtomicBool::new(false),
            lookups: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            owners: Mutex::default(),
        }
    }

    /// Adds a worker's count of lookups and hits; turns the memo off if
    /// too few lookups hit.
    pub(crate) fn report(&self, lookups: u64, hits: u64) {
        let lookups = self.lookups.fetch_add(lookups, Ordering::Relaxed) + lookups;
        let hits = self.hits.fetch_add(hits, Ordering::Relaxed) + hits;
        if lookups >= MIN_LOOKUPS && hits * MIN_HIT_RATE < lookups {
            self.off.store(true, Ordering::Relaxed);
        }
    }

    /// Claims instrument `slot` for `owner`; panics if another owner
    /// claimed it (a programming error: one memo per screen).
    pub(crate) fn claim(&self, slot: usize, owner: Owner) {
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        if owners.len() <= slot {
            owners.resize(slot + 1, None);
        }
        let held = owners[slot].get_or_insert(owner);
        assert!(
            *held == owner,
            "a TargetMemo serves one screen: instrument {slot} came with other bars, scoring or strategy"
        );
    }

    /// Whether looking targets up still pays.
    pub(crate) fn is_on(&self) -> bool {
        !self.off.load(Ordering::Relaxed)
    }

    fn shard(&self, key: &Key) -> std::sync::MutexGuard<'_, Shard> {
        // A worker that panicked mid-insert leaves a shard that is still
        // valid (an entry is indexed only once whole).
        let i = (key.hash >> 60) as usize % SHARDS;
        self.shards[i]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The score of `key`'s targets, if kept.
    pub(crate) fn get(&self, key: &Key) -> Option<ScreenScore> {
        let mut shard = self.shard(key);
        if let Some(s) = shard.newer.get(key) {
            return Some(s);
        }
        let s = shard.older.get(key)?;
        // Still wanted: keep it through the next turnover.
        shard.insert(key, s, self.shard_bytes);
        Some(s)
    }

    /// Keeps the score of `key`'s targets.
    pub(crate) fn insert(&self, key: &Key, score: ScreenScore) {
        self.shard(key).insert(key, score, self.shard_bytes);
    }
}

impl Shard {
    fn insert(&mut self, key: &Key, score: ScreenScore, budget: usize) {
        if self.newer.bytes() + key.words.len() * 4 + ENTRY_BYTES > budget {
            std::mem::swap(&mut self.older, &mut self.newer);
            self.newer.clear();
        }
        // Not twice: sets whose keys were not looked up (the rest of a
        // batch after a miss) are inserted too.
        if self.newer.get(key).is_none() {
            self.newer.push(key, score);
        }
    }
}

impl Generation {
    fn bytes(&self) -> usize {
        self.words.len() * 4 + self.entries.len() * ENTRY_BYTES
    }

    fn clear(&mut self) {
        self.index.clear();
        self.entries.clear();
        self.words.clear();
    }

    fn get(&self, key: &Key) -> Option<ScreenScore> {
        let mut e = *self.index.get(&key.hash)?;
        while e != NONE {
            let entry = &self.entries[e as usize];
            if self.words[entry.start..entry.start + entry.len] == key.words[..] {
                return Some(entry.score);
            }
            e = entry.next;
        }
        None
    }

    fn push(&mut self, key: &Key, score: ScreenScore) {
        let Ok(at) = u32::try_from(self.entries.len()) else {
            return;
        };
        let start = self.words.len();
        self.words.extend_from_slice(&key.words);
        let next = self.index.insert(key.hash, at).unwrap_or(NONE);
        self.entries.push(Entry {
            start,
            len: key.words.len(),
            next,
            score,
        });
    }
}

/// One lane's targets as memo words: the instrument, the bars covered,
/// then one word per change (its bar and target).
#[derive(Debug, Default, Clone)]
pub(crate) struct Key {
    words: Vec<u32>,
    hash: u64,
}

impl Key {
    /// The key of `changes` on instrument `slot`; `false` where the
    /// targets do not fit the words (then nothing is memoized).
    pub(crate) fn set(&mut self, slot: usize, changes: &Changes) -> bool {
        self.words.clear();
        let (Ok(slot), Ok(len)) = (u32::try_from(slot), u32::try_from(changes.len())) else {
            return false;
        };
        let entries = changes.entries();
        self.words.resize(2 + entries.len(), 0);
        self.words[..2].copy_from_slice(&[slot, len]);
        // Two bits for the target (-1, 0, 1), thirty for the bar (bars
        // are below the length, which is checked). Written through a slice and checked once:
        // pushes would store the length on every word.
        if len >= 1 << 30 {
            return false;
        }
        let mut fits = true;
        for (word, (bar, target)) in self.words[2..].iter_mut().zip(entries) {
            let code = target.wrapping_add(1) as u8;
            fits &= code <= 2;
            *word = (bar as u32) << 2 | u32::from(code);
        }
        if !fits {
            return false;
        }
        self.hash = hash_words(&self.words);
        true
    }
}

impl Key {
    /// The key of a strategy's key of a parameter set's targets
    /// ([`crate::strategy::Strategy::lane_keys`]) on instrument `slot`;
    /// never equal to a key of targets (whose second word is a length
    /// below 2³⁰).
    pub(crate) fn set_params(&mut self, slot: usize, key: &[u64]) -> bool {
        self.words.clear();
        let Ok(slot) = u32::try_from(slot) else {
            return false;
        };
        self.words.extend([slot, u32::MAX]);
        for &w in key {
            self.words.extend([w as u32, (w >> 32) as u32]);
        }
        self.hash = hash_words(&self.words);
        true
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.hash == other.hash && self.words == other.words
    }
}

/// A 64-bit hash of `words` in four independent streams (a single
/// multiply chain, as in `FxHasher`, waits on each multiply: the keys are
/// hundreds of words long).
fn hash_words(words: &[u32]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = [1u64, 2, 3, 4];
    let mut blocks = words.chunks_exact(8);
    for b in &mut blocks {
        for (i, h) in h.iter_mut().enumerate() {
            let x = u64::from(b[2 * i]) | u64::from(b[2 * i + 1]) << 32;
            *h = (*h ^ x).wrapping_mul(K).rotate_left(23);
        }
    }
    let mut out = words.len() as u64;
    for &w in blocks.remainder() {
        out = (out ^ u64::from(w)).wrapping_mul(K).rotate_left(23);
    }
    for x in h {
        out = (out ^ x).wrapping_mul(K).rotate_left(23);
    }
    out ^ out >> 29
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(positions: &[i8]) -> Changes {
        let mut c = Changes::default();
        c.set_from(positions);
        c
    }

    fn score(objective: f64) -> ScreenScore {
        ScreenScore {
            objective,
            trades: 1,
            sharpe: 0.0,
        }
    }

    #[test]
    fn keys_tell_targets_and_instruments_apart() {
        let a = changes(&[0, 1, 1, 0, -1]);
        let b = changes(&[0, 1, 1, 0, 0]);
        let c = changes(&[0, 1, 1, 0, -1, -1]);
        let mirror = changes(&[0, -1, -1, 0, 1]);
        let mut keys: Vec<Key> = Vec::new();
        for (slot, ch) in [(0, &a), (0, &b), (0, &c), (0, &mirror), (1, &a)] {
            let mut k = Key::default();
            assert!(k.set(slot, ch));
            keys.push(k);
        }
        for i in 0..keys.len() {
            for j in 0..keys.len() {
                assert_eq!(keys[i] == keys[j], i == j, "{i} {j}");
            }
        }
        let mut again = Key::default();
        again.set(0, &changes(&[0, 1, 1, 0, -1]));
        assert!(again == keys[0]);
    }

    #[test]
    fn the_memo_turns_itself_off_when_targets_rarely_repeat() {
        let key = |i: usize| {
            let mut p = vec![0i8; 5000];
            p[i + 1] = 1;
            let mut k = Key::default();
            assert!(k.set(0, &changes(&p)));
            k
        };
        // Each miss is inserted; one lookup in `repeat_every` repeats the
        // one before (spread over the shards like any key).
        let run = |repeat_every: usize| {
            let memo = TargetMemo::default();
            for i in 1..4000 {
                let k = key(if i % repeat_every == 0 { i - 1 } else { i });
                let hit = memo.get(&k).is_some();
                if !hit {
                    memo.insert(&k, score(0.0));
                }
                memo.report(1, u64::from(hit));
            }
            memo.is_on()
        };
        assert!(!run(20));
        assert!(run(10));
    }

    #[test]
    fn a_full_memo_forgets_the_oldest_and_keeps_what_is_read() {
        // Room for about four entries a generation in each shard.
        let memo = TargetMemo::with_budget(SHARDS * 2 * 4 * (ENTRY_BYTES + 20));
        let keys: Vec<Key> = (0..400)
            .map(|i| {
                let mut p = vec![0i8; 600];
                p[i + 1..i + 3].fill(1);
                let mut k = Key::default();
                assert!(k.set(0, &changes(&p)));
                k
            })
            .collect();
        for (i, k) in keys.iter().enumerate() {
            memo.insert(k, score(i as f64));
            // The first entry is read after every insert: it stays.
            assert_eq!(memo.get(&keys[0]).map(|s| s.objective), Some(0.0));
        }
        let kept = keys.iter().filter(|k| memo.get(k).is_some()).count();
        assert!(kept < 200, "kept {kept} of 400");
        // Whatever is kept holds its own score.
        for (i, k) in keys.iter().enumerate() {
            if let Some(s) = memo.get(k) {
                assert_eq!(s.objective, i as f64);
            }
        }
        assert_eq!(memo.get(&keys[399]).map(|s| s.objective), Some(399.0));
    }
}
