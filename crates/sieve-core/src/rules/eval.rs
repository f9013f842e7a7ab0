//! Evaluation: scalars once per combination, windowed functions on whole
//! columns, and everything else in blocks of [`BLOCK`] bars fused with the
//! position state machine — no column is allocated per node or per bar.
//!
//! Undefined values are NaN: arithmetic passes them on, every comparison
//! with one is false, and a cross's memory of the last side is reset by one.

use super::functions::Func;
use super::ir::{Col, Graph, Id, Op, Ty};
use super::parse::BinOp;
use super::scalar::{arith, below_or_undefined, compare, differ, max, min};
use crate::data::Bars;
use crate::engine::ExitReason;
use crate::simd::Level;
use crate::strategy::Targets;

/// Bars per block: long enough to vectorise each operation, short enough
/// that every node's block stays in cache.
pub const BLOCK: usize = 128;
/// Bars per quiet-check step inside a block (crossings, the state machine).
pub const SUB: usize = 16;

/// The value of node `id` on bar `t` alone (booleans as 1 / 0), as the
/// block programs compute it: whole columns from `full`, scalars from
/// `scalars`, and `gate` for the crossings the caller found beforehand.
/// Only for nodes that remember no earlier bar (no crossing but the gates;
/// see `Rules::pointwise`).
pub(super) fn value_at(
    graph: &Graph,
    id: Id,
    t: usize,
    full: &[Option<&[f64]>],
    scalars: &[f64],
    gate: &impl Fn(Id) -> Option<bool>,
) -> f64 {
    if let Some(column) = full[id] {
        return column[t];
    }
    let node = &graph.nodes[id];
    if !node.series {
        return scalars[id];
    }
    if let Some(on) = gate(id) {
        return f64::from(u8::from(on));
    }
    let v = |i: Id| value_at(graph, i, t, full, scalars, gate);
    let b = |i: Id| v(i) != 0.0;
    let bit = |x: bool| f64::from(u8::from(x));
    match &node.op {
        Op::Neg(a) => -v(*a),
        Op::Not(a) => bit(!b(*a)),
        Op::Bin(BinOp::And, a, c) => bit(b(*a) && b(*c)),
        Op::Bin(BinOp::Or, a, c) => bit(b(*a) || b(*c)),
        Op::Bin(op, a, c) if op.is_comparison() => bit(compare(*op, v(*a), v(*c))),
        Op::Bin(op, a, c) => arith(*op, v(*a), v(*c)),
        Op::Call(Func::If, args) => match b(args[0]) {
            true => v(args[1]),
            false => v(args[2]),
        },
        Op::Call(Func::Abs, args) => v(args[0]).abs(),
        Op::Call(Func::Min, args) => min(v(args[0]), v(args[1])),
        Op::Call(Func::Max, args) => max(v(args[0]), v(args[1])),
        Op::Call(Func::Clamp, args) => min(max(v(args[0]), v(args[1])), v(args[2])),
        // A column the data lacks (volume) reads as undefined.
        _ => f64::NAN,
    }
}

/// A data column; `None` for a volume the data does not have, and for
/// the trade's state (filled block by block as the engine runs).
pub fn column(bars: &Bars, col: Col) -> Option<&[f64]> {
    match col {
        Col::Open => Some(&bars.open),
        Col::High => Some(&bars.high),
        Col::Low => Some(&bars.low),
        Col::Close => Some(&bars.close),
        Col::Volume => bars.volume.as_deref(),
        // The trade's state: known only as the engine runs.
        _ => {
            debug_assert!(col.is_state());
            None
        }
    }
}

/// Block buffers of one evaluation: a slot of [`BLOCK`] values per node.
pub struct Frame {
    num: Vec<f64>,
    bools: Vec<u8>,
    /// Per crossing node: the side of the latest bar where its operands differed.
    memory: Vec<i8>,
    /// The vector instructions the block programs run with.
    level: Level,
}

impl Default for Frame {
    fn default() -> Frame {
        Frame {
            num: Vec::new(),
            bools: Vec::new(),
            memory: Vec::new(),
            level: Level::best(),
        }
    }
}

