//! The trade-management keys, in one table ([`KEYS`]): each key's name
//! (in `[strategy]`, and Python's keyword), what its value is ([`Kind`])
//! and which part of the trade the engine reads it for ([`Role`]). The
//! config, the compiler, the signal backtests and the Python package take
//! the keys from here; [`ManagedKeys`] holds one `K` per role — the values
//! as written ([`Management`]), their nodes, how gated rules read them,
//! their values per bar.
//!
//! A new key is a line of [`KEYS`] and, for a new role, the engine step
//! that reads it (`engine::Managed`, through `TradePlan`).

use std::borrow::Cow;

use super::ir::Id;

/// What a key's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A fraction of the entry price (0.05 = 5 % from it).
    FractionOfPrice,
    /// A distance in price units.
    PriceDistance,
    /// A whole number of bars held.
    Bars,
    /// A fraction of equity a trade commits.
    FractionOfEquity,
    /// A price (a stop's level), read on every close of the trade.
    PriceLevel,
    /// A whole number ≥ 1 (how many entries a position may take).
    Count,
}

/// The part of the trade the engine reads a key for: one key per role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Stop,
    Target,
    /// A stop that trails the best price since entry, inside each bar.
    Trail,
    MaxBars,
    Size,
    /// A stop that moves: its level on each close, in the trade's favour
    /// only.
    StopLevel,
    /// An entry by a stop order at this price (a buy stop above).
    EntryStop,
    /// An entry by a limit order at this price (a buy limit below).
    EntryLimit,
    /// How many bars an entry order is good for.
    OrderBars,
    /// How many entries a position may take (pyramiding).
    MaxEntries,
}

/// One trade-management key.
#[derive(Debug)]
pub struct KeySpec {
    /// Its name in `[strategy]`, and its keyword in Python.
    pub name: &'static str,
    pub kind: Kind,
    pub role: Role,
}

/// Every trade-management key, in the order the docs and messages list
/// them.
pub const KEYS: &[KeySpec] = &[
    KeySpec {
        name: "stop_loss",
        kind: Kind::FractionOfPrice,
        role: Role::Stop,
    },
    KeySpec {
        name: "stop_distance",
        kind: Kind::PriceDistance,
        role: Role::Stop,
    },
    KeySpec {
        name: "take_profit",
        kind: Kind::FractionOfPrice,
        role: Role::Target,
    },
    KeySpec {
        name: "target_distance",
        kind: Kind::PriceDistance,
        role: Role::Target,
    },
    KeySpec {
        name: "trail_loss",
        kind: Kind::FractionOfPrice,
        role: Role::Trail,
    },
    KeySpec {
        name: "trail_distance",
        kind: Kind::PriceDistance,
        role: Role::Trail,
    },
    KeySpec {
        name: "max_bars",
        kind: Kind::Bars,
        role: Role::MaxBars,
    },
    KeySpec {
        name: "size",
        kind: Kind::FractionOfEquity,
        role: Role::Size,
    },
    KeySpec {
        name: "stop_level",
        kind: Kind::PriceLevel,
        role: Role::StopLevel,
    },
    KeySpec {
        name: "entry_stop",
        kind: Kind::PriceLevel,
        role: Role::EntryStop,
    },
    KeySpec {
        name: "entry_limit",
        kind: Kind::PriceLevel,
        role: Role::EntryLimit,
    },
    KeySpec {
        name: "order_bars",
        kind: Kind::Bars,
        role: Role::OrderBars,
    },
    KeySpec {
        name: "max_entries",
        kind: Kind::Count,
        role: Role::MaxEntries,
    },
];

