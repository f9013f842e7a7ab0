//! The `activation` strategy: a weighted score of trend, momentum and
//! breakout terms, entered and left with hysteresis, with an ATR trailing
//! stop; sets that share a score run side by side in vector lanes.

use std::borrow::Cow;

use super::{
    changes_by_positions, len_param, Changes, Direction, LaneBuffers, ParamKind, ParamSpec,
    Strategy,
};
use crate::data::Bars;
use crate::indicators::{Indicator, IndicatorSet};
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2, Avx512};
use crate::simd::{Lanes, Level, Portable, Vector, LANES};

/// The composite "activation score" strategy of the original system
///: a weighted mean of trend, momentum and breakout in [−1, 1],
/// entered and left with hysteresis (`entry` / `exit`) and protected by an ATR
/// trailing stop on the highest close since the entry decision.
pub struct Activation;

const fn int(
    name: &'static str,
    default: f64,
    grid: (f64, f64, f64),
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name: Cow::Borrowed(name),
        kind: ParamKind::Int,
        default,
        min: 1.0,
        max: 100_000.0,
        grid,
        doc,
    }
}

const fn real(
    name: &'static str,
    default: f64,
    (min, max): (f64, f64),
    grid: (f64, f64, f64),
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name: Cow::Borrowed(name),
        kind: ParamKind::Float,
        default,
        min,
        max,
        grid,
        doc,
    }
}

const PARAMS: &[ParamSpec] = &[
    int(
        "trend_len",
        50.0,
        (20.0, 200.0, 30.0),
        "SMA length of the trend term",
    ),
    int(
        "rsi_len",
        14.0,
        (7.0, 21.0, 7.0),
        "RSI length of the momentum term",
    ),
    int(
        "dc_len",
        20.0,
        (10.0, 50.0, 20.0),
        "channel length of the breakout term",
    ),
    int(
        "atr_len",
        14.0,
        (10.0, 20.0, 10.0),
        "ATR length (trend scale and stop)",
    ),
    real(
        "w_trend",
        1.0,
        (0.0, 1.0e6),
        (0.0, 1.0, 0.5),
        "weight of the trend term",
    ),
    real(
        "w_rsi",
        1.0,
        (0.0, 1.0e6),
        (0.0, 1.0, 0.5),
        "weight of the momentum term",
    ),
    real(
        "w_dc",
        1.0,
        (0.0, 1.0e6),
        (0.0, 1.0, 0.5),
        "weight of the breakout term",
    ),
    real(
        "entry",
        0.4,
        (-1.0, 1.0),
        (0.2, 0.6, 0.2),
        "enter long when score ≥ entry",
    ),
    real(
        "exit",
        0.0,
        (-1.0, 1.0),
        (-0.2, 0.2, 0.2),
        "exit long when score ≤ exit",
    ),
    real(
        "stop_atr",
        3.0,
        (0.0, 1.0e3),
        (0.0, 4.0, 2.0),
        "trailing stop in ATRs below the highest close (0 = off)",
    ),
];

/// Indices of the parameters above.
const TREND_LEN: usize = 0;
const RSI_LEN: usize = 1;
const DC_LEN: usize = 2;
const ATR_LEN: usize = 3;
const W_TREND: usize = 4;
const W_RSI: usize = 5;
const W_DC: usize = 6;
const ENTRY: usize = 7;
const EXIT: usize = 8;
const STOP_ATR: usize = 9;

fn keys(p: &[f64]) -> [Indicator; 4] {
    let atr = len_param(p[ATR_LEN]);
    [
        Indicator::TrendScore(len_param(p[TREND_LEN]), atr),
        Indicator::RsiScore(len_param(p[RSI_LEN])),
        Indicator::ChannelPosition(len_param(p[DC_LEN])),
        Indicator::Atr(atr),
    ]
}

