//! Evaluating the rules of one combination block by block: the columns
//! they read (shared series, computed once per setting, and per-combination
//! series), the thread's scratch frame, and each [`Block`] of signals.

use std::cell::RefCell;

use super::compiled::Rules;
use super::eval::{self, Frame, Signals, BLOCK};
use super::functions::Func;
use super::ir::{self, Col, Id, Op};
use super::keys::KeyValues;
use crate::data::Bars;
use crate::engine::TradeState;
use crate::indicators::{Indicator, IndicatorSet, SeriesSource};
use crate::strategy::Direction;

#[derive(Default)]
pub(super) struct Scratch {
    pub(super) scalars: Vec<f64>,
    pub(super) frame: Frame,
}

thread_local! {
    /// Per-thread buffers, so screening allocates nothing per combination.
    pub(super) static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Signals that never fire (the short side of a long-only strategy).
pub(super) static NEVER: [u8; BLOCK] = [0; BLOCK];

impl SeriesSource for Rules {
    fn inputs(&self, key: Indicator) -> Vec<Indicator> {
        match key {
            Indicator::Rule(r) => {
                let params = self.params_of(r);
                self.plan
                    .inputs
                    .get(r.node as usize)
                    .map_or_else(Vec::new, |ins| {
                        ins.iter().map(|&i| self.key(i, &params)).collect()
                    })
            }
            other => other.inputs(),
        }
    }

    fn compute<'a>(
        &self,
        bars: &Bars,
        key: Indicator,
        input: &dyn Fn(Indicator) -> &'a [f64],
    ) -> Vec<f64> {
        let Indicator::Rule(r) = key else {
            return key.compute_with(bars, input);
        };
        let id = r.node as usize;
        if id >= self.graph.nodes.len() {
            return vec![f64::NAN; bars.len()];
        }
        let params = self.params_of(r);
        let scalars = ir::scalar_values(&self.graph, &params, self.graph.nodes.len());
        let get = |i: Id| input(self.key(i, &params));
        self.compute_column(id, bars, &scalars, &get, &mut Frame::default())
    }
}

impl Rules {
    /// Computes materialised node `id` as a whole column; `get` supplies the
    /// columns it reads.
    pub(super) fn compute_column<'a>(
        &self,
        id: Id,
        bars: &Bars,
        scalars: &[f64],
        get: &dyn Fn(Id) -> &'a [f64],
        frame: &mut Frame,
    ) -> Vec<f64> {
        match &self.graph.nodes[id].op {
            Op::User(k) => match bars.extra(&self.graph.user[*k].name) {
                Some(column) => column.values.clone(),
                // Checked with the data; undefined if ever asked otherwise.
                None => vec![f64::NAN; bars.len()],
            },
            Op::Frame(k, args) => {
                let params = self.frame_params(args, scalars);
                let on = &self.graph.frames[*k].on;
                match super::frames::bars_of(on, bars) {
                    Some((other, ends)) => {
                        let values = self.frames[*k].root_values(&other, &params);
                        super::frames::as_of_close(bars, &ends, &values)
                    }
                    // Checked with the data; undefined if ever asked otherwise.
                    None => vec![f64::NAN; bars.len()],
                }
            }
            Op::Extern(k, args) => {
                let settings: Vec<f64> = args.iter().map(|&a| scalars[a]).collect();
                match self.graph.functions.get(*k) {
                    Some(f) => f.series(bars, &settings),
                    None => vec![f64::NAN; bars.len()],
                }
            }
            Op::Call(Func::Windowed(f), args) => {
                let (inputs, settings) = args.split_at(f.spec().series.len());
                let settings: Vec<f64> = settings.iter().map(|&a| scalars[a]).collect();
                // An input that does not change from bar to bar, as a column.
                let splats: Vec<Option<Vec<f64>>> = inputs
                    .iter()
                    .map(|&a| {
                        let node = &self.graph.nodes[a];
                        let column = match node.op {
                            Op::Col(c) => eval::column(bars, c).is_some(),
                            _ => node.series,
                        };
                        (!column).then(|| vec![scalars[a]; bars.len()])
                    })
                    .collect();
                let xs: Vec<&[f64]> = inputs
                    .iter()
                    .zip(&splats)
                    .map(|(&a, splat)| match (splat, &self.graph.nodes[a].op) {
                        (Some(v), _) => v.as_slice(),
                        (None, Op::Col(c)) => eval::column(bars, *c).unwrap_or_default(),
                        (None, _) => get(a),
                    })
                    .collect();
                f.column(&xs, &settings, bars)
            }
            _ => {
                let mut full: Vec<Option<&[f64]>> = vec![None; self.graph.nodes.len()];
                self.fill_columns(bars, &mut full);
                for &i in &self.plan.inputs[id] {
                    full[i] = Some(get(i));
                }
                let program = &self.plan.programs[id];
                self.start(frame, scalars);
                let mut out = vec![f64::NAN; bars.len()];
                for start in (0..bars.len()).step_by(BLOCK) {
                    let len = BLOCK.min(bars.len() - start);
                    frame.eval(&self.graph, program, &self.plan.twins, &full, start, len);
                    out[start..start + len].copy_from_slice(frame.num(&full, id, start, len));
                }
                out
            }
        }
    }

    /// Points every column node at its data.
    pub(super) fn fill_columns<'a>(&self, bars: &'a Bars, full: &mut [Option<&'a [f64]>]) {
        for &(id, c) in &self.plan.columns {
            full[id] = eval::column(bars, c);
        }
    }

    /// Clears `frame` for a new pass and fills in the scalars.
    /// A column the data lacks (volume) reads as undefined: its node's
    /// scalar is NaN, so its slot is filled with NaN.
    pub(super) fn start(&self, frame: &mut Frame, scalars: &[f64]) {
        frame.reset(self.graph.nodes.len());
        for &i in &self.plan.splat {
            frame.splat(&self.graph, i, scalars[i]);
        }
        for &(id, _) in self.plan.columns.iter().filter(|(_, c)| *c == Col::Volume) {
            frame.splat(&self.graph, id, f64::NAN);
        }
    }
}