impl Frame {
    /// Sizes the frame for `nodes` nodes and clears every crossing's memory.
    pub fn reset(&mut self, nodes: usize) {
        self.num.resize(nodes * BLOCK, 0.0);
        self.bools.resize(nodes * BLOCK, 0);
        self.memory.clear();
        self.memory.resize(nodes, 0);
    }

    /// Fills the slot of scalar node `id` with its value.
    pub fn splat(&mut self, graph: &Graph, id: Id, value: f64) {
        match graph.nodes[id].ty {
            Ty::Num => self.num[id * BLOCK..(id + 1) * BLOCK].fill(value),
            Ty::Bool => self.bools[id * BLOCK..(id + 1) * BLOCK].fill(u8::from(value != 0.0)),
        }
    }

    /// The slot of number node `id` (a state value the engine fills).
    pub fn slot_mut(&mut self, id: Id) -> &mut [f64] {
        &mut self.num[id * BLOCK..(id + 1) * BLOCK]
    }

    /// The numbers of `id` over the block `start..start + len`.
    #[inline]
    pub fn num<'a>(
        &'a self,
        full: &'a [Option<&'a [f64]>],
        id: Id,
        start: usize,
        len: usize,
    ) -> &'a [f64] {
        fetch(&self.num, full, id, start, len)
    }

    /// The booleans of `id` over the current block.
    #[inline]
    pub fn bools(&self, id: Id, len: usize) -> &[u8] {
        &self.bools[id * BLOCK..id * BLOCK + len]
    }

    /// A frame whose block programs run at `level` (at most
    /// [`Level::best`]; tests compare the levels).
    #[cfg(test)]
    pub fn at_level(level: Level) -> Frame {
        assert!(level <= Level::best(), "{level:?} is beyond this CPU");
        Frame {
            level,
            ..Frame::default()
        }
    }

    /// Evaluates `program` (series nodes, children first) over the block
    /// `start..start + len` (len ≤ BLOCK). Numbers come from `full` where a
    /// node has a whole column, else from the node's slot.
    ///
    /// The loops are compiled once per vector level: every operation is a
    /// plain IEEE one per bar (Rust never fuses a multiply and an add), so
    /// each level gives the same bits. Measured on the weighted-score rule
    /// (AVX-512): the baseline SSE2 build spent a third of a sampled
    /// search's screen here.
    pub fn eval(
        &mut self,
        graph: &Graph,
        program: &[Id],
        twins: &[Option<Id>],
        full: &[Option<&[f64]>],
        start: usize,
        len: usize,
    ) {
        match self.level {
            // SAFETY: a frame's level is at most `Level::best()`, so the
            // CPU has every feature these functions are compiled for.
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => unsafe { eval_avx512(self, graph, program, twins, full, start, len) },
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => unsafe { eval_avx2(self, graph, program, twins, full, start, len) },
            _ => self.eval_here(graph, program, twins, full, start, len),
        }
    }

    /// [`Frame::eval`] compiled where it is inlined.
    #[inline(always)]
    fn eval_here(
        &mut self,
        graph: &Graph,
        program: &[Id],
        twins: &[Option<Id>],
        full: &[Option<&[f64]>],
        start: usize,
        len: usize,
    ) {
        for &id in program {
            let node = &graph.nodes[id];
            match (&node.op, node.ty) {
                (Op::Neg(a), _) => {
                    let (lo, hi) = self.num.split_at_mut(id * BLOCK);
                    let a = fetch(lo, full, *a, start, len);
                    for (o, x) in hi[..len].iter_mut().zip(a) {
                        *o = -x;
                    }
                }
                (Op::Not(a), _) => {
                    let (lo, hi) = self.bools.split_at_mut(id * BLOCK);
                    let a = &lo[a * BLOCK..a * BLOCK + len];
                    for (o, x) in hi[..len].iter_mut().zip(a) {
                        *o = 1 - x;
                    }
                }
                (Op::Bin(op @ (BinOp::And | BinOp::Or), a, b), _) => {
                    let (lo, hi) = self.bools.split_at_mut(id * BLOCK);
                    let (a, b) = (
                        &lo[a * BLOCK..a * BLOCK + len],
                        &lo[b * BLOCK..b * BLOCK + len],
                    );
                    let out = &mut hi[..len];
                    if *op == BinOp::And {
                        zip2(out, a, b, |x, y| x & y);
                    } else {
                        zip2(out, a, b, |x, y| x | y);
                    }
                }
                (Op::Bin(op, a, b), _) if op.is_comparison() => {
                    let (a, b) = (
                        fetch(&self.num, full, *a, start, len),
                        fetch(&self.num, full, *b, start, len),
                    );
                    let out = &mut self.bools[id * BLOCK..id * BLOCK + len];
                    match op {
                        BinOp::Lt => zip2(out, a, b, |x, y| u8::from(x < y)),
                        BinOp::Le => zip2(out, a, b, |x, y| u8::from(x <= y)),
                        BinOp::Gt => zip2(out, a, b, |x, y| u8::from(x > y)),
                        BinOp::Ge => zip2(out, a, b, |x, y| u8::from(x >= y)),
                        BinOp::Eq => zip2(out, a, b, |x, y| u8::from(x == y)),
                        _ => zip2(out, a, b, |x, y| u8::from(differ(x, y))),
                    }
                }
                (Op::Bin(op, a, b), _) => {
                    let (lo, hi) = self.num.split_at_mut(id * BLOCK);
                    let (a, b) = (
                        fetch(lo, full, *a, start, len),
                        fetch(lo, full, *b, start, len),
                    );
                    let out = &mut hi[..len];
                    match op {
                        BinOp::Add => zip2(out, a, b, |x, y| x + y),
                        BinOp::Sub => zip2(out, a, b, |x, y| x - y),
                        BinOp::Mul => zip2(out, a, b, |x, y| x * y),
                        _ => zip2(out, a, b, |x, y| if y == 0.0 { f64::NAN } else { x / y }),
                    }
                }
                (Op::Call(f @ (Func::CrossAbove | Func::CrossBelow), args), _) => {
                    // A crossing and its mirror on the same pair share one
                    // pass (and one memory); the second finds its work done.
                    let twin = twins[id];
                    if twin.is_some_and(|t| t < id) {
                        continue;
                    }
                    let (a, b) = (
                        fetch(&self.num, full, args[0], start, len),
                        fetch(&self.num, full, args[1], start, len),
                    );
                    let (mine, theirs) = match twin {
                        Some(t) => {
                            let (lo, hi) = self.bools.split_at_mut(t * BLOCK);
                            (
                                Some(&mut lo[id * BLOCK..id * BLOCK + len]),
                                Some(&mut hi[..len]),
                            )
                        }
                        None => (Some(&mut self.bools[id * BLOCK..id * BLOCK + len]), None),
                    };
                    let (above, below) = if *f == Func::CrossAbove {
                        (mine, theirs)
                    } else {
                        (theirs, mine)
                    };
                    cross(a, b, &mut self.memory[id], above, below);
                }
                (Op::Call(Func::If, args), Ty::Bool) => {
                    let (lo, hi) = self.bools.split_at_mut(id * BLOCK);
                    let at = |k: usize| &lo[args[k] * BLOCK..args[k] * BLOCK + len];
                    let (c, a, b) = (at(0), at(1), at(2));
                    for i in 0..len {
                        hi[i] = if c[i] != 0 { a[i] } else { b[i] };
                    }
                }
                (Op::Call(Func::If, args), Ty::Num) => {
                    let c = &self.bools[args[0] * BLOCK..args[0] * BLOCK + len];
                    let (lo, hi) = self.num.split_at_mut(id * BLOCK);
                    let (a, b) = (
                        fetch(lo, full, args[1], start, len),
                        fetch(lo, full, args[2], start, len),
                    );
                    for i in 0..len {
                        hi[i] = if c[i] != 0 { a[i] } else { b[i] };
                    }
                }
                (Op::Call(f @ (Func::Abs | Func::Min | Func::Max | Func::Clamp), args), _) => {
                    let (lo, hi) = self.num.split_at_mut(id * BLOCK);
                    let arg = |k: usize| fetch(lo, full, args[k], start, len);
                    let out = &mut hi[..len];
                    match f {
                        Func::Abs => {
                            for (o, x) in out.iter_mut().zip(arg(0)) {
                                *o = x.abs();
                            }
                        }
                        Func::Min => zip2(out, arg(0), arg(1), min),
                        Func::Max => zip2(out, arg(0), arg(1), max),
                        Func::Clamp => {
                            let (x, l, h) = (arg(0), arg(1), arg(2));
                            for i in 0..len {
                                out[i] = min(max(x[i], l[i]), h[i]);
                            }
                        }
                        Func::Windowed(_) | Func::If | Func::CrossAbove | Func::CrossBelow => {
                            unreachable!("matched by the arms above")
                        }
                    }
                }
                // Numbers, parameters, columns and windowed functions are
                // never in a program: they are splatted or whole columns.
                _ => {}
            }
        }
    }
}