impl KeySpec {
    /// The key called `name`.
    pub fn named(name: &str) -> Option<&'static KeySpec> {
        KEYS.iter().find(|k| k.name == name)
    }

    /// The key of `role` (of `fraction` of the price or not, for a stop or
    /// a target).
    fn of(role: Role, fraction: bool) -> &'static KeySpec {
        KEYS.iter()
            .find(|k| k.role == role && (k.kind == Kind::FractionOfPrice) == fraction)
            .or_else(|| KEYS.iter().find(|k| k.role == role))
            .expect("every role has a key")
    }

    /// Why a number given for this key is refused, if it is: a constant
    /// in the config, or one value of the arrays Python's
    /// `backtest_signals` takes (where NaN means unset). One rule for
    /// both front ends. `max_leverage` caps `size`.
    pub fn check(&self, v: f64, max_leverage: f64) -> Result<(), String> {
        let fraction = "a fraction of the entry price: 0.05 is 5 %";
        if !v.is_finite() {
            return Err(format!("must be a finite number, got {v}"));
        }
        match self.kind {
            Kind::FractionOfPrice if v <= 0.0 => Err(format!(
                "must be above 0 ({fraction}), got {v}; leave the key out for none"
            )),
            Kind::FractionOfPrice if self.role != Role::Target && v >= 1.0 => Err(format!(
                "must be below 1 ({fraction}), got {v}: a long's stop would be at a price of 0 or below and never hit"
            )),
            Kind::PriceDistance if v <= 0.0 => Err(format!(
                "must be above 0 (a distance in price units), got {v}; leave the key out for none"
            )),
            Kind::Bars if self.role == Role::OrderBars && (v < 1.0 || v.fract() != 0.0) => Err(
                format!("must be a whole number of bars ≥ 1 (an entry order is good for the next bar at least), got {v}"),
            ),
            Kind::Count if v < 1.0 || v.fract() != 0.0 => Err(format!(
                "must be a whole number ≥ 1 (1: no pyramiding, the first entry only), got {v}"
            )),
            Kind::Bars if v < 0.0 || v.fract() != 0.0 => {
                Err(format!("must be a whole number of bars ≥ 0, got {v}"))
            }
            Kind::FractionOfEquity if v <= 0.0 => Err(format!(
                "must be above 0 (a fraction of equity: 0.5 commits half), got {v}; leave the key out to commit all equity"
            )),
            Kind::FractionOfEquity if v > max_leverage => Err(format!(
                "{v} is above backtest.max_leverage = {max_leverage}; raise max_leverage to allow it"
            )),
            _ => Ok(()),
        }
    }

    /// A likely slip in a number accepted for this key: a target given in
    /// percent (`take_profit = 10` is 1000 % away, not 10 %).
    pub fn typo(&self, v: f64) -> Option<String> {
        (self.kind == Kind::FractionOfPrice && self.role == Role::Target && v >= 1.0).then(|| {
            format!(
                "{} = {} puts the target {} % from the entry price; it is a fraction (0.10 is 10 %)",
                self.name,
                crate::format::float(v),
                crate::format::float(v * 100.0)
            )
        })
    }

    /// Every key's name, `a, b, …` (for messages).
    pub fn names() -> String {
        KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
    }
}

/// A key's value as written: a number, or an expression a rule can be.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyValue {
    Number(f64),
    Expr(String),
}

impl KeyValue {
    /// The value as a rule would write it.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            KeyValue::Number(v) => Cow::Owned(crate::format::float(*v)),
            KeyValue::Expr(t) => Cow::Borrowed(t),
        }
    }

    /// The number, when it is one.
    pub fn number(&self) -> Option<f64> {
        match self {
            KeyValue::Number(v) => Some(*v),
            KeyValue::Expr(_) => None,
        }
    }
}

/// The trade-management keys as `[strategy]` gives them.
pub type Management = ManagedKeys<KeyValue>;

/// The trade-management keys, each as a `K`: their nodes
/// ([`ManagedRoots`]), how gated rules read them, their values per bar
/// ([`KeyValues`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ManagedKeys<K> {
    /// With whether the distance is a fraction of the entry price.
    pub stop: Option<(K, bool)>,
    pub target: Option<(K, bool)>,
    pub trail: Option<(K, bool)>,
    pub max_bars: Option<K>,
    pub size: Option<K>,
    pub stop_level: Option<K>,
    pub entry_stop: Option<K>,
    pub entry_limit: Option<K>,
    pub order_bars: Option<K>,
    pub max_entries: Option<K>,
}