impl Rules {
    /// Evaluates the rules of `params` over bars `..n` (at most the bars)
    /// block by block, handing each [`Block`] to `each`, which sets the
    /// trade's state ([`Block::project`]) before it reads the signals.
    pub(super) fn blocks(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        each: impl FnMut(&mut Block),
    ) {
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            self.blocks_in(&mut scratch, bars, indicators, params, direction, n, each)
        })
    }

    /// [`Rules::blocks`] in the buffers `scratch` (an expression on other
    /// bars is evaluated while its strategy's thread buffers are in use).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn blocks_in(
        &self,
        scratch: &mut Scratch,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        direction: Direction,
        n: usize,
        mut each: impl FnMut(&mut Block),
    ) {
        self.with_columns_in(scratch, bars, indicators, params, |scalars, full, frame| {
            self.start(frame, scalars);
            let n = n.min(bars.len());
            for start in (0..n).step_by(BLOCK) {
                let len = BLOCK.min(n - start);
                frame.eval(
                    &self.graph,
                    &self.plan.main,
                    &self.plan.twins,
                    full,
                    start,
                    len,
                );
                each(&mut Block {
                    rules: self,
                    frame,
                    full,
                    close: &bars.close[start..start + len],
                    high: &bars.high,
                    low: &bars.low,
                    direction,
                    start,
                    len,
                });
            }
        });
    }

    /// Hands `each` the scalars of `params` and the whole columns the rules
    /// read there (data columns, shared series, and the series computed for
    /// this combination), with the thread's frame.
    pub(super) fn with_columns<R>(
        &self,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        each: impl FnOnce(&[f64], &[Option<&[f64]>], &mut Frame) -> R,
    ) -> R {
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            self.with_columns_in(&mut scratch, bars, indicators, params, each)
        })
    }

    /// [`Rules::with_columns`] in the buffers `scratch`.
    pub(super) fn with_columns_in<R>(
        &self,
        scratch: &mut Scratch,
        bars: &Bars,
        indicators: &IndicatorSet,
        params: &[f64],
        each: impl FnOnce(&[f64], &[Option<&[f64]>], &mut Frame) -> R,
    ) -> R {
        {
            let Scratch { scalars, frame } = scratch;
            let nodes = self.graph.nodes.len();
            scalars.resize(nodes, f64::NAN);
            ir::scalar_values_into(&self.graph, params, scalars);

            let mut full: Vec<Option<&[f64]>> = vec![None; nodes];
            self.fill_columns(bars, &mut full);
            for &id in &self.plan.shared_nodes {
                full[id] = Some(indicators.get(self.key(id, params)));
            }
            // Columns that read a real-valued parameter: per combination.
            let mut own: Vec<(Id, Vec<f64>)> = Vec::new();
            for &id in &self.plan.per_combination {
                let column = {
                    let get = |i: Id| -> &[f64] {
                        full[i]
                            .or_else(|| {
                                own.iter().find(|(j, _)| *j == i).map(|(_, c)| c.as_slice())
                            })
                            .unwrap_or(&[])
                    };
                    self.compute_column(id, bars, scalars, &get, frame)
                };
                own.push((id, column));
            }
            for (id, column) in &own {
                full[*id] = Some(column);
            }
            each(scalars, &full, frame)
        }
    }

    /// The value of the root (`roots.entry`) of an expression's rules on
    /// every bar at `params`: numbers, true/false as 1 / 0, undefined as
    /// NaN. Its own buffers: this may run inside another evaluation.
    pub(super) fn root_values(&self, bars: &Bars, params: &[f64]) -> Vec<f64> {
        let mut keys = Vec::new();
        self.indicators(params, &mut keys);
        let set = IndicatorSet::build_for(bars, self, keys);
        let id = self.roots.entry;
        let number = self.graph.nodes[id].ty == super::ir::Ty::Num;
        let mut out = vec![f64::NAN; bars.len()];
        let mut scratch = Scratch::default();
        let (n, long) = (bars.len(), Direction::Long);
        self.blocks_in(&mut scratch, bars, &set, params, long, n, |block| {
            let (start, len) = (block.start, block.len);
            let out = &mut out[start..start + len];
            match number {
                true => out.copy_from_slice(block.frame.num(block.full, id, start, len)),
                false => {
                    for (o, &b) in out.iter_mut().zip(block.frame.bools(id, len)) {
                        *o = f64::from(b);
                    }
                }
            }
        });
        out
    }
}