/// [`Frame::eval`] compiled for AVX-512.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,bmi1")]
fn eval_avx512(
    frame: &mut Frame,
    graph: &Graph,
    program: &[Id],
    twins: &[Option<Id>],
    full: &[Option<&[f64]>],
    start: usize,
    len: usize,
) {
    frame.eval_here(graph, program, twins, full, start, len)
}

/// [`Frame::eval`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
fn eval_avx2(
    frame: &mut Frame,
    graph: &Graph,
    program: &[Id],
    twins: &[Option<Id>],
    full: &[Option<&[f64]>],
    start: usize,
    len: usize,
) {
    frame.eval_here(graph, program, twins, full, start, len)
}

#[inline(always)]
fn fetch<'a>(
    slots: &'a [f64],
    full: &'a [Option<&'a [f64]>],
    id: Id,
    start: usize,
    len: usize,
) -> &'a [f64] {
    match full[id] {
        Some(col) => &col[start..start + len],
        None => &slots[id * BLOCK..id * BLOCK + len],
    }
}

#[inline(always)]
fn zip2<A: Copy, B: Copy, O>(out: &mut [O], a: &[A], b: &[B], f: impl Fn(A, B) -> O) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

/// `cross_above(a, b)` and `cross_below(a, b)` over one block (either
/// output may be `None`): above at t when a_t > b_t and, at the latest
/// earlier bar where a ≠ b with both defined, a < b; below mirrored.
/// `memory` carries the sign of that bar across blocks; an undefined bar
/// resets it.
fn cross(
    a: &[f64],
    b: &[f64],
    memory: &mut i8,
    mut above: Option<&mut [u8]>,
    mut below: Option<&mut [u8]>,
) {
    let mut s = 0;
    while s < a.len() {
        let e = (s + SUB).min(a.len());
        if e - s == SUB && quiet(&a[s..e], &b[s..e], *memory) {
            for out in [above.as_deref_mut(), below.as_deref_mut()]
                .into_iter()
                .flatten()
            {
                out[s..e].copy_from_slice(&[0; SUB]);
            }
            s = e;
            continue;
        }
        let (mut up, mut down) = ([0u8; SUB], [0u8; SUB]);
        if e - s == SUB && apart(&a[s..e], &b[s..e], *memory, &mut up, &mut down) {
            *memory = if a[e - 1] > b[e - 1] { 1 } else { -1 };
            if let Some(out) = above.as_deref_mut() {
                out[s..e].copy_from_slice(&up);
            }
            if let Some(out) = below.as_deref_mut() {
                out[s..e].copy_from_slice(&down);
            }
            s = e;
            continue;
        }
        // Equal or undefined bars: the memory is a short chain of selects.
        let mut m = *memory;
        for (k, i) in (s..e).enumerate() {
            let (p, q) = (a[i], b[i]);
            let (gt, lt) = (p > q, p < q);
            up[k] = u8::from(gt & (m == -1));
            down[k] = u8::from(lt & (m == 1));
            let defined = !(p.is_nan() || q.is_nan());
            m = if gt {
                1
            } else if lt {
                -1
            } else if defined {
                m
            } else {
                0
            };
        }
        *memory = m;
        if let Some(out) = above.as_deref_mut() {
            out[s..e].copy_from_slice(&up[..e - s]);
        }
        if let Some(out) = below.as_deref_mut() {
            out[s..e].copy_from_slice(&down[..e - s]);
        }
        s = e;
    }
}

