//! Count, mean and variance of the objective over every combination
//! screened (Welford within a chunk, Chan's formula across chunks in one
//! fixed tree over the chunks: [`StatsTree`]), so the numbers do not depend
//! on the thread count, the shard split or the executor.

/// Count, mean and variance of the objective over every combination
/// evaluated (finite values; NaN and ±inf are counted apart). Within a chunk
/// values are added by Welford's update; chunks and shards combine with
/// Chan's formula in a [`StatsTree`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ObjectiveStats {
    /// Combinations scored (constraint-satisfying).
    pub evaluated: u64,
    /// Of those, finite objectives (the moments below are over these).
    pub count: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
    /// Objectives that were NaN (e.g. fewer than `min_trades` trades).
    pub nan: u64,
    /// Objectives that were ±infinite.
    pub infinite: u64,
}

impl ObjectiveStats {
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.evaluated += 1;
        if x.is_nan() {
            self.nan += 1;
        } else if x.is_infinite() {
            self.infinite += 1;
        } else {
            self.count += 1;
            let delta = x - self.mean;
            self.mean += delta / self.count as f64;
            self.m2 += delta * (x - self.mean);
        }
    }

    /// Appends the stats of the combinations that follow these.
    pub fn combine(&mut self, other: &ObjectiveStats) {
        self.evaluated += other.evaluated;
        self.nan += other.nan;
        self.infinite += other.infinite;
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            self.count = other.count;
            self.mean = other.mean;
            self.m2 = other.m2;
            return;
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let delta = other.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += other.m2 + delta * delta * na * nb / n;
        self.count += other.count;
    }

    /// Sample variance (ddof = 1); NaN below two values.
    pub fn variance(&self) -> f64 {
        if self.count < 2 {
            f64::NAN
        } else {
            self.m2 / (self.count - 1) as f64
        }
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.mean
        }
    }
}

/// The statistics of the chunks `start..start + 2^level` (chunk numbers:
/// a position divided by [`crate::cpu::CHUNK`]), a node of [`StatsTree`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StatsNode {
    pub start: u64,
    pub level: u32,
    pub stats: ObjectiveStats,
}

/// Chunks' statistics combined in one fixed tree over the chunk numbers:
/// two sibling nodes (the aligned halves of a power-of-two run of chunks)
/// combine into their parent, as a binary counter carries, and the total
/// folds what is left from the first chunk on. The tree depends only on
/// which chunks were screened, not on who screened them: a shard aligned
/// to chunks keeps the nodes of its part, and appending the shards' nodes
/// in grid order rebuilds the whole screen's tree — the same numbers, bit
/// for bit, from one process, any thread count, any shard split or any
/// executor. Every chunk is pushed, those with nothing allowed too (the
/// tree's shape must not depend on the constraints' gaps).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatsTree {
    nodes: Vec<StatsNode>,
}

impl StatsTree {
    /// Appends chunk `chunk`'s statistics (the chunk after the last one).
    pub fn push_chunk(&mut self, chunk: u64, stats: ObjectiveStats) {
        self.push(StatsNode {
            start: chunk,
            level: 0,
            stats,
        });
    }

    /// Appends a node that follows the last one, combining it with its
    /// left sibling (and so on up) where that is the last node.
    pub fn push(&mut self, mut node: StatsNode) {
        while let Some(top) = self.nodes.last() {
            // Nodes past level 62 never combine (no grid has 2^63 chunks;
            // a damaged file must not overflow).
            let width = 1u64 << node.level.min(62);
            let sibling = node.level < 62
                && top.level == node.level
                && top.start.checked_add(width) == Some(node.start)
                && top.start % (width << 1) == 0;
            if !sibling {
                break;
            }
            let mut stats = top.stats;
            stats.combine(&node.stats);
            node = StatsNode {
                start: top.start,
                level: node.level + 1,
                stats,
            };
            self.nodes.pop();
        }
        self.nodes.push(node);
    }

    /// Appends the nodes of a tree of the chunks that follow these.
    pub fn append(&mut self, other: &StatsTree) {
        other.nodes.iter().for_each(|&n| self.push(n));
    }

    /// The nodes, first chunk first (what a shard's file keeps).
    pub fn nodes(&self) -> &[StatsNode] {
        &self.nodes
    }

    /// A tree from nodes read back: each must start where the one before
    /// ends; `None` where they do not.
    pub fn from_nodes(nodes: &[StatsNode]) -> Option<StatsTree> {
        let mut tree = StatsTree::default();
        for n in nodes {
            let width = 1u64.checked_shl(n.level.min(63))?;
            if n.level > 62 {
                return None;
            }
            if n.start % width != 0 {
                return None;
            }
        }
        for pair in nodes.windows(2) {
            let end = 1u64
                .checked_shl(pair[0].level)
                .and_then(|w| pair[0].start.checked_add(w))?;
            if end != pair[1].start {
                return None;
            }
        }
        nodes.iter().for_each(|&n| tree.push(n));
        Some(tree)
    }

