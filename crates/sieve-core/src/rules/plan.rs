//! How a checked graph runs. Windowed functions (and the compound series
//! they read) are *materialised* as whole columns; the ones that read only
//! whole-number parameters are *shared* — computed once per distinct
//! setting for the whole grid, like the built-ins' indicators — and the rest
//! once per combination. Everything else is evaluated per combination in
//! blocks, fused with the position state machine.

use super::functions::Func;
use super::ir::{Col, Graph, Id, Op, Ty};
use crate::indicators::RULE_SETTING_LEN;

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Per node: computed as a whole column.
    pub materialized: Vec<bool>,
    /// Per node: the parameters (ascending) a shared column is keyed by;
    /// `None` for nodes that are not shared columns.
    pub shared: Vec<Option<Vec<usize>>>,
    /// Materialised nodes computed per combination, children first.
    pub per_combination: Vec<Id>,
    /// Per materialised node: the block program that computes it (for a
    /// windowed function, the program of its input if that is not a column).
    pub programs: Vec<Vec<Id>>,
    /// Per materialised node: the materialised nodes it reads directly.
    pub inputs: Vec<Vec<Id>>,
    /// The block program of the rules themselves, but for what reads the
    /// trade's state.
    pub main: Vec<Id>,
    /// The block program of the nodes that read the trade's state.
    pub state_program: Vec<Id>,
    /// Scalar nodes a block program reads (filled once per combination).
    pub splat: Vec<Id>,
    /// Shared nodes the rules need, directly or not.
    pub shared_nodes: Vec<Id>,
    /// Per crossing node: its mirror on the same pair (computed together).
    pub twins: Vec<Option<Id>>,
    /// The nodes that are data columns.
    pub columns: Vec<(Id, Col)>,
}

impl Plan {
    /// The plan of the nodes `roots` reach in `graph`, `int_params` the
    /// parameters that take whole numbers only (bit i: parameter i).
    pub fn new(graph: &Graph, roots: &[Id], int_params: u64) -> Plan {
        let n = graph.nodes.len();
        let materialized = materialized(graph, int_params);
        let shared = shared(graph, &materialized, int_params);
        let reached = reached(graph, roots);
        let (programs, inputs) = column_programs(graph, &materialized, &reached);
        let (all, _) = program(graph, roots, |i| materialized[i]);
        // What reads the trade's state runs after the rest, again wherever
        // the state moves (no memory there: nothing windowed reads it).
        let (state_program, main): (Vec<Id>, Vec<Id>) =
            all.into_iter().partition(|&i| graph.nodes[i].state);
        let mut splat: Vec<Id> = main
            .iter()
            .chain(&state_program)
            .chain(programs.iter().flatten())
            .flat_map(|&i| graph.nodes[i].op.children())
            .chain(roots.iter().copied())
            .filter(|&i| !graph.nodes[i].series)
            .collect();
        splat.sort_unstable();
        splat.dedup();
        let per_combination = (0..n)
            .filter(|&i| materialized[i] && reached[i] && shared[i].is_none())
            .collect();
        let shared_nodes = (0..n)
            .filter(|&i| reached[i] && shared[i].is_some())
            .collect();
        let twins = twins(graph, &programs, &main);
        let columns = graph
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(id, n)| match n.op {
                Op::Col(c) => Some((id, c)),
                _ => None,
            })
            .collect();
        Plan {
            columns,
            twins,
            materialized,
            shared,
            per_combination,
            programs,
            inputs,
            main,
            state_program,
            splat,
            shared_nodes,
        }
    }
}

/// Per node: computed as a whole column — a windowed call and its input
/// series (unless a data column), a data column beyond the prices or a
/// function defined outside sieve, and a series of whole-number
/// parameters only that a node of a real-valued one reads.
fn materialized(graph: &Graph, int_params: u64) -> Vec<bool> {
    let n = graph.nodes.len();
    let mut materialized = vec![false; n];
    for node in &graph.nodes {
        if let Op::Call(f, args) = &node.op {
            if f.is_windowed() {
                // The windowed call and its input series, unless a column.
                let inputs = match f {
                    Func::Windowed(w) => w.spec().series.len(),
                    _ => 0,
                };
                for &a in &args[..inputs] {
                    let input = &graph.nodes[a];
                    if input.series && !matches!(input.op, Op::Col(_)) {
                        materialized[a] = true;
                    }
                }
            }
        }
    }
    // A data column beyond the prices is a shared column of no
    // parameter, read from the bars once per run (as the GPU uploads it).
    for (id, node) in graph.nodes.iter().enumerate() {
        if matches!(&node.op, Op::Call(f, _) if f.is_windowed())
            || matches!(node.op, Op::User(_) | Op::Extern(..) | Op::Frame(..))
        {
            materialized[id] = true;
        }
    }
    // A series of whole-number parameters only, read by a node that
    // also reads a real-valued one (e.g. a term weighted by `w`): a
    // column per setting, not per combination.
    for node in graph.nodes.iter().filter(|n| n.deps & !int_params != 0) {
        for c in node.op.children() {
            let child = &graph.nodes[c];
            if child.series
                && child.ty == Ty::Num
                && child.deps & !int_params == 0
                && !child.state
                && !matches!(child.op, Op::Col(_))
            {
                materialized[c] = true;
            }
        }
    }
    materialized
}

