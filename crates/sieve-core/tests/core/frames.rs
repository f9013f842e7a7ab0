//! `tf(…)` and `informative(…)` against values worked out by hand, the
//! checker's refusals, and no look-ahead: cutting the data anywhere leaves
//! every earlier value as it was.

use std::sync::Arc;

use sieve_core::config::Config;
use sieve_core::data::{synth, Bars, Frames, Informative};
use sieve_core::rules::{values, ExternalFunctions};

const HOUR: i64 = 3_600_000;
/// 2024-03-04 00:00 UTC, a Monday.
const MONDAY: i64 = 1_709_510_400_000;

/// Bars `step` apart from `start`, closes as given (open = close − 1,
/// high/low ±2, volume 10).
fn spaced(start: i64, step: i64, close: &[f64]) -> Bars {
    let n = close.len();
    let shifted = |d: f64| close.iter().map(|c| c + d).collect();
    Bars::new(
        (0..n as i64).map(|i| start + i * step).collect(),
        [shifted(-1.0), shifted(2.0), shifted(-2.0), close.to_vec()],
        Some(vec![10.0; n]),
    )
}

fn eval(expression: &str, bars: &Bars) -> Vec<f64> {
    values(expression, bars, &ExternalFunctions::default()).unwrap()
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

const NAN: f64 = f64::NAN;

/// Six-hourly bars over three days: a day's close, high and volume
/// appear on its last bar, the one that closes at the day's end
/// (midnight), never earlier; the mean of two daily closes once two days
/// have ended.
#[test]
fn a_day_appears_on_the_bar_that_closes_it() {
    let close = [
        1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
    ];
    let bars = spaced(MONDAY, 6 * HOUR, &close);
    let day = |v: [f64; 3]| {
        let mut out = vec![NAN; 3];
        out.extend([v[0]; 4]);
        out.extend([v[1]; 4]);
        out.push(v[2]);
        out
    };
    assert!(same(
        &eval("tf(\"1d\", close)", &bars),
        &day([4.0, 8.0, 12.0])
    ));
    assert!(same(
        &eval("tf(\"1d\", high)", &bars),
        &day([6.0, 10.0, 14.0])
    ));
    assert!(same(
        &eval("tf(\"1d\", open)", &bars),
        &day([0.0, 4.0, 8.0])
    ));
    assert!(same(&eval("tf(\"1d\", volume)", &bars), &day([40.0; 3])));
    let mut mean = vec![NAN; 7];
    mean.extend([6.0, 6.0, 6.0, 6.0, 10.0]);
    assert!(same(&eval("tf(\"1d\", sma(close, 2))", &bars), &mean));
    // True/false stays true/false (1 / 0), false before it is known.
    let rising = eval("tf(\"1d\", close > open)", &bars);
    assert!(same(
        &rising,
        &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    ));
    // Hours: the day's last bar closes an hour after it opens (bar length
    // given): then only the next day's first bar sees the day.
    let mut b = bars.clone();
    b.time = (0..12).map(|i| MONDAY + i * 6 * HOUR + 4 * HOUR).collect();
    b.frames = Some(Arc::new(Frames {
        bar: Some(HOUR),
        ..Frames::default()
    }));
    let v = eval("tf(\"1d\", close)", &b);
    assert!(v[..4].iter().all(|x| x.is_nan()) && v[4] == 4.0, "{v:?}");
}

/// With the bar length given as 6 hours and a session that ends at
/// 18:00, the day's last bar (18:00 open, 24:00 close) is not the first
/// to see it: the 12:00 bar closes at 18:00, the session's end.
#[test]
fn a_session_end_shows_the_day_on_the_bar_that_closes_then() {
    let close = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let mut bars = spaced(MONDAY, 6 * HOUR, &close);
    bars.frames = Some(Arc::new(Frames {
        session_end: Some(18 * 60),
        bar: Some(6 * HOUR),
        ..Frames::default()
    }));
    // The 18:00 bar opens after the session: it is in no day (each day
    // opens with its 00:00 bar).
    let want = [NAN, NAN, 3.0, 3.0, 3.0, 3.0, 7.0, 7.0];
    assert!(same(&eval("tf(\"1d\", close)", &bars), &want));
    let want = [NAN, NAN, 0.0, 0.0, 0.0, 0.0, 4.0, 4.0];
    assert!(same(&eval("tf(\"1d\", open)", &bars), &want));
}

/// Hourly bars: a 4-hour bar is seen from the bar that closes at its end
/// (the 4th of it); a week of Monday-to-Sunday from the next Monday's
/// first bar; the first week starting mid-week is a partial one.
#[test]
fn four_hours_and_weeks_by_hand() {
    let close: Vec<f64> = (0..24 * 10).map(|i| i as f64).collect();
    // From Wednesday 2024-03-06 00:00.
    let bars = spaced(MONDAY + 2 * 24 * HOUR, HOUR, &close);
    let v = eval("tf(\"4h\", close)", &bars);
    assert!(v[..3].iter().all(|x| x.is_nan()));
    assert_eq!((v[3], v[6], v[7]), (3.0, 3.0, 7.0));
    let w = eval("tf(\"1w\", close)", &bars);
    // Wednesday..Sunday is 5 days = 120 hourly bars; the last, Sunday
    // 23:00, closes when the week ends (Monday 00:00).
    assert!(w[..119].iter().all(|x| x.is_nan()));
    assert_eq!((w[119], w[120]), (119.0, 119.0));
    let sunday = Frames {
        week_start: chrono::Weekday::Sun,
        ..Frames::default()
    };
    let mut b = bars.clone();
    b.frames = Some(Arc::new(sunday));
    let w = eval("tf(\"1w\", close)", &b);
    assert_eq!(
        (w[94].is_nan(), w[95]),
        (true, 95.0),
        "weeks end on Saturday"
    );
}

/// Another instrument's bars, half-hourly, read on hourly bars: each
/// hourly bar sees the last half-hour bar that has closed by its close.
#[test]
fn an_informative_instrument_as_of_each_close() {
    let lead: Vec<f64> = (0..40).map(|i| 100.0 + i as f64).collect();
    // The informative bars start half an hour before the traded ones.
    let other = spaced(MONDAY - HOUR / 2, HOUR / 2, &lead);
    let mut bars = spaced(MONDAY, HOUR, &[1.0; 10]);
    bars.frames = Some(Arc::new(Frames {
        informative: vec![Informative {
            name: "lead".into(),
            bars: Arc::new(other),
        }],
        ..Frames::default()
    }));
    // Bar k closes at (k+1)h; the lead bar opening at (k+1)h − 30 min
    // closes then: index 2k + 2.
    let v = eval("informative(\"lead\", close)", &bars);
    let want: Vec<f64> = (0..10).map(|k| 100.0 + (2 * k + 2) as f64).collect();
    assert!(same(&v, &want), "{v:?}");
    let e = values(
        "informative(\"btc\", close)",
        &bars,
        &ExternalFunctions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("'btc'") && e.contains("lead"), "{e}");
    // Its higher timeframe: hours of the lead, seen as of each close.
    let h = eval("informative(\"lead\", tf(\"1h\", close))", &bars);
    assert!(h.iter().skip(1).all(|x| x.is_finite()));
}

/// Mistakes are said where they are written.
#[test]
fn what_the_checker_refuses() {
    let bars = spaced(MONDAY, HOUR, &[1.0; 30]);
    let refused = |e: &str| {
        values(e, &bars, &ExternalFunctions::default())
            .unwrap_err()
            .to_string()
    };
    assert!(refused("tf(\"7h\", close)").contains("divide a day"));
    assert!(refused("tf(\"1d\", tf(\"1w\", close))").contains("inside tf"));
    assert!(refused("tf(1d, close)").contains("in quotes"));
    assert!(refused("tf(\"1d\", entry_price)").contains("no trade"));
    assert!(refused("tf(\"1d\", signal)").contains("'signal'"));
    assert!(refused("tf(\"1d\", informative(\"x\", close))").contains("informative"));
    assert!(refused("tf(\"1d\")").contains("tf takes"));
}

/// A parameter inside tf is swept as a window (a whole number); a
/// definition read only inside tf counts as used, and is computed there
/// on the daily bars.
#[test]
fn parameters_and_definitions_inside() {
    let config = Config::parse(
        r#"
[strategy]
name = "daily_filter"
entry = "close > tf(\"1d\", up)"
exit = "close < sma(close, 5)"
define = { up = "sma(close, n)" }
[strategy.params]
n = { values = [2, 3] }
"#,
    )
    .unwrap();
    let strategy = config.strategy().unwrap();
    let spec = &strategy.params()[0];
    assert_eq!(spec.kind, sieve_core::strategy::ParamKind::Int);
    let bad = Config::parse(
        "[strategy]\nname = \"x\"\nentry = \"close > tf(\\\"1d\\\", sma(close, n))\"\nexit = \"false\"\n[strategy.params]\nn = { values = [2.5] }\n",
    );
    assert!(bad.unwrap_err().to_string().contains("whole numbers"));
}

/// No look-ahead by construction: for random cut points, the data cut
/// there (the traded bars and the informative ones up to the last traded
/// bar's close) gives every earlier bar the value it has on the whole
/// data — on irregular hourly bars with gaps, for several timeframes, on
/// UTC days, on New York's clock with a 16:00 session end (bars after it
/// included), and with 17:00-to-17:00 days and Sunday weeks.
#[test]
fn cutting_the_data_anywhere_changes_no_earlier_value() {
    let mut state = 99u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let base = synth(700, 3);
    // From 2024-03-04: across New York's clock change of 10 March.
    let mut time = vec![MONDAY];
    for _ in 1..base.len() {
        let gap = match next() % 25 {
            0 => 30 * HOUR,
            1 => HOUR / 3,
            _ => HOUR,
        };
        time.push(time[time.len() - 1] + gap);
    }
    let lead_base = synth(1500, 4);
    let lead_time: Vec<i64> = (0..1500).map(|i| MONDAY - HOUR + i * HOUR / 2).collect();
    let ny: chrono_tz::Tz = "America/New_York".parse().unwrap();
    let calendars = [
        (None, Frames::default()),
        (
            Some(ny),
            Frames {
                session_end: Some(16 * 60),
                ..Frames::default()
            },
        ),
        (
            Some(ny),
            Frames {
                day_start: 17 * 60,
                week_start: chrono::Weekday::Sun,
                ..Frames::default()
            },
        ),
    ];
    for (zone, calendar) in calendars {
        let make = |cut: usize| {
            let mut b = base.clone();
            b.time = time.clone();
            truncate(&mut b, cut);
            let close = b.time[cut - 1] + HOUR;
            let mut lead = lead_base.clone();
            lead.time = lead_time.clone();
            let keep = lead.time.partition_point(|&t| t + HOUR / 2 <= close);
            truncate(&mut lead, keep.max(1));
            b.timezone = zone;
            b.frames = Some(Arc::new(Frames {
                bar: Some(HOUR),
                informative: vec![Informative {
                    name: "lead".into(),
                    bars: Arc::new(lead),
                }],
                ..calendar.clone()
            }));
            b
        };
        let expressions = [
            "tf(\"4h\", rsi(close, 3))",
            "tf(\"1d\", sma(close, 2) - low)",
            "tf(\"1w\", highest(high, 2))",
            "tf(\"1M\", open)",
            "informative(\"lead\", ema(close, 4))",
            "informative(\"lead\", tf(\"4h\", close))",
        ];
        let whole = make(base.len());
        for e in expressions {
            let full = eval(e, &whole);
            assert!(full.iter().filter(|v| v.is_finite()).count() > 100, "{e}");
            for _ in 0..25 {
                let cut = 1 + next() as usize % base.len();
                let part = eval(e, &make(cut));
                assert!(
                    same(&part, &full[..cut]),
                    "{e} ({zone:?}, {calendar:?}): cut at {cut}"
                );
            }
        }
    }
}

fn truncate(b: &mut Bars, n: usize) {
    b.time.truncate(n);
    b.open.truncate(n);
    b.high.truncate(n);
    b.low.truncate(n);
    b.close.truncate(n);
    if let Some(v) = &mut b.volume {
        v.truncate(n);
    }
}