    /// Every chunk's statistics together.
    pub fn total(&self) -> ObjectiveStats {
        let mut total = ObjectiveStats::default();
        self.nodes.iter().for_each(|n| total.combine(&n.stats));
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_by_hand_and_split_agree() {
        let xs = [1.0, 2.0, 4.0, f64::NAN, 7.0, f64::INFINITY];
        let mut all = ObjectiveStats::default();
        xs.iter().for_each(|&x| all.push(x));
        assert_eq!(
            (all.evaluated, all.count, all.nan, all.infinite),
            (6, 4, 1, 1)
        );
        assert_eq!(all.mean(), 3.5);
        // deviations −2.5, −1.5, 0.5, 3.5 → squares 6.25 + 2.25 + 0.25 + 12.25 = 21
        assert!((all.variance() - 7.0).abs() < 1e-12);
        let (mut a, mut b) = (ObjectiveStats::default(), ObjectiveStats::default());
        xs[..2].iter().for_each(|&x| a.push(x));
        xs[2..].iter().for_each(|&x| b.push(x));
        a.combine(&b);
        assert_eq!((a.evaluated, a.count), (6, 4));
        assert!((a.mean() - 3.5).abs() < 1e-12 && (a.variance() - 7.0).abs() < 1e-12);
    }

    /// Appending the nodes of chunk-aligned parts, in order, gives the
    /// whole screen's tree and total bit for bit, whatever the split; a
    /// plain running fold does not (Chan's formula is not associative in
    /// floating point).
    #[test]
    fn any_split_of_the_chunks_gives_the_same_bits() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let chunks: Vec<ObjectiveStats> = (0..300)
            .map(|c| {
                let mut s = ObjectiveStats::default();
                // Some chunks hold nothing allowed, some only NaN.
                let n = [0, 1, 37, 256][c % 4];
                (0..n).for_each(|_| {
                    s.push(if next() < 0.02 {
                        f64::NAN
                    } else {
                        1e3 * next() - 300.0
                    })
                });
                s
            })
            .collect();
        let tree_of = |range: std::ops::Range<usize>| {
            let mut t = StatsTree::default();
            range.for_each(|c| t.push_chunk(c as u64, chunks[c]));
            t
        };
        let whole = tree_of(0..chunks.len());
        let bits = |s: &ObjectiveStats| {
            (
                s.evaluated,
                s.count,
                s.mean.to_bits(),
                s.m2.to_bits(),
                s.nan,
            )
        };
        let mut folded = ObjectiveStats::default();
        chunks.iter().for_each(|c| folded.combine(c));
        let mut differs = false;
        for cuts in [
            vec![1],
            vec![150],
            vec![64, 128, 192],
            vec![3, 5, 77, 299],
            vec![10, 11, 12],
        ] {
            let mut bounds = vec![0];
            bounds.extend(cuts);
            bounds.push(chunks.len());
            let mut merged = StatsTree::default();
            let mut parts_folded = ObjectiveStats::default();
            for w in bounds.windows(2) {
                let part = tree_of(w[0]..w[1]);
                let read = StatsTree::from_nodes(part.nodes()).expect("contiguous nodes");
                merged.append(&read);
                parts_folded.combine(&{
                    let mut f = ObjectiveStats::default();
                    chunks[w[0]..w[1]].iter().for_each(|c| f.combine(c));
                    f
                });
            }
            assert_eq!(merged, whole, "{bounds:?}");
            assert_eq!(bits(&merged.total()), bits(&whole.total()));
            differs |= bits(&parts_folded) != bits(&folded);
        }
        // The fixture is one where the order matters.
        assert!(differs, "a running fold gave the same bits for every split");
        // And the tree agrees with the plain fold to rounding.
        let (t, f) = (whole.total(), folded);
        assert_eq!((t.evaluated, t.count, t.nan), (f.evaluated, f.count, f.nan));
        assert!((t.mean - f.mean).abs() < 1e-9 * f.mean.abs() && (t.m2 - f.m2).abs() < 1e-9 * f.m2);
    }

    #[test]
    fn nodes_that_leave_a_gap_or_are_not_aligned_are_refused() {
        let node = |start, level| StatsNode {
            start,
            level,
            stats: ObjectiveStats::default(),
        };
        assert!(StatsTree::from_nodes(&[node(0, 1), node(2, 0)]).is_some());
        assert!(
            StatsTree::from_nodes(&[node(0, 1), node(3, 0)]).is_none(),
            "gap"
        );
        assert!(
            StatsTree::from_nodes(&[node(1, 1)]).is_none(),
            "not aligned"
        );
        // Siblings combine into their parent; a right half with no left does not.
        let mut t = StatsTree::default();
        (0..6).for_each(|c| t.push_chunk(c, ObjectiveStats::default()));
        let shape: Vec<(u64, u32)> = t.nodes().iter().map(|n| (n.start, n.level)).collect();
        assert_eq!(shape, [(0, 2), (4, 1)]);
    }
}