/// The weights and the thresholds compared with the weighted sum
/// `score · Σw`: the entry and exit scaled by Σw (> 0: weights are ≥ 0), so
/// no bar divides.
fn weights_and_thresholds(p: &[f64]) -> ([f64; 3], f64, f64) {
    let (w_trend, w_rsi, w_dc) = (p[W_TREND], p[W_RSI], p[W_DC]);
    let w_sum = w_trend + w_rsi + w_dc;
    let (entry, exit) = if w_sum == 0.0 {
        (p[ENTRY], p[EXIT])
    } else {
        (p[ENTRY] * w_sum, p[EXIT] * w_sum)
    };
    ([w_trend, w_rsi, w_dc], entry, exit)
}

impl Strategy for Activation {
    fn name(&self) -> &'static str {
        "activation"
    }
    fn summary(&self) -> &'static str {
        "weighted trend/momentum/breakout score with hysteresis and an ATR trailing stop"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn indicators(&self, p: &[f64], out: &mut Vec<Indicator>) {
        out.extend(keys(p));
    }
    /// Sets that share the score series (the same indicators and weights:
    /// most groups of a grid whose last axes are the thresholds), at least
    /// [`MIN_RUN`] in a row: others, with their positions found one by one,
    /// are faster screened one by one (measured 15 % when lanes marked
    /// every bar).
    fn lanes_pay(&self, params: &[&[f64]]) -> bool {
        params.len() <= LANES && score_runs(params).any(|run| run.len() >= MIN_RUN)
    }

    fn screen_path(&self) -> String {
        format!("lanes where {MIN_RUN} or more of a batch share their score's terms, else one combination at a time")
    }

    /// The targets depend on the parameters only through the first bar
    /// simulated, the score's terms, the thresholds and the stop: a term
    /// weighted 0 whose series is finite on the bars simulated adds ±0
    /// (no comparison sees the sign), so its length does not count; with
    /// no stop, neither does the ATR's (beyond the first bar and the trend
    /// term).
    fn lane_keys(
        &self,
        _bars: &Bars,
        ind: &IndicatorSet,
        params: &[&[f64]],
        end: usize,
        out: &mut [Vec<u64>],
    ) -> bool {
        // The last series found finite or not, per term (sets of a batch
        // mostly share them).
        let mut finite: [Option<(Indicator, usize, bool)>; 3] = [None; 3];
        for (p, key) in params.iter().zip(out.iter_mut()) {
            let k = keys(p);
            let start = super::warmup(&k).min(end);
            key.clear();
            key.extend([start as u64, end as u64]);
            for (term, (&series, &w)) in k[..3].iter().zip(&p[W_TREND..=W_DC]).enumerate() {
                let irrelevant = w == 0.0 && {
                    let known = finite[term].filter(|&(s, at, _)| s == series && at == start);
                    let is_finite = known.map_or_else(
                        || ind.get(series)[start..end].iter().all(|v| v.is_finite()),
                        |(_, _, f)| f,
                    );
                    finite[term] = Some((series, start, is_finite));
                    is_finite
                };
                key.extend(if irrelevant {
                    NO_SERIES
                } else {
                    series_words(series)
                });
            }
            let stop = p[STOP_ATR];
            key.extend(if stop > 0.0 {
                series_words(k[3])
            } else {
                NO_SERIES
            });
            key.extend(p[W_TREND..].iter().map(|v| v.to_bits()));
        }
        true
    }

    /// Runs of sets that share the score series run the state machine side
    /// by side in vector lanes (a batch that straddles two groups of a grid
    /// runs twice); short runs one by one.
    fn lane_changes(
        &self,
        bars: &Bars,
        ind: &IndicatorSet,
        params: &[&[f64]],
        d: Direction,
        end: usize,
        level: Level,
        buffers: &mut LaneBuffers,
        out: &mut [Changes],
    ) {
        assert!(level <= Level::best(), "{level:?} on a CPU without it");
        for run in score_runs(params) {
            let (params, out) = (&params[run.clone()], &mut out[run]);
            if params.len() < MIN_RUN {
                changes_by_positions(self, bars, ind, params, d, end, buffers, out);
                continue;
            }
            let job = Job::new(bars, ind, params, d, end);
            match level {
                // SAFETY: the CPU has the features each function is
                // compiled for.
                #[cfg(target_arch = "x86_64")]
                Level::Avx512 => unsafe { lanes_avx512(&job, buffers, out) },
                #[cfg(target_arch = "x86_64")]
                Level::Avx2 => unsafe { lanes_avx2(&job, buffers, out) },
                _ => job.run::<Portable>(buffers, out),
            }
        }
    }

    fn positions(&self, bars: &Bars, ind: &IndicatorSet, p: &[f64], d: Direction, out: &mut [i8]) {
        let k = keys(p);
        let start = super::warmup(&k).min(out.len());
        let n = out.len();
        // Sliced to one length so the loop runs without bounds checks.
        let [trend, momentum, breakout, atr] = k.map(|key| &ind.get(key)[..n]);
        let close = &bars.close[..n];
        let ([w_trend, w_rsi, w_dc], entry, exit) = weights_and_thresholds(p);
        let stop_atr = p[STOP_ATR];
        let shorts = d == Direction::LongShort;

        out[..start].fill(0);
        let mut position = 0i8;
        // Highest close since a long entry decision / lowest since a short one.
        let mut extreme = 0.0_f64;
        for t in start..n {
            let c = close[t];
            // With Σw = 0 every term is weighted 0, so the score is 0 as defined.
            let score = w_trend * trend[t] + w_rsi * momentum[t] + w_dc * breakout[t];
            // At most one transition per bar, from the state at its start.
            match position {
                1 => {
                    extreme = extreme.max(c);
                    if shorts && score <= -entry {
                        position = -1;
                        extreme = c;
                    } else if score <= exit || (stop_atr > 0.0 && c < extreme - stop_atr * atr[t]) {
                        position = 0;
                    }
                }
                -1 => {
                    extreme = extreme.min(c);
                    if score >= entry {
                        position = 1;
                        extreme = c;
                    } else if score >= -exit || (stop_atr > 0.0 && c > extreme + stop_atr * atr[t])
                    {
                        position = 0;
                    }
                }
                _ => {
                    if score >= entry {
                        position = 1;
                        extreme = c;
                    } else if shorts && score <= -entry {
                        position = -1;
                        extreme = c;
                    }
                }
            }
            out[t] = position;
        }
    }
}