/// The common busy case: a full sub-block where a and b differ on every
/// bar (none equal, none undefined). Then the memory before bar i is the
/// side of bar i − 1, so every crossing is a vector compare of neighbours.
/// Returns false (outputs unspecified) when some bar is equal or undefined.
#[inline(always)]
fn apart(a: &[f64], b: &[f64], memory: i8, up: &mut [u8; SUB], down: &mut [u8; SUB]) -> bool {
    let (Ok(a), Ok(b)) = (<&[f64; SUB]>::try_from(a), <&[f64; SUB]>::try_from(b)) else {
        return false;
    };
    let (mut gt, mut lt) = ([0u8; SUB], [0u8; SUB]);
    let mut all = 1u8;
    for i in 0..SUB {
        gt[i] = u8::from(a[i] > b[i]);
        lt[i] = u8::from(a[i] < b[i]);
        all &= gt[i] | lt[i];
    }
    if all == 0 {
        return false;
    }
    up[0] = gt[0] & u8::from(memory == -1);
    down[0] = lt[0] & u8::from(memory == 1);
    for i in 1..SUB {
        up[i] = gt[i] & lt[i - 1];
        down[i] = lt[i] & gt[i - 1];
    }
    true
}

/// Whether a full sub-block can neither cross nor change the memory:
/// never below (memory +1), never above (−1), or never apart (0; equal or
/// undefined bars). Branch-free so it compiles to a few vector compares.
#[inline(always)]
fn quiet(a: &[f64], b: &[f64], memory: i8) -> bool {
    let (Ok(a), Ok(b)) = (<&[f64; SUB]>::try_from(a), <&[f64; SUB]>::try_from(b)) else {
        return false;
    };
    let mut bad = 0u8;
    match memory {
        1 => (0..SUB).for_each(|i| bad |= u8::from(below_or_undefined(a[i], b[i]))),
        -1 => (0..SUB).for_each(|i| bad |= u8::from(below_or_undefined(b[i], a[i]))),
        _ => (0..SUB).for_each(|i| bad |= u8::from(differ(a[i], b[i]))),
    }
    bad == 0
}

