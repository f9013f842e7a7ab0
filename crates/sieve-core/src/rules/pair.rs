//! A crossing pair with filters: `entry = cross_above(a, b) and close >
//! tf("1d", sma(close, n))`, `exit = cross_below(a, b)`. The built-in
//! crosses' scan finds every crossing of `a` and `b` (each one a change of
//! its targets: 1 at an upward crossing, else a downward one); the other
//! terms of each rule are then read at those bars alone. No rule can be
//! true elsewhere, so the position changes nowhere else: the same
//! positions as the rules bar by bar.

use super::compiled::Rules;
use super::eval;
use super::functions::Func;
use super::ir::{Id, Op};

use crate::data::Bars;
use crate::indicators::IndicatorSet;
use crate::strategy::{Changes, Direction};

impl Rules {
    /// `root`'s crossing `cross` (`cross_above` / `cross_below`) and its
    /// other `and`-ed terms, each read on one bar alone; `None` when it
    /// has no such crossing or a term reads earlier bars.
    pub(super) fn pair_terms(&self, root: Id, cross: Func) -> Option<(Id, Vec<Id>)> {
        let mut terms = Vec::new();
        self.terms(root, &mut terms);
        let is_cross = |id: &Id| matches!(&self.graph.nodes[*id].op, Op::Call(f, _) if *f == cross);
        let k = terms.iter().position(is_cross)?;
        let crossing = terms.remove(k);
        terms
            .iter()
            .all(|&id| self.pointwise(id, &[]))
            .then_some((crossing, terms))
    }

    /// `changes` of the plain crossing pair (the scan's) for `params`,
    /// kept where the rules' other terms hold on the crossing's bar:
    /// an upward crossing enters long where the entry's terms hold; a
    /// downward one leaves (long only) or goes short (long and short)
    /// where the exit's do. `events` is scratch.
    pub(super) fn filter_pair(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        changes: &mut Changes,
        events: &mut Vec<(usize, i8)>,
    ) {
        let filters = &self.pair_filters;
        events.clear();
        // The first entry is the flat start, not a crossing.
        events.extend(changes.entries().skip(1));
        let len = changes.len();
        changes.reset(len);
        self.with_columns(bars, indicators, params, |scalars, full, _| {
            let holds = |terms: &[Id], t: usize| {
                let none = |_: Id| None;
                terms
                    .iter()
                    .all(|&id| eval::value_at(&self.graph, id, t, full, scalars, &none) != 0.0)
            };
            let mut position = 0i8;
            for &(t, target) in events.iter() {
                let next = match target {
                    1 if holds(&filters.entry, t) => 1,
                    1 => position,
                    _ if holds(&filters.exit, t) => match direction {
                        Direction::Long => 0,
                        Direction::LongShort => -1,
                    },
                    _ => position,
                };
                if next != position {
                    changes.push(t, next);
                    position = next;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::RuleSource;
    use crate::grid::AxisValues;
    use crate::indicators::IndicatorSet;
    use crate::simd::Level;
    use crate::strategy::{Changes, Direction, LaneBuffers, Strategy};

    /// Terms read on one bar, some reading windows and higher timeframes.
    const FILTERS: &[&str] = &[
        "close > sma(close, 30)",
        "tf(\"1w\", close > sma(close, 3))",
        "high - low < 2 * atr(14)",
        "not (close < shift(close, 2))",
        "close > k",
    ];

    fn axis(values: &[f64]) -> AxisValues {
        AxisValues {
            values: values.to_vec(),
            integers: values.iter().all(|v| v.fract() == 0.0),
        }
    }

    /// A crossing pair with filters: the scan's changes, filtered at the
    /// crossings, are the positions of the rules bar by bar, in every
    /// combination and both directions, whatever the filters.
    #[test]
    fn filtered_pairs_hold_the_rules_positions() {
        let bars = crate::data::synth(900, 5);
        let median = {
            let mut c = bars.close.clone();
            c.sort_by(f64::total_cmp);
            c[c.len() / 2]
        };
        let cases: &[(&[usize], &[usize])] = &[
            (&[0], &[]),
            (&[1, 4], &[2]),
            (&[], &[3]),
            (&[2, 3], &[0, 1]),
        ];
        for &(entry, exit) in cases {
            let with = |rule: &str, terms: &[usize]| {
                let mut text = rule.to_string();
                for &k in terms {
                    text += &format!(" and {}", FILTERS[k]);
                }
                text
            };
            let reads_k = entry.contains(&4) || exit.contains(&4);
            let mut params = vec![
                ("a".to_string(), Ok(axis(&[3.0, 8.0]))),
                ("b".to_string(), Ok(axis(&[20.0, 45.0]))),
            ];
            if reads_k {
                params.push(("k".to_string(), Ok(axis(&[median * 0.9, median * 1.1]))));
            }
            let source = RuleSource {
                name: "pair".into(),
                entry: with("cross_above(sma(close, a), sma(close, b))", entry),
                exit: with("cross_below(sma(close, a), sma(close, b))", exit),
                params,
                ..RuleSource::default()
            };
            let strategy = super::super::RuleStrategy::compile(source).expect("compiles");
            assert!(strategy.rules.cross_pair.is_some(), "{entry:?} {exit:?}");
            let ks: &[f64] = if reads_k {
                &[median * 0.9, median * 1.1]
            } else {
                &[0.0]
            };
            let combos: Vec<Vec<f64>> = [3.0, 8.0]
                .iter()
                .flat_map(|&a| [20.0, 45.0].map(move |b| (a, b)))
                .flat_map(|(a, b)| {
                    ks.iter()
                        .map(move |&k| if reads_k { vec![a, b, k] } else { vec![a, b] })
                })
                .collect();
            let mut keys = Vec::new();
            for p in &combos {
                strategy.indicators(p, &mut keys);
            }
            let set = IndicatorSet::build_for(&bars, &strategy.rules, keys);
            for direction in [Direction::Long, Direction::LongShort] {
                let lanes: Vec<&[f64]> = combos.iter().map(Vec::as_slice).collect();
                let mut out = vec![Changes::default(); lanes.len()];
                let mut buffers = LaneBuffers::default();
                for (chunk, out) in lanes.chunks(8).zip(out.chunks_mut(8)) {
                    let (n, level) = (bars.len(), Level::best());
                    strategy.lane_changes(
                        &bars,
                        &set,
                        chunk,
                        direction,
                        n,
                        level,
                        &mut buffers,
                        out,
                    );
                }
                let mut filtered = 0;
                for (p, changes) in combos.iter().zip(&out) {
                    let mut want = vec![0i8; bars.len()];
                    strategy.positions(&bars, &set, p, direction, &mut want);
                    assert_eq!(
                        changes.to_positions(),
                        want,
                        "{entry:?} {exit:?} {p:?} {direction:?}"
                    );
                    filtered += usize::from(want.iter().any(|&x| x != 0));
                }
                assert!(filtered > 0, "{entry:?} {exit:?}: no position at all");
            }
        }
    }
}