/// An indicator setting of [`keys`] as words of a memo key.
fn series_words(key: Indicator) -> [u64; 3] {
    let (kind, a, b) = match key {
        Indicator::TrendScore(n, atr) => (1, n, atr),
        Indicator::RsiScore(n) => (2, n, 0),
        Indicator::ChannelPosition(n) => (3, n, 0),
        Indicator::Atr(n) => (4, n, 0),
        _ => (5, 0, 0),
    };
    [kind, a as u64, b as u64]
}

/// A series that does not count, in a memo key.
const NO_SERIES: [u64; 3] = [u64::MAX; 3];

/// The shortest run of sets sharing a score that the lanes take (a bar of
/// the vector state machine costs the same for one set as for eight;
/// measured on the benchmark grid, whose batches straddle groups: runs of
/// 1 and 2 in lanes were 3 % slower overall than one by one).
const MIN_RUN: usize = 3;

/// `params` as runs of consecutive sets with the same indicators and
/// weights, hence the same score on every bar.
fn score_runs<'p>(params: &'p [&[f64]]) -> impl Iterator<Item = std::ops::Range<usize>> + 'p {
    let shared = |a: &[f64], b: &[f64]| {
        keys(a) == keys(b)
            && [W_TREND, W_RSI, W_DC]
                .iter()
                .all(|&w| a[w].to_bits() == b[w].to_bits())
    };
    let mut from = 0;
    std::iter::from_fn(move || {
        let first = *params.get(from)?;
        let len = params[from..]
            .iter()
            .take_while(|p| shared(p, first))
            .count();
        from += len;
        Some(from - len..from)
    })
}

/// Up to [`LANES`] parameter sets that share the score series, for the state
/// machine in lanes.
struct Job<'a> {
    close: &'a [f64],
    /// The four series of [`keys`], cut to the bars simulated.
    series: [&'a [f64]; 4],
    weights: [f64; 3],
    /// First bar with every indicator defined.
    start: usize,
    entry: Lanes,
    exit: Lanes,
    /// Each lane's stop in ATRs; lanes without one (`stop_atr ≤ 0`) get
    /// +∞, whose stop test is false as the scalar code's skipped one: the
    /// ATR is ≥ 0 or NaN (a true range is max(high, prev close) −
    /// min(low, prev close) ≥ 0 for any high and low where the close is a
    /// number, as loaded closes are), so the stop distance is +∞ or NaN,
    /// and no close is below `high − ∞` or above `low + ∞`.
    stop_atr: Lanes,
    shorts: bool,
}

