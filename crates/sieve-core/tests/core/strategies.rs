//! Every built-in strategy reads every parameter: changing any one of them
//! changes the positions on the synthetic data.

use sieve_core::data::{synth, Bars};
use sieve_core::indicators::IndicatorSet;
use sieve_core::strategy::{self, registry, Direction, Strategy};

fn positions(bars: &Bars, s: &dyn Strategy, p: &[f64], d: Direction) -> Vec<i8> {
    let ind = IndicatorSet::build(bars, strategy::indicators_for(s, p));
    let mut out = vec![0; bars.len()];
    s.positions(bars, &ind, p, d, &mut out);
    out
}

#[test]
fn no_parameter_is_silently_ignored() {
    let bars = synth(4000, 42);
    for s in registry() {
        let base = strategy::default_params(*s);
        let reference = positions(&bars, *s, &base, Direction::Long);
        assert!(
            reference.iter().any(|&p| p != 0),
            "{} never trades on defaults",
            s.name()
        );
        for (i, spec) in s.params().iter().enumerate() {
            let (start, stop, _) = spec.grid;
            let candidates = [
                start,
                stop,
                (start + stop) / 2.0,
                spec.default * 2.0,
                spec.default / 2.0,
            ];
            let changed = candidates.iter().any(|&v| {
                let v = if spec.kind == strategy::ParamKind::Int {
                    v.round()
                } else {
                    v
                };
                if v == spec.default || spec.check(v).is_err() {
                    return false;
                }
                let mut p = base.clone();
                p[i] = v;
                positions(&bars, *s, &p, Direction::Long) != reference
            });
            assert!(
                changed,
                "{}: parameter {} changes nothing",
                s.name(),
                spec.name
            );
        }
    }
}

#[test]
fn long_short_goes_short_and_long_only_never_does() {
    let bars = synth(4000, 42);
    for s in registry() {
        let p = strategy::default_params(*s);
        let long = positions(&bars, *s, &p, Direction::Long);
        let both = positions(&bars, *s, &p, Direction::LongShort);
        assert!(long.iter().all(|&x| x >= 0), "{}", s.name());
        assert!(both.iter().any(|&x| x < 0), "{} never shorts", s.name());
    }
}

#[test]
fn sma_cross_matches_a_direct_reading_of_the_rule() {
    // Recompute the crossing rule from scratch with plain SMAs and compare.
    let bars = synth(1500, 9);
    let s = strategy::lookup("sma_cross").unwrap();
    let (fast, slow) = (5usize, 20usize);
    let got = positions(&bars, s, &[fast as f64, slow as f64], Direction::Long);
    let sma = |n: usize, t: usize| -> Option<f64> {
        (t + 1 >= n).then(|| bars.close[t + 1 - n..=t].iter().sum::<f64>() / n as f64)
    };
    let mut pos = 0;
    for (t, &got_t) in got.iter().enumerate() {
        if let (Some(f), Some(sl)) = (sma(fast, t), sma(slow, t)) {
            // latest earlier bar with both defined and unequal
            let prev = (0..t)
                .rev()
                .find_map(|u| match (sma(fast, u), sma(slow, u)) {
                    (Some(a), Some(b)) if (a - b).abs() > 1e-9 => Some(a < b),
                    _ => None,
                });
            if f > sl + 1e-9 && prev == Some(true) {
                pos = 1;
            } else if f < sl - 1e-9 && prev == Some(false) {
                pos = 0;
            }
        }
        assert_eq!(got_t, pos, "bar {t}");
    }
}

#[test]
fn holds_nothing_until_indicators_are_defined() {
    let bars = synth(400, 5);
    let s = strategy::lookup("activation").unwrap();
    let mut p = strategy::default_params(s);
    p[0] = 200.0; // trend_len: SMA defined from bar 199
    p[7] = -1.0; // entry: would be long at once
    let pos = positions(&bars, s, &p, Direction::Long);
    assert!(pos[..199].iter().all(|&x| x == 0));
    assert_eq!(pos[199], 1);
}