/// The trade-management keys' nodes.
pub type ManagedRoots = ManagedKeys<Id>;

/// One block's trade-management values, per bar.
pub type KeyValues<'a> = ManagedKeys<&'a [f64]>;

/// A key's value on each bar, as the engine reads it.
pub trait KeyRead: Copy {
    fn at(&self, t: usize) -> f64;
}

impl KeyRead for &[f64] {
    #[inline(always)]
    fn at(&self, t: usize) -> f64 {
        self[t]
    }
}

/// One key's values for one set of signals: the same on every bar (a
/// number, or one per column), or one per bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeySeries<'a> {
    Each(f64),
    Bars(&'a [f64]),
}

impl KeyRead for KeySeries<'_> {
    #[inline(always)]
    fn at(&self, t: usize) -> f64 {
        match self {
            KeySeries::Each(v) => *v,
            KeySeries::Bars(b) => b[t],
        }
    }
}

impl<K> Default for ManagedKeys<K> {
    fn default() -> Self {
        ManagedKeys {
            stop: None,
            target: None,
            trail: None,
            max_bars: None,
            size: None,
            stop_level: None,
            entry_stop: None,
            entry_limit: None,
            order_bars: None,
            max_entries: None,
        }
    }
}

impl<K> ManagedKeys<K> {
    /// Gives `key` the value `value`; `Err` with the other key of its role
    /// when that one is given already.
    pub fn set(&mut self, key: &'static KeySpec, value: K) -> Result<(), &'static str> {
        let fraction = key.kind == Kind::FractionOfPrice;
        let taken =
            |slot: &Option<(K, bool)>| slot.as_ref().map(|(_, f)| KeySpec::of(key.role, *f).name);
        match key.role {
            Role::Stop | Role::Target | Role::Trail => {
                let slot = match key.role {
                    Role::Stop => &mut self.stop,
                    Role::Target => &mut self.target,
                    _ => &mut self.trail,
                };
                if let Some(other) = taken(slot) {
                    return Err(other);
                }
                *slot = Some((value, fraction));
            }
            Role::EntryStop | Role::EntryLimit => {
                // One entry order: a stop or a limit (no stop-limit yet).
                let (slot, other, other_name) = match key.role {
                    Role::EntryStop => (&mut self.entry_stop, &self.entry_limit, "entry_limit"),
                    _ => (&mut self.entry_limit, &self.entry_stop, "entry_stop"),
                };
                if other.is_some() {
                    return Err(other_name);
                }
                if slot.is_some() {
                    return Err(key.name);
                }
                *slot = Some(value);
            }
            Role::MaxBars | Role::Size | Role::StopLevel | Role::OrderBars | Role::MaxEntries => {
                let slot = match key.role {
                    Role::MaxBars => &mut self.max_bars,
                    Role::Size => &mut self.size,
                    Role::StopLevel => &mut self.stop_level,
                    Role::OrderBars => &mut self.order_bars,
                    _ => &mut self.max_entries,
                };
                if slot.is_some() {
                    return Err(key.name);
                }
                *slot = Some(value);
            }
        }
        Ok(())
    }

    /// Each key given, with its entry in [`KEYS`], in the order of roles.
    pub fn entries(&self) -> impl Iterator<Item = (&'static KeySpec, &K)> {
        fn distance<K>(role: Role, slot: &Option<(K, bool)>) -> Option<(&'static KeySpec, &K)> {
            slot.as_ref().map(|(k, f)| (KeySpec::of(role, *f), k))
        }
        fn plain<K>(role: Role, slot: &Option<K>) -> Option<(&'static KeySpec, &K)> {
            slot.as_ref().map(|k| (KeySpec::of(role, false), k))
        }
        distance(Role::Stop, &self.stop)
            .into_iter()
            .chain(distance(Role::Target, &self.target))
            .chain(distance(Role::Trail, &self.trail))
            .chain(plain(Role::MaxBars, &self.max_bars))
            .chain(plain(Role::Size, &self.size))
            .chain(plain(Role::StopLevel, &self.stop_level))
            .chain(plain(Role::EntryStop, &self.entry_stop))
            .chain(plain(Role::EntryLimit, &self.entry_limit))
            .chain(plain(Role::OrderBars, &self.order_bars))
            .chain(plain(Role::MaxEntries, &self.max_entries))
    }

    /// Whether any key is given.
    pub fn any(&self) -> bool {
        self.entries().next().is_some()
    }

    /// The names of the keys given.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries().map(|(k, _)| k.name)
    }

