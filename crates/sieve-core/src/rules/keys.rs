//! The trade-management keys of a rule strategy — a stop, a target (each a
//! fraction of the entry price or a price distance), a bar limit and a
//! size — held as any `K`: their nodes, how gated rules read them, their
//! values per bar.

use super::ir::Id;

/// The trade-management keys, each as a `K`: their nodes
/// ([`ManagedRoots`]), how gated rules read them, their values per bar
/// ([`KeyValues`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct ManagedKeys<K> {
    /// With whether the distance is a fraction of the entry price.
    pub(super) stop: Option<(K, bool)>,
    pub(super) target: Option<(K, bool)>,
    pub(super) max_bars: Option<K>,
    pub(super) size: Option<K>,
}

/// The trade-management keys' nodes.
pub(super) type ManagedRoots = ManagedKeys<Id>;

/// One block's trade-management values, per bar.
pub(super) type KeyValues<'a> = ManagedKeys<&'a [f64]>;

impl<K> ManagedKeys<K> {
    pub(super) fn as_ref(&self) -> ManagedKeys<&K> {
        ManagedKeys {
            stop: self.stop.as_ref().map(|(k, fraction)| (k, *fraction)),
            target: self.target.as_ref().map(|(k, fraction)| (k, *fraction)),
            max_bars: self.max_bars.as_ref(),
            size: self.size.as_ref(),
        }
    }
}

impl<K: Copy> ManagedKeys<K> {
    /// Each key as `f` makes it; `None` where `f` fails for one.
    pub(super) fn try_map<L>(&self, f: impl Fn(K) -> Option<L>) -> Option<ManagedKeys<L>> {
        let distance = |d: Option<(K, bool)>| match d {
            Some((k, fraction)) => f(k).map(|l| Some((l, fraction))),
            None => Some(None),
        };
        let plain = |k: Option<K>| match k {
            Some(k) => f(k).map(Some),
            None => Some(None),
        };
        Some(ManagedKeys {
            stop: distance(self.stop)?,
            target: distance(self.target)?,
            max_bars: plain(self.max_bars)?,
            size: plain(self.size)?,
        })
    }

    /// Each key as `f` makes it.
    pub(super) fn map<L>(&self, f: impl Fn(K) -> L) -> ManagedKeys<L> {
        self.try_map(|k| Some(f(k)))
            .expect("a map that cannot fail")
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = K> {
        let m = *self;
        m.stop
            .map(|s| s.0)
            .into_iter()
            .chain(m.target.map(|t| t.0))
            .chain(m.max_bars)
            .chain(m.size)
    }

    pub(super) fn any(&self) -> bool {
        self.keys().next().is_some()
    }
}