/// Per node: the parameters a shared column is keyed by (`None`: not one).
/// A materialised node of whole-number parameters (or a function of the
/// bars alone, over any settings) is computed once per setting.
fn shared(graph: &Graph, materialized: &[bool], int_params: u64) -> Vec<Option<Vec<usize>>> {
    graph
        .nodes
        .iter()
        .enumerate()
        .map(|(id, node)| {
            // A function of the bars alone (`supertrend(n, mult)`) is
            // shared over real-valued settings too: one column per
            // setting, as for whole-number ones.
            let of_bars = matches!(&node.op, Op::Call(Func::Windowed(w), _) if w.spec().series.is_empty())
                || matches!(node.op, Op::Extern(..) | Op::Frame(..));
            let fits = (node.deps & !int_params == 0 || of_bars)
                && node.deps.count_ones() as usize <= RULE_SETTING_LEN;
            (materialized[id] && fits).then(|| bits(node.deps))
        })
        .collect()
}

/// Per node: whether the rules (`roots`) reach it.
fn reached(graph: &Graph, roots: &[Id]) -> Vec<bool> {
    let mut reached = vec![false; graph.nodes.len()];
    let mut stack: Vec<Id> = roots.to_vec();
    while let Some(id) = stack.pop() {
        if !std::mem::replace(&mut reached[id], true) {
            stack.extend(graph.nodes[id].op.children());
        }
    }
    reached
}

/// Per materialised node the rules reach: the block program that computes
/// it and the materialised nodes it reads directly.
fn column_programs(
    graph: &Graph,
    materialized: &[bool],
    reached: &[bool],
) -> (Vec<Vec<Id>>, Vec<Vec<Id>>) {
    let n = graph.nodes.len();
    let mut programs = vec![Vec::new(); n];
    let mut inputs = vec![Vec::new(); n];
    for id in (0..n).filter(|&i| materialized[i] && reached[i]) {
        let (program, reads) = match &graph.nodes[id].op {
            Op::User(_) | Op::Extern(..) | Op::Frame(..) => (Vec::new(), Vec::new()),
            Op::Call(Func::Windowed(w), args) => {
                let inputs = &args[..w.spec().series.len()];
                let mut reads: Vec<Id> = inputs
                    .iter()
                    .copied()
                    .filter(|&a| materialized[a])
                    .collect();
                reads.sort_unstable();
                reads.dedup();
                (Vec::new(), reads)
            }
            _ => program(graph, &[id], |i| i != id && materialized[i]),
        };
        programs[id] = program;
        inputs[id] = reads;
    }
    (programs, inputs)
}

/// Per crossing node: its mirror on the same pair, where every program
/// that runs one also runs the other (then they are computed together).
fn twins(graph: &Graph, programs: &[Vec<Id>], main: &[Id]) -> Vec<Option<Id>> {
    let n = graph.nodes.len();
    let twins = graph
        .nodes
        .iter()
        .map(|node| match &node.op {
            Op::Call(f @ (Func::CrossAbove | Func::CrossBelow), args) => {
                let mirror = if *f == Func::CrossAbove {
                    Func::CrossBelow
                } else {
                    Func::CrossAbove
                };
                graph
                    .nodes
                    .iter()
                    .position(|n| n.op == Op::Call(mirror, args.clone()))
            }
            _ => None,
        })
        .collect::<Vec<_>>();
    // Twins are computed together only where every program that runs
    // one also runs the other.
    let mut member: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, p) in programs.iter().map(Vec::as_slice).chain([main]).enumerate() {
        for &id in p {
            member[id].push(k);
        }
    }
    twins
        .iter()
        .enumerate()
        .map(|(id, t)| t.filter(|&t| member[t] == member[id]))
        .collect()
}

impl Plan {
    /// Whether the rules read the trade's state.
    pub fn reads_state(&self) -> bool {
        self.columns.iter().any(|(_, c)| c.is_state())
    }
}

/// The indices of the set bits of `mask`, ascending.
fn bits(mask: u64) -> Vec<usize> {
    (0..64).filter(|i| mask >> i & 1 == 1).collect()
}

/// The series nodes below `targets` evaluated in blocks (children first),
/// stopping at `stop` nodes (whole columns), and the stop nodes reached.
fn program(graph: &Graph, targets: &[Id], stop: impl Fn(Id) -> bool) -> (Vec<Id>, Vec<Id>) {
    let mut seen = vec![false; graph.nodes.len()];
    let (mut nodes, mut reads) = (Vec::new(), Vec::new());
    let mut stack: Vec<Id> = targets.to_vec();
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id], true) {
            continue;
        }
        let node = &graph.nodes[id];
        if !node.series || matches!(node.op, Op::Col(_)) {
            continue;
        }
        if stop(id) {
            reads.push(id);
            continue;
        }
        nodes.push(id);
        stack.extend(node.op.children());
    }
    nodes.sort_unstable();
    reads.sort_unstable();
    (nodes, reads)
}