    pub fn as_ref(&self) -> ManagedKeys<&K> {
        ManagedKeys {
            stop: self.stop.as_ref().map(|(k, fraction)| (k, *fraction)),
            target: self.target.as_ref().map(|(k, fraction)| (k, *fraction)),
            trail: self.trail.as_ref().map(|(k, fraction)| (k, *fraction)),
            max_bars: self.max_bars.as_ref(),
            size: self.size.as_ref(),
            stop_level: self.stop_level.as_ref(),
            entry_stop: self.entry_stop.as_ref(),
            entry_limit: self.entry_limit.as_ref(),
            order_bars: self.order_bars.as_ref(),
            max_entries: self.max_entries.as_ref(),
        }
    }
}

impl<K: Copy> ManagedKeys<K> {
    /// Each key as `f` makes it; `None` where `f` fails for one.
    pub fn try_map<L>(&self, f: impl Fn(K) -> Option<L>) -> Option<ManagedKeys<L>> {
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
            trail: distance(self.trail)?,
            max_bars: plain(self.max_bars)?,
            size: plain(self.size)?,
            stop_level: plain(self.stop_level)?,
            entry_stop: plain(self.entry_stop)?,
            entry_limit: plain(self.entry_limit)?,
            order_bars: plain(self.order_bars)?,
            max_entries: plain(self.max_entries)?,
        })
    }

    /// Each key as `f` makes it.
    pub fn map<L>(&self, f: impl Fn(K) -> L) -> ManagedKeys<L> {
        self.try_map(|k| Some(f(k)))
            .expect("a map that cannot fail")
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = K> {
        let m = *self;
        m.stop
            .map(|s| s.0)
            .into_iter()
            .chain(m.target.map(|t| t.0))
            .chain(m.trail.map(|t| t.0))
            .chain(m.max_bars)
            .chain(m.size)
            .chain(m.stop_level)
            .chain(m.entry_stop)
            .chain(m.entry_limit)
            .chain(m.order_bars)
            .chain(m.max_entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key sets its role, reads back under its own name, and a
    /// second key of a role is refused naming the first.
    #[test]
    fn every_key_round_trips_through_its_role() {
        for key in KEYS {
            let mut keys = ManagedKeys::default();
            keys.set(key, 1.5).unwrap();
            let back: Vec<_> = keys.entries().map(|(k, v)| (k.name, *v)).collect();
            assert_eq!(back, vec![(key.name, 1.5)]);
            for other in KEYS.iter().filter(|o| o.role == key.role) {
                assert_eq!(keys.clone().set(other, 2.0), Err(key.name));
            }
        }
        // One per role, all at once, in table order.
        let mut all = ManagedKeys::default();
        for key in KEYS
            .iter()
            .filter(|k| k.kind != Kind::PriceDistance && k.name != "entry_limit")
        {
            all.set(key, 0.0).unwrap();
        }
        let names: Vec<_> = all.names().collect();
        assert_eq!(
            names,
            [
                "stop_loss",
                "take_profit",
                "trail_loss",
                "max_bars",
                "size",
                "stop_level",
                "entry_stop",
                "order_bars",
                "max_entries"
            ]
        );
        // One entry order: a stop or a limit.
        let limit = KeySpec::named("entry_limit").unwrap();
        assert_eq!(all.clone().set(limit, 1.0), Err("entry_stop"));
    }
}