/// Whether any bar of `x` or `y` is set (branch-free on a full sub-block).
#[inline(always)]
fn any_set(x: &[u8], y: &[u8]) -> bool {
    match (<&[u8; SUB]>::try_from(x), <&[u8; SUB]>::try_from(y)) {
        (Ok(x), Ok(y)) => {
            let mut any = 0u8;
            (0..SUB).for_each(|i| any |= x[i] | y[i]);
            any != 0
        }
        _ => x.iter().zip(y).any(|(p, q)| p | q != 0),
    }
}

/// The signals of one block, as 0 / 1 per bar.
pub struct Signals<'a> {
    pub long_entry: &'a [u8],
    pub long_exit: &'a [u8],
    pub short_entry: &'a [u8],
    pub short_exit: &'a [u8],
    /// Trailing-stop distance per bar (off where undefined or ≤ 0).
    pub stop: Option<&'a [f64]>,
    pub close: &'a [f64],
}

/// The position state machine, carried across blocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Machine {
    pub position: i8,
    /// Highest close since a long entry decision, lowest since a short one.
    extreme: f64,
}

impl Machine {
    /// Steps through one block, the bars from `start` on, writing the
    /// position held after each bar to `out`.
    /// At most one transition per bar, from the state at its start: a long
    /// reverses on a short entry, else leaves on its exit or its stop; a
    /// short mirrors it; flat enters long first, then short.
    pub fn run(&mut self, s: &Signals, start: usize, out: &mut impl Targets) {
        let len = s.close.len();
        let mut b = 0;
        while b < len {
            let e = (b + SUB).min(len);
            if self.quiet(s, b, e) || self.trails(s, b, e) {
                out.quiet(start + b, start + e, self.position);
                b = e;
                continue;
            }
            for t in b..e {
                let at = start + t;
                if self.step(s, t).0 {
                    out.moved(at, self.position);
                }
                out.bar(at, self.position);
            }
            b = e;
        }
    }