/// One block of bars evaluated by [`Rules::blocks`]: everything but what
/// reads the trade's state, which [`Block::project`] evaluates.
pub(super) struct Block<'a, 'c> {
    pub(super) rules: &'a Rules,
    pub(super) frame: &'a mut Frame,
    pub(super) full: &'a [Option<&'c [f64]>],
    pub(super) close: &'a [f64],
    /// The whole high and low series (the extremes since the entry).
    pub(super) high: &'a [f64],
    pub(super) low: &'a [f64],
    pub(super) direction: Direction,
    /// The block's first bar and its length.
    pub(super) start: usize,
    pub(super) len: usize,
}

impl Block<'_, '_> {
    /// The trade's state from bar `from` of the block on is `state` (its
    /// bars held counting on): fills `position`, `entry_price` and
    /// `bars_held` there and evaluates what reads them (the whole block:
    /// nothing there remembers a bar, and the bars before `from` keep the
    /// state they had).
    pub(super) fn project(&mut self, from: usize, state: TradeState) {
        let plan = &self.rules.plan;
        if !plan.reads_state() {
            return;
        }
        for &(id, col) in &plan.columns {
            let slot = &mut self.frame.slot_mut(id)[from..self.len];
            match col {
                Col::Position => slot.fill(f64::from(state.position)),
                Col::EntryPrice => slot.fill(state.entry_price),
                Col::Entries => slot.fill(state.entries as f64),
                Col::LastEntryPrice => slot.fill(state.last_entry_price),
                Col::HighSinceEntry | Col::LowSinceEntry => {
                    let first = self.start + from;
                    if state.position == 0 || state.fill_bar > first {
                        slot.fill(f64::NAN);
                        continue;
                    }
                    // The running extreme from the fill bar on.
                    let high = col == Col::HighSinceEntry;
                    let series = if high { self.high } else { self.low };
                    let pick = |a: f64, b: f64| if high { a.max(b) } else { a.min(b) };
                    let init = if high {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    };
                    let mut m = series[state.fill_bar..first]
                        .iter()
                        .fold(init, |a, &b| pick(a, b));
                    for (i, v) in slot.iter_mut().enumerate() {
                        m = pick(m, series[first + i]);
                        *v = m;
                    }
                }
                Col::BarsHeld => {
                    for (i, v) in slot.iter_mut().enumerate() {
                        *v = state.bars_held(self.start + from + i);
                    }
                }
                _ => {}
            }
        }
        self.frame.eval(
            &self.rules.graph,
            &plan.state_program,
            &plan.twins,
            self.full,
            self.start,
            self.len,
        );
    }