impl<'a> Job<'a> {
    fn new(
        bars: &'a Bars,
        ind: &'a IndicatorSet,
        params: &[&[f64]],
        d: Direction,
        end: usize,
    ) -> Self {
        let n = end.min(bars.len());
        let k = keys(params[0]);
        let lane = |l: usize| params[if l < params.len() { l } else { 0 }];
        let (weights, _, _) = weights_and_thresholds(params[0]);
        Job {
            close: &bars.close[..n],
            series: k.map(|key| &ind.get(key)[..n]),
            weights,
            start: super::warmup(&k).min(n),
            entry: std::array::from_fn(|l| weights_and_thresholds(lane(l)).1),
            exit: std::array::from_fn(|l| weights_and_thresholds(lane(l)).2),
            stop_atr: std::array::from_fn(|l| match lane(l)[STOP_ATR] {
                s if s > 0.0 => s,
                _ => f64::INFINITY,
            }),
            shorts: d == Direction::LongShort,
        }
    }

    /// [`Activation::positions`] of every lane at once, as changes.
    #[inline(always)]
    fn run<V: Vector<LANES>>(&self, buffers: &mut LaneBuffers, out: &mut [Changes]) {
        if self.shorts {
            self.scan::<V, true>(buffers, out)
        } else {
            self.scan::<V, false>(buffers, out)
        }
    }