    /// Whether bars `b..e` of the block leave the state as it is: no
    /// signal that would move the position (and no trailing stop to
    /// follow).
    #[inline(always)]
    pub fn quiet(&self, s: &Signals, b: usize, e: usize) -> bool {
        let any = |x: &[u8], y: &[u8]| any_set(&x[b..e], &y[b..e]);
        match self.position {
            0 => !any(s.long_entry, s.short_entry),
            1 => s.stop.is_none() && !any(s.short_entry, s.long_exit),
            _ => s.stop.is_none() && !any(s.long_entry, s.short_exit),
        }
    }

    /// Whether a full sub-block `b..e` only follows the trailing stop of
    /// the position held (no signal that moves it, the stop never hit);
    /// then the extreme moves on to the sub-block's. Checked against the
    /// sub-block's final extreme: the extreme only grows (a long's) and a
    /// rounded difference is monotone, so a close that clears the final
    /// extreme's stop level cleared every earlier one. Branch-free over
    /// the sub-block, where [`Machine::step`] is a chain through the
    /// extreme bar after bar (measured: most of a trailing-stop rule's
    /// screen while it holds).
    #[inline(always)]
    fn trails(&mut self, s: &Signals, b: usize, e: usize) -> bool {
        let (Some(stop), Ok(c)) = (s.stop, <&[f64; SUB]>::try_from(&s.close[b..e])) else {
            return false;
        };
        let Ok(stop) = <&[f64; SUB]>::try_from(&stop[b..e]) else {
            return false;
        };
        let any = |x: &[u8], y: &[u8]| any_set(&x[b..e], &y[b..e]);
        // The extreme over the sub-block: max / min are exact, so any order
        // of the pairs gives the bar-by-bar fold's value.
        let fold = |f: fn(f64, f64) -> f64| {
            let mut m = *c;
            for width in [8, 4, 2, 1] {
                for i in 0..width {
                    m[i] = f(m[i], m[i + width]);
                }
            }
            f(self.extreme, m[0])
        };
        let mut hit = 0u8;
        let extreme = match self.position {
            1 if !any(s.short_entry, s.long_exit) => {
                let x = fold(f64::max);
                (0..SUB).for_each(|i| hit |= u8::from(stop[i] > 0.0 && c[i] < x - stop[i]));
                x
            }
            -1 if !any(s.long_entry, s.short_exit) => {
                let x = fold(f64::min);
                (0..SUB).for_each(|i| hit |= u8::from(stop[i] > 0.0 && c[i] > x + stop[i]));
                x
            }
            _ => return false,
        };
        if hit != 0 {
            return false;
        }
        self.extreme = extreme;
        true
    }

    /// Bar `t`'s transition from the state at its start: whether the
    /// position moved, and why a position it left was left.
    #[inline(always)]
    pub fn step(&mut self, s: &Signals, t: usize) -> (bool, ExitReason) {
        let c = s.close[t];
        let stop = s.stop.map_or(f64::NAN, |d| d[t]);
        match self.position {
            1 => {
                self.extreme = self.extreme.max(c);
                if s.short_entry[t] != 0 {
                    self.enter(-1, c);
                    (true, ExitReason::Reversal)
                } else if s.long_exit[t] != 0 {
                    self.position = 0;
                    (true, ExitReason::Rule)
                } else if stop > 0.0 && c < self.extreme - stop {
                    self.position = 0;
                    (true, ExitReason::TrailingStop)
                } else {
                    (false, ExitReason::Rule)
                }
            }
            -1 => {
                self.extreme = self.extreme.min(c);
                if s.long_entry[t] != 0 {
                    self.enter(1, c);
                    (true, ExitReason::Reversal)
                } else if s.short_exit[t] != 0 {
                    self.position = 0;
                    (true, ExitReason::Rule)
                } else if stop > 0.0 && c > self.extreme + stop {
                    self.position = 0;
                    (true, ExitReason::TrailingStop)
                } else {
                    (false, ExitReason::Rule)
                }
            }
            _ => {
                if s.long_entry[t] != 0 {
                    self.enter(1, c);
                    (true, ExitReason::Rule)
                } else if s.short_entry[t] != 0 {
                    self.enter(-1, c);
                    (true, ExitReason::Rule)
                } else {
                    (false, ExitReason::Rule)
                }
            }
        }
    }