    /// The block's signals.
    pub(super) fn signals(&self) -> Signals<'_> {
        let (frame, r, len) = (&*self.frame, self.rules.roots, self.len);
        let (entry, exit) = (frame.bools(r.entry, len), frame.bools(r.exit, len));
        let never = &NEVER[..len];
        let (short_entry, short_exit) = match r.short_rules(self.direction) {
            None => (never, never),
            Some((a, b)) => (frame.bools(a, len), frame.bools(b, len)),
        };
        Signals {
            long_entry: entry,
            long_exit: exit,
            short_entry,
            short_exit,
            stop: r.stop.map(|s| frame.num(self.full, s, self.start, len)),
            close: self.close,
        }
    }

    /// The block's trade-management values.
    pub(super) fn keys(&self) -> KeyValues<'_> {
        let num = |id: Id| self.frame.num(self.full, id, self.start, self.len);
        self.rules.roots.managed.map(num)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::AxisValues;
    use crate::rules::source::RuleSource;
    use crate::simd::Level;

    /// Every block program gives the same bits at every vector level the
    /// CPU has: each node's numbers and booleans, block after block, for
    /// arithmetic (a division by zero and by a real weight), comparisons,
    /// `if`, `clamp`, `abs`, `min`, `max`, logic and a crossing.
    #[test]
    fn block_programs_give_the_same_bits_at_every_level() {
        let axis = |values: &[f64]| {
            Ok(AxisValues {
                values: values.to_vec(),
                integers: values.iter().all(|v| v.fract() == 0.0),
            })
        };
        let define = [
            ("t", "clamp((close - sma(close, n)) / (2 * atr(5)), -1, 1)"),
            ("m", "(rsi(close, 7) - 50) / 50"),
            ("z", "if(close > open, (close - open) / (high - low), abs(open - close) / (close - close))"),
            ("s", "(w * t + (1 - w) * m) / (w + 0.000001) + min(z, 1) - max(z, -1)"),
        ];
        let source = RuleSource {
            name: "levels".into(),
            entry: "s >= 0.2 and not (z < -0.5) or cross_above(t, m)".into(),
            exit: "s <= -w or cross_below(t, m)".into(),
            define: define
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            params: vec![
                ("n".into(), axis(&[10.0, 30.0])),
                ("w".into(), axis(&[0.0, 0.3, 0.7])),
            ],
            ..RuleSource::default()
        };
        let (rules, _) = Rules::compile(source).expect("compiles");
        let bars = crate::data::synth(700, 11);
        let combos: Vec<[f64; 2]> = [10.0, 30.0]
            .iter()
            .flat_map(|&n| [0.0, 0.3, 0.7].map(move |w| [n, w]))
            .collect();
        let mut keys = Vec::new();
        for p in &combos {
            rules.indicators(p, &mut keys);
        }
        let set = IndicatorSet::build_for(&bars, &rules, keys);
        let nodes = rules.graph.nodes.len();
        let levels = Level::available();
        for p in &combos {
            let run = |level: Level| {
                rules.with_columns(&bars, &set, p, |scalars, full, _| {
                    let mut frame = Frame::at_level(level);
                    rules.start(&mut frame, scalars);
                    let mut seen: Vec<(Vec<u64>, Vec<u8>)> = Vec::new();
                    for start in (0..bars.len()).step_by(BLOCK) {
                        let len = BLOCK.min(bars.len() - start);
                        frame.eval(
                            &rules.graph,
                            &rules.plan.main,
                            &rules.plan.twins,
                            full,
                            start,
                            len,
                        );
                        let num = (0..nodes)
                            .flat_map(|id| {
                                frame.num(full, id, start, len).iter().map(|v| v.to_bits())
                            })
                            .collect();
                        let bools = (0..nodes)
                            .flat_map(|id| frame.bools(id, len).to_vec())
                            .collect();
                        seen.push((num, bools));
                    }
                    seen
                })
            };
            let portable = run(Level::Portable);
            for &level in &levels[1..] {
                assert!(run(level) == portable, "{level:?} differs at {p:?}");
            }
        }
    }
}