    /// The same comparisons on the same values as the scalar state machine,
    /// with the branches of a bar's transition turned into lane masks (the
    /// state is two masks: long, short).
    ///
    /// A lane moves every ~17 bars on the benchmark grid, so "did any lane
    /// move on this bar" is a coin toss: the bar loop has no branch and
    /// marks each bar's masks in bytes, and the changes are read from
    /// those marks afterwards, 64 bars at a time turned into a word per
    /// lane ([`Vector::transpose`]) (measured: the mispredicted branch and
    /// the per-lane pushes were most of the scan).
    #[inline(always)]
    fn scan<V: Vector<LANES>, const SHORTS: bool>(
        &self,
        buffers: &mut LaneBuffers,
        out: &mut [Changes],
    ) {
        let n = self.close.len();
        let LaneBuffers {
            marks,
            values,
            moves,
            ..
        } = buffers;
        // Rows of a whole number of 64-bar words: the lanes long after each
        // bar and (with shorts) those short; zero before the first bar
        // simulated and after the last.
        let row = n.div_ceil(64) * 64;
        marks.clear();
        marks.resize(if SHORTS { 2 * row } else { row }, 0);
        let (long_row, short_row) = marks.split_at_mut(row);
        let [trend, momentum, breakout, atr] = self.series;
        let [w_trend, w_rsi, w_dc] = self.weights;
        let zero = V::splat(0.0);
        let entry = V::load(&self.entry);
        let exit = V::load(&self.exit);
        // `0 − x` is `−x` but for the sign of a zero, which no comparison
        // sees.
        let below_entry = zero.sub(entry);
        let below_exit = zero.sub(exit);
        let stop_atr = V::load(&self.stop_atr);
        let none = zero.lt(zero);
        // Each lane's state (long / short: the masks; flat: neither) at the
        // start of the bar, and the lanes that entered on the bar before.
        let (mut long, mut short) = (none, none);
        let (mut entered_long, mut entered_short) = (none, none);
        // The highest close since a long entry decision, the lowest since a
        // short one: kept on every bar (the scalar code keeps them only
        // while in the position, and sets them to the close of the entry
        // bar, as the selects below do), so that neither waits for the
        // state; `max` / `min` take the close where the scalar code's
        // `extreme.max(c)` does (they differ only on NaN, which loaded
        // closes are not).
        let (mut high, mut low) = (zero, zero);
        let mut prev_close = zero;
        // The score of each bar, once for all lanes (the same operations
        // as the scalar code's, bar by bar).
        values.clear();
        values.extend(
            trend
                .iter()
                .zip(momentum)
                .zip(breakout)
                .map(|((&a, &b), &c)| w_trend * a + w_rsi * b + w_dc * c),
        );
        let scores = &values[..n];
        let close = &self.close[..n];
        let atr = &atr[..n];
        let long_at = &mut long_row[..n];
        let short_at = &mut short_row[..if SHORTS { n } else { 0 }];
        for t in self.start..n {
            let c = V::splat(close[t]);
            let score = V::splat(scores[t]);
            let risk = stop_atr.mul(V::splat(atr[t]));
            high = c.max(V::select(entered_long, prev_close, high));
            // At most one transition per bar, from the state at its start:
            // a lane in a position stays in it where none of the scalar
            // code's exit tests holds (their negations, true on NaN as the
            // tests are false), a lane out of it enters as the scalar code
            // decides; each new state is one pick from the old one, so
            // that the chain from the bar before is short.
            let rises = score.ge(entry);
            let mut stays_long = V::and(score.not_le(exit), c.not_lt(high.sub(risk)));
            entered_long = V::and_not(rises, long);
            if SHORTS {
                low = c.min(V::select(entered_short, prev_close, low));
                let falls = score.le(below_entry);
                stays_long = V::and_not(stays_long, falls);
                let stays_short = V::and_not(
                    V::and(score.not_ge(below_exit), c.not_gt(low.add(risk))),
                    rises,
                );
                // A long lane turns short when the score falls; a flat one
                // when it falls and does not rise: every lane but those
                // entering long.
                let turns_short = V::and_not(falls, entered_long);
                entered_short = V::and_not(turns_short, short);
                short = V::pick(short, stays_short, turns_short);
            }
            long = V::pick(long, stays_long, rises);
            prev_close = c;
            long_at[t] = V::bits(long);
            if SHORTS {
                short_at[t] = V::bits(short);
            }
        }
        // Each lane's moves as bits, lane after lane: where its long or
        // short bit differs from the bar before's (found here, per word,
        // rather than per bar in the loop above).
        let words = row / 64;
        moves.clear();
        moves.resize(LANES * words, 0);
        let (mut long_before, mut short_before) = ([0u64; LANES], [0u64; LANES]);
        for w in 0..words {
            let bars = w * 64..(w + 1) * 64;
            let long = V::transpose(long_row[bars.clone()].try_into().expect("64 marks"));
            let short = if SHORTS {
                V::transpose(short_row[bars].try_into().expect("64 marks"))
            } else {
                [0; LANES]
            };
            for l in 0..LANES {
                let moved = |now: u64, before: &mut u64| {
                    let m = now ^ (now << 1 | *before >> 63);
                    *before = now;
                    m
                };
                moves[l * words + w] =
                    moved(long[l], &mut long_before[l]) | moved(short[l], &mut short_before[l]);
            }
        }
        // The marks after the last bar are zero, not the last bar's state:
        // no move there.
        if !n.is_multiple_of(64) {
            for lane in moves.chunks_exact_mut(words) {
                lane[words - 1] &= (1 << (n % 64)) - 1;
            }
        }
        for (l, (changes, moves)) in out.iter_mut().zip(moves.chunks_exact(words)).enumerate() {
            changes.reset(n);
            let bit = |row: &[u8], t: usize| i8::from(row[t] & (1 << l) != 0);
            changes.extend_moves(moves, |t| {
                if SHORTS {
                    bit(long_row, t) - bit(short_row, t)
                } else {
                    bit(long_row, t)
                }
            });
        }
    }
}

/// The state machine in lanes compiled for AVX-512 (plain compares and
/// IEEE operations, as the scalar code).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
fn lanes_avx512(job: &Job<'_>, buffers: &mut LaneBuffers, out: &mut [Changes]) {
    job.run::<Avx512>(buffers, out)
}

/// The state machine in lanes compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn lanes_avx2(job: &Job<'_>, buffers: &mut LaneBuffers, out: &mut [Changes]) {
    job.run::<Avx2>(buffers, out)
}