    #[inline(always)]
    fn enter(&mut self, position: i8, close: f64) {
        self.position = position;
        self.extreme = close;
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_needs_an_earlier_opposite_side_and_undefined_resets() {
        let nan = f64::NAN;
        let a = [1.0, 2.0, 2.0, 3.0, nan, 3.0, 1.0, 3.0];
        let b = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0];
        let (mut out, mut mirror) = ([9u8; 8], [9u8; 8]);
        let mut memory = 0;
        cross(&a, &b, &mut memory, Some(&mut out), Some(&mut mirror));
        // below, equal, equal, above → a cross at 3; NaN at 4 resets, so
        // 5 (above, no earlier side) is none; below at 6, above at 7 → cross.
        assert_eq!(out, [0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(mirror, [0, 0, 0, 0, 0, 0, 1, 0]);
        let mut memory = 0;
        cross(&a, &b, &mut memory, None, Some(&mut out));
        assert_eq!(out, mirror);
    }

    /// A run that skips the sub-blocks where only the trailing stop moves
    /// holds what stepping every bar holds: long and short, stops that are
    /// undefined, zero, tight and loose, signals sparse and dense.
    #[test]
    fn following_a_trailing_stop_holds_what_every_step_holds() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut exercised = 0;
        for case in 0..3600 {
            let n = BLOCK;
            let rate = [0.001, 0.01, 0.2][case % 3];
            let mut price = 100.0;
            let close: Vec<f64> = (0..n)
                .map(|_| {
                    price *= 1.0 + 0.02 * (next() - 0.45);
                    price
                })
                .collect();
            let stop: Vec<f64> = (0..n)
                .map(|i| match (case / 9) % 4 {
                    0 => f64::NAN,
                    1 if i % 5 == 0 => 0.0,
                    _ => [1.0, 4.0, 8.0][(case / 3) % 3] * (1.0 + next()),
                })
                .collect();
            let mut signal = || -> Vec<u8> { (0..n).map(|_| u8::from(next() < rate)).collect() };
            let (le, lx, se, sx) = (signal(), signal(), signal(), signal());
            let s = Signals {
                long_entry: &le,
                long_exit: &lx,
                short_entry: &se,
                short_exit: &sx,
                stop: Some(&stop),
                close: &close,
            };
            let mut run = vec![9i8; n];
            let mut machine = Machine::default();
            machine.run(&s, 0, &mut crate::strategy::PerBar(&mut run));
            let mut stepped = vec![9i8; n];
            let mut machine = Machine::default();
            for (t, held) in stepped.iter_mut().enumerate() {
                machine.step(&s, t);
                *held = machine.position;
            }
            assert_eq!(run, stepped, "case {case}");
            exercised += usize::from(run.iter().any(|&p| p != 0));
        }
        assert!(exercised > 2000, "only {exercised} cases held a position");
    }

    #[test]
    fn runs_restart_after_undefined_values() {
        let nan = f64::NAN;
        let x = [nan, 1.0, 2.0, 3.0, nan, 5.0, 7.0];
        let v = crate::rules::functions::by_runs(&x, |r| crate::indicators::average::sma(r, 2));
        let want = [nan, nan, 1.5, 2.5, nan, nan, 6.0];
        for (got, want) in v.iter().zip(want) {
            assert!(got == &want || (got.is_nan() && want.is_nan()), "{v:?}");
        }
    }

    #[test]
    fn comparisons_with_undefined_are_false() {
        for op in [
            BinOp::Lt,
            BinOp::Le,
            BinOp::Gt,
            BinOp::Ge,
            BinOp::Eq,
            BinOp::Ne,
        ] {
            assert!(!compare(op, f64::NAN, 1.0) && !compare(op, 1.0, f64::NAN));
        }
        assert!(compare(BinOp::Ne, 1.0, 2.0));
        assert!(min(f64::NAN, 1.0).is_nan() && max(1.0, f64::NAN).is_nan());
        assert!(arith(BinOp::Div, 1.0, 0.0).is_nan());
    }
}
