//! The best K combinations of a screen in O(K) memory: a heap under a total
//! order (score, NaN last, ties by grid index), so per-worker heaps merge
//! to exactly the global top K.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use sieve_core::grid::GridIndex;
use sieve_core::metrics::rank_order;

/// One screened combination.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub index: GridIndex,
    pub score: f64,
    /// Trades closed in the screen window.
    pub trades: u64,
}

impl Scored {
    /// The ranking order: `Less` means better.
    pub fn rank_cmp(&self, other: &Scored) -> Ordering {
        rank_order(self.score, self.index, other.score, other.index)
    }
}

/// Heap entry ordered so the heap's top is the worst kept candidate.
#[derive(Debug, Clone, Copy)]
struct Worst(Scored);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.rank_cmp(&other.0)
    }
}

/// The best `k` candidates seen, in O(k) memory. The order is total (ties
/// by grid index), so the kept set does not depend on the order candidates
/// arrive in: per-worker heaps merge to exactly the global top K.
#[derive(Debug, Clone)]
pub struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k.min(256)),
        }
    }

    #[inline]
    pub fn push(&mut self, s: Scored) {
        if self.heap.len() < self.k {
            self.heap.push(Worst(s));
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if s.rank_cmp(&worst.0) == Ordering::Less {
                *worst = Worst(s);
            }
        }
    }

    /// Whether `score` at `index` would enter the heap (a cheap pre-check).
    #[inline]
    pub fn admits(&self, score: f64, index: GridIndex) -> bool {
        self.heap.len() < self.k
            || self
                .heap
                .peek()
                .is_some_and(|w| rank_order(score, index, w.0.score, w.0.index) == Ordering::Less)
    }

    pub fn merge(&mut self, other: TopK) {
        for w in other.heap {
            self.push(w.0);
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The kept candidates in no particular order (a checkpoint's copy:
    /// sorting waits until one is written).
    pub fn to_unsorted(&self) -> Vec<Scored> {
        self.heap.iter().map(|w| w.0).collect()
    }

    /// The kept candidates, best first.
    pub fn into_sorted(self) -> Vec<Scored> {
        let mut v: Vec<Scored> = self.heap.into_iter().map(|w| w.0).collect();
        // The order is total (grid indices are distinct), so an unstable
        // sort gives the same vector.
        v.sort_unstable_by(Scored::rank_cmp);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn score_strategy() -> impl Strategy<Value = f64> {
        // Few distinct values so ties are common; NaN and infinities too.
        prop_oneof![
            (-5i32..5).prop_map(f64::from),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
        ]
    }

    proptest! {
        #[test]
        fn top_k_equals_full_sort_truncated(
            scores in prop::collection::vec(score_strategy(), 0..300),
            k in 1usize..50,
            split in 0usize..300,
        ) {
            let all: Vec<Scored> = scores
                .iter()
                .enumerate()
                .map(|(i, &score)| Scored { index: i as u64, score, trades: 0 })
                .collect();
            let mut expected = all.clone();
            expected.sort_by(Scored::rank_cmp);
            expected.truncate(k);

            let mut one = TopK::new(k);
            all.iter().for_each(|s| one.push(*s));
            let got = one.into_sorted();
            prop_assert_eq!(got.iter().map(|s| s.index).collect::<Vec<_>>(),
                            expected.iter().map(|s| s.index).collect::<Vec<_>>());

            // Two heaps fed disjoint halves (in reverse order) merge to the same.
            let split = split.min(all.len());
            let mut a = TopK::new(k);
            let mut b = TopK::new(k);
            all[..split].iter().rev().for_each(|s| a.push(*s));
            all[split..].iter().for_each(|s| b.push(*s));
            a.merge(b);
            prop_assert_eq!(a.into_sorted().iter().map(|s| s.index).collect::<Vec<_>>(),
                            expected.iter().map(|s| s.index).collect::<Vec<_>>());
        }
    }
}
