//! A rule strategy as a WGSL compute entry point, generated from its plan,
//! for the GPU backend: one invocation per combination, f32 on device.
//!
//! What runs where mirrors the CPU: shared columns (windowed functions of
//! whole-number parameters) are computed once per setting on the host and
//! read from `ind` at per-combination offsets; scalar nodes (parameters and
//! their arithmetic) are computed per combination on the host in f64 and
//! uploaded as `params`; the per-bar nodes of the rules, the crossings'
//! memory and the position state machine run on the device, bar by bar.
//!
//! Undefined values travel as a defined flag beside each number (WGSL does
//! not promise NaN arithmetic): uploaded NaNs carry the bits [`NAN_BITS`],
//! and the generated code tests the bits, never a NaN comparison.
//!
//! The entry point relies on the engine prelude of the GPU backend (its
//! bindings `u`, `bars`, `ind`, `params`, `offs` and `new_sim`, `close_at`,
//! `bar_step`, `finish`) and on the bar columns uploaded in [`BAR_COLUMNS`]
//! order.

use std::fmt::Write;

use super::compiled::RuleStrategy;
use super::functions::Func;
use super::ir::{Col, Id, Op, Ty};
use super::parse::BinOp;
use crate::indicators::Indicator;
use crate::strategy::GeneratedKernel;

/// The bit pattern every undefined value is uploaded as.
pub const NAN_BITS: u32 = 0x7fc0_0000;

/// The order of the bar columns in the `bars` buffer of a rule kernel
/// (each `n_bars` long): open and close first, where the engine reads them.
pub const BAR_COLUMNS: [Col; 5] = [Col::Open, Col::Close, Col::High, Col::Low, Col::Volume];

/// The name of the generated entry point.
pub const ENTRY_POINT: &str = "rules";

/// A rule strategy's device kernel and what the host uploads for it.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleKernel {
    /// The WGSL of the entry point (to follow the engine prelude).
    pub entry: String,
    /// Scalar nodes uploaded per combination, in `params` order.
    values: Vec<Id>,
    /// Shared column nodes read, in `offs` order.
    columns: Vec<Id>,
    /// The nodes their keys name (a twin of windows names its canonical
    /// node).
    keyed: Vec<u32>,
}

impl RuleKernel {
    /// Whether the kernel reads this shared column (the columns a shared
    /// column is computed from are not uploaded).
    pub fn reads(&self, key: &Indicator) -> bool {
        matches!(key, Indicator::Rule(r) if self.keyed.contains(&r.node))
    }

    /// Values per combination in `params`.
    pub fn n_values(&self) -> usize {
        self.values.len()
    }

    /// Offsets per combination in `offs`.
    pub fn n_columns(&self) -> usize {
        self.columns.len()
    }
}

impl RuleStrategy {
    /// The device kernel of these rules, or the construct that cannot run
    /// on the device (the whole strategy then screens on the CPU).
    pub fn rule_kernel(&self) -> Result<RuleKernel, String> {
        let rules = &self.rules;
        let graph = &rules.graph;
        let plan = &rules.plan;
        // Name the windowed call (rather than its input series).
        let windowed = |&&i: &&Id| matches!(&graph.nodes[i].op, Op::Call(f, _) if f.is_windowed());
        let per_combination = plan.per_combination.iter();
        if let Some(&id) = per_combination
            .clone()
            .find(windowed)
            .or(plan.per_combination.first())
        {
            let why = match graph.nodes[id].deps & !self.int_params() {
                0 => "a column of more whole-number parameters than a shared setting holds",
                _ => "a windowed function of a real-valued parameter",
            };
            return Err(format!(
                "`{}` ({why}, computed per combination)",
                self.show(id)
            ));
        }
        let r = rules.roots;
        if r.managed.stop_level.is_some() {
            return Err("`stop_level` (a stop that moves on every close)".to_string());
        }
        let since_entry = graph.nodes.iter().any(|n| {
            matches!(
                n.op,
                Op::Col(Col::HighSinceEntry) | Op::Col(Col::LowSinceEntry)
            )
        });
        if since_entry {
            return Err(
                "`high_since_entry` / `low_since_entry` (extremes since the entry)".to_string(),
            );
        }
        if r.managed.max_entries.is_some() {
            return Err("`max_entries` (pyramiding)".to_string());
        }
        if r.managed.trail.is_some() {
            return Err(
                "`trail_loss` / `trail_distance` (a stop that trails inside each bar)".to_string(),
            );
        }
        if r.managed.entry_stop.is_some() || r.managed.entry_limit.is_some() {
            return Err(
                "`entry_stop` / `entry_limit` (entry orders filled inside a bar)".to_string(),
            );
        }
        let mut roots = vec![r.entry, r.exit];
        if let Some((a, b)) = r.short {
            roots.extend([a, b]);
        }
        roots.extend(r.stop);
        roots.extend(r.managed.keys());
        // Stops, targets, bar limits, sizes or the trade's state: the
        // engine with trade management (mg_open / mg_close of the prelude).
        let managed = r.managed.any() || plan.reads_state();

        // Everything the rules read: main-program nodes and their children,
        // and the roots themselves (a root may be a shared column or a scalar).
        let mut read: Vec<Id> = plan
            .main
            .iter()
            .chain(&plan.state_program)
            .flat_map(|&i| graph.nodes[i].op.children())
            .chain(roots.iter().copied())
            .collect();
        read.sort_unstable();
        read.dedup();
        let in_main = |i: Id| plan.main.binary_search(&i).is_ok();
        let columns: Vec<Id> = read
            .iter()
            .copied()
            .filter(|&i| !in_main(i) && plan.shared[i].is_some())
            .collect();
        let values: Vec<Id> = read
            .iter()
            .copied()
            .filter(|&i| !graph.nodes[i].series)
            .collect();

        let mut w = String::new();
        let _ = writeln!(w, "// The rules of '{}', generated by sieve.", self.name);
        for (what, id) in [("entry", Some(r.entry)), ("exit", Some(r.exit))]
            .into_iter()
            .chain(
                r.short
                    .into_iter()
                    .flat_map(|(a, b)| [("short_entry", Some(a)), ("short_exit", Some(b))]),
            )
            .chain([("trailing_stop", r.stop)])
        {
            if let Some(id) = id {
                let _ = writeln!(w, "//   {what}: {}", self.show(id).replace('\n', " "));
            }
        }
        let _ = writeln!(
            w,
            "\nfn defined(x: f32) -> bool {{ return bitcast<u32>(x) != {NAN_BITS}u; }}\n"
        );
        let _ = writeln!(w, "@compute @workgroup_size(64)");
        let _ = writeln!(
            w,
            "fn {ENTRY_POINT}(@builtin(global_invocation_id) gid: vec3<u32>) {{"
        );
        w.push_str("    let i = gid.x;\n    if (i >= u.count) { return; }\n");
        w.push_str("    let pb = i * u.n_params;\n    let ob = i * u.n_offs;\n");
        w.push_str("    let nb = u.n_bars;\n");
        // Scalars: once per combination.
        for (k, &id) in values.iter().enumerate() {
            match graph.nodes[id].ty {
                Ty::Num => {
                    let _ = writeln!(w, "    let v{id} = params[pb + {k}u];");
                    let _ = writeln!(w, "    let d{id} = defined(v{id});");
                }
                Ty::Bool => {
                    let _ = writeln!(w, "    let b{id} = params[pb + {k}u] != 0.0;");
                }
            }
        }
        for (k, &id) in columns.iter().enumerate() {
            let _ = writeln!(w, "    let o{id} = offs[ob + {k}u];");
        }
        // Each crossing's memory: the side of the latest bar where its
        // operands differed (0 after an undefined bar).
        for &id in &plan.main {
            if matches!(
                graph.nodes[id].op,
                Op::Call(Func::CrossAbove | Func::CrossBelow, _)
            ) {
                let _ = writeln!(w, "    var m{id} = 0;");
            }
        }
        w.push_str("    var s = new_sim(nb);\n");
        w.push_str("    let shorts = u.long_short == 1u;\n");
        w.push_str("    var position = 0;\n    var extreme = 0.0;\n    var prev = 0;\n");
        if managed {
            let m = r.managed;
            let _ = writeln!(
                w,
                "    s.stop_frac = {};\n    s.target_frac = {};",
                m.stop.is_none_or(|(_, f)| f),
                m.target.is_none_or(|(_, f)| f)
            );
        }
        w.push_str("    for (var t = 0u; t < u.end; t++) {\n");
        if managed {
            w.push_str("        if (mg_open(&s, t)) { position = 0; }\n");
        }
        let mut state_cols = Vec::new();
        for &id in read.iter().filter(|&&i| !in_main(i)) {
            if let Op::Col(c) = graph.nodes[id].op {
                if c.is_state() {
                    state_cols.push((id, c));
                    continue;
                }
                let k = BAR_COLUMNS.iter().position(|x| *x == c).unwrap_or(0);
                let _ = writeln!(w, "        let v{id} = bars[{k}u * nb + t];");
                let _ = writeln!(w, "        let d{id} = true;");
            }
        }
        for &id in &columns {
            let _ = writeln!(w, "        let v{id} = ind[o{id} + t];");
            let _ = writeln!(w, "        let d{id} = defined(v{id});");
        }
        for &id in &plan.main {
            self.emit_node(&mut w, id);
        }
        // The open trade after this bar's open and stops.
        for (id, c) in state_cols {
            let (value, defined) = match c {
                Col::EntryPrice => ("s.entry_price", "s.pos != 0"),
                Col::BarsHeld => ("f32(t - s.fill_bar)", "s.pos != 0"),
                // One entry per position on the GPU (no pyramiding there).
                Col::LastEntryPrice => ("s.entry_price", "s.pos != 0"),
                Col::Entries => ("f32(abs(s.pos))", "true"),
                _ => ("f32(s.pos)", "true"),
            };
            let _ = writeln!(
                w,
                "        let v{id} = {value};\n        let d{id} = {defined};"
            );
        }
        for &id in &plan.state_program {
            self.emit_node(&mut w, id);
        }
        let boolean = |id: Id| format!("b{id}");
        let (entry, exit) = (boolean(r.entry), boolean(r.exit));
        let (short_entry, short_exit) = match r.short {
            Some((a, b)) => (boolean(a), boolean(b)),
            None => (exit.clone(), entry.clone()),
        };
        let _ = writeln!(w, "        let le = {entry};");
        let _ = writeln!(w, "        let lx = {exit};");
        let _ = writeln!(w, "        let se = shorts && {short_entry};");
        let _ = writeln!(w, "        let sx = {short_exit};");
        match r.stop {
            Some(id) => {
                let _ = writeln!(w, "        let stop = v{id};");
                let _ = writeln!(w, "        let stop_on = d{id} && v{id} > 0.0;");
            }
            None => w.push_str("        let stop = 0.0;\n        let stop_on = false;\n"),
        }
        // The position state machine (crates/sieve-core/src/rules/eval.rs,
        // `Machine::run`): at most one transition per bar.
        w.push_str(
            "        let c = close_at(&s, t);
        if (position == 1) {
            extreme = max(extreme, c);
            if (se) { position = -1; extreme = c; }
            else if (lx || (stop_on && c < extreme - stop)) { position = 0; }
        } else if (position == -1) {
            extreme = min(extreme, c);
            if (le) { position = 1; extreme = c; }
            else if (sx || (stop_on && c > extreme + stop)) { position = 0; }
        } else {
            if (le) { position = 1; extreme = c; }
            else if (se) { position = -1; extreme = c; }
        }
",
        );
        if managed {
            // This close's plan for a trade it opens (0: off).
            let m = r.managed;
            let on = |id: Option<Id>| {
                id.map_or("0.0".to_string(), |id| {
                    // Off unless finite and > 0, as on the CPU.
                    format!("select(0.0, v{id}, d{id} && v{id} > 0.0 && v{id} < 3.0e38)")
                })
            };
            let _ = writeln!(w, "        s.p_stop = {};", on(m.stop.map(|s| s.0)));
            let _ = writeln!(w, "        s.p_target = {};", on(m.target.map(|s| s.0)));
            let _ = writeln!(w, "        s.p_max = {};", on(m.max_bars));
            let _ = writeln!(w, "        s.p_size = {};", on(m.size));
            w.push_str("        position = mg_close(&s, t, position);\n");
        } else {
            w.push_str("        bar_step(&s, t, prev, position);\n        prev = position;\n");
        }
        w.push_str("    }\n    finish(&s, i);\n}\n");
        Ok(RuleKernel {
            entry: w,
            values,
            keyed: columns.iter().map(|&c| rules.canonical[c] as u32).collect(),
            columns,
        })
    }

    /// Bit i: parameter i is a whole number.
    fn int_params(&self) -> u64 {
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == crate::strategy::ParamKind::Int)
            .fold(0, |m, (i, _)| m | 1 << i)
    }

    /// One per-bar node: `v`/`d` (number, defined) or `b` (true/false).
    fn emit_node(&self, w: &mut String, id: Id) {
        let graph = &self.rules.graph;
        let node = &graph.nodes[id];
        let (v, d, b) = (
            |i: Id| format!("v{i}"),
            |i: Id| format!("d{i}"),
            |i: Id| format!("b{i}"),
        );
        let num = |w: &mut String, value: String, defined: String| {
            let _ = writeln!(w, "        let v{id} = {value};");
            let _ = writeln!(w, "        let d{id} = {defined};");
        };
        let both = |x: Id, y: Id| format!("{} && {}", d(x), d(y));
        match &node.op {
            Op::Neg(a) => num(w, format!("-{}", v(*a)), d(*a)),
            Op::Not(a) => {
                let _ = writeln!(w, "        let b{id} = !{};", b(*a));
            }
            Op::Bin(op @ (BinOp::And | BinOp::Or), x, y) => {
                let sym = if *op == BinOp::And { "&&" } else { "||" };
                let _ = writeln!(w, "        let b{id} = {} {sym} {};", b(*x), b(*y));
            }
            Op::Bin(op, x, y) if op.is_comparison() => {
                let test = if graph.nodes[*x].ty == Ty::Bool {
                    // Only `==` / `!=` compare true/false values.
                    let sym = if *op == BinOp::Eq { "==" } else { "!=" };
                    format!("{} {sym} {}", b(*x), b(*y))
                } else {
                    let sym = match op {
                        BinOp::Lt => "<",
                        BinOp::Le => "<=",
                        BinOp::Gt => ">",
                        BinOp::Ge => ">=",
                        BinOp::Eq => "==",
                        _ => "!=",
                    };
                    format!("{} && ({} {sym} {})", both(*x, *y), v(*x), v(*y))
                };
                let _ = writeln!(w, "        let b{id} = {test};");
            }
            Op::Bin(BinOp::Div, x, y) => num(
                w,
                format!("select(0.0, {} / {}, {} != 0.0)", v(*x), v(*y), v(*y)),
                format!("{} && {} != 0.0", both(*x, *y), v(*y)),
            ),
            Op::Bin(op, x, y) => {
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    _ => "*",
                };
                num(w, format!("{} {sym} {}", v(*x), v(*y)), both(*x, *y));
            }
            Op::Call(f, args) => {
                let a = |k: usize| args[k];
                match f {
                    Func::Abs => num(w, format!("abs({})", v(a(0))), d(a(0))),
                    Func::Min | Func::Max => {
                        let name = if *f == Func::Min { "min" } else { "max" };
                        num(
                            w,
                            format!("{name}({}, {})", v(a(0)), v(a(1))),
                            both(a(0), a(1)),
                        );
                    }
                    Func::Clamp => num(
                        w,
                        format!("min(max({}, {}), {})", v(a(0)), v(a(1)), v(a(2))),
                        format!("{} && {}", both(a(0), a(1)), d(a(2))),
                    ),
                    Func::If if node.ty == Ty::Bool => {
                        let _ = writeln!(
                            w,
                            "        let b{id} = select({}, {}, {});",
                            b(a(2)),
                            b(a(1)),
                            b(a(0))
                        );
                    }
                    Func::If => num(
                        w,
                        format!("select({}, {}, {})", v(a(2)), v(a(1)), b(a(0))),
                        format!("select({}, {}, {})", d(a(2)), d(a(1)), b(a(0))),
                    ),
                    Func::CrossAbove | Func::CrossBelow => {
                        let (x, y) = (a(0), a(1));
                        let _ = writeln!(
                            w,
                            "        let gt{id} = {} && {} > {};",
                            both(x, y),
                            v(x),
                            v(y)
                        );
                        let _ = writeln!(
                            w,
                            "        let lt{id} = {} && {} < {};",
                            both(x, y),
                            v(x),
                            v(y)
                        );
                        let fired = if *f == Func::CrossAbove {
                            format!("gt{id} && m{id} == -1")
                        } else {
                            format!("lt{id} && m{id} == 1")
                        };
                        let _ = writeln!(w, "        let b{id} = {fired};");
                        let _ = writeln!(
                            w,
                            "        m{id} = select(select(select(0, m{id}, {}), -1, lt{id}), 1, gt{id});",
                            both(x, y)
                        );
                    }
                    // Windowed functions are always whole columns (the plan
                    // materialises them), never per-bar nodes.
                    Func::Windowed(_) => num(w, "0.0".into(), "false".into()),
                }
            }
            // Numbers, parameters and columns are read, not computed.
            _ => {}
        }
    }

    /// Fills one combination's uploads: the kernel's scalar values (f32,
    /// undefined as [`NAN_BITS`]) and the keys of its shared columns.
    pub fn gpu_inputs(
        &self,
        kernel: &RuleKernel,
        params: &[f64],
        scalars: &mut Vec<f64>,
        values: &mut Vec<f32>,
        keys: &mut Vec<Indicator>,
    ) {
        let rules = &self.rules;
        scalars.resize(rules.graph.nodes.len(), f64::NAN);
        super::ir::scalar_values_into(&rules.graph, params, scalars);
        values.extend(kernel.values.iter().map(|&id| {
            let x = scalars[id];
            if x.is_nan() {
                f32::from_bits(NAN_BITS)
            } else {
                x as f32
            }
        }));
        keys.extend(kernel.columns.iter().map(|&id| rules.key(id, params)));
    }
}

/// A rule strategy's kernel as the GPU screen sees it.
pub(super) struct RuleGpu<'a> {
    pub(super) strategy: &'a RuleStrategy,
    pub(super) kernel: RuleKernel,
}

impl GeneratedKernel for RuleGpu<'_> {
    fn wgsl(&self) -> &str {
        &self.kernel.entry
    }

    fn reads(&self, key: &Indicator) -> bool {
        self.kernel.reads(key)
    }

    fn n_values(&self) -> usize {
        self.kernel.n_values()
    }

    fn n_columns(&self) -> usize {
        self.kernel.n_columns()
    }

    fn inputs(
        &self,
        params: &[f64],
        scratch: &mut Vec<f64>,
        values: &mut Vec<f32>,
        keys: &mut Vec<Indicator>,
    ) {
        self.strategy
            .gpu_inputs(&self.kernel, params, scratch, values, keys);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn rules(strategy: &str, params: &str) -> std::sync::Arc<crate::rules::RuleStrategy> {
        let config = Config::parse(&format!(
            "[strategy]\n{strategy}\n[strategy.params]\n{params}\n"
        ))
        .unwrap();
        config.rules.clone().unwrap()
    }

    /// Rules of shared columns, scalars and per-bar nodes get a kernel that
    /// reads each shared column by offset and each scalar from `params`.
    #[test]
    fn a_kernel_reads_shared_columns_and_scalars() {
        let r = rules(
            "name = \"dip_gpu\"\nentry = \"close < sma(close, n) * (1 - d) and cross_above(rsi(close, 14), 30)\"\nexit = \"close > sma(close, n)\"",
            "n = { values = [10, 20] }\nd = { values = [0.01, 0.02] }",
        );
        let k = r.rule_kernel().unwrap();
        // sma(close, n), rsi(close, 14): two shared columns.
        assert_eq!(k.n_columns(), 2, "{}", k.entry);
        assert!(k.entry.contains("fn rules(@builtin(global_invocation_id)"));
        assert!(k.entry.contains("var m"), "a crossing keeps its memory");
        // The host's values: `(1 - d)` and the numbers the rules compare with.
        let (mut scalars, mut values, mut keys) = (Vec::new(), Vec::new(), Vec::new());
        r.gpu_inputs(&k, &[20.0, 0.02], &mut scalars, &mut values, &mut keys);
        assert_eq!(values.len(), k.n_values());
        assert!(values.contains(&0.98), "{values:?}");
        assert_eq!(keys.len(), 2);
    }

    /// The keys the kernels do not run (moving and trailing stops, entry
    /// orders, pyramiding) keep the rules on the CPU, named.
    #[test]
    fn trade_keys_without_a_kernel_are_named() {
        for (key, named) in [
            ("stop_level = \"close - 1\"", "`stop_level`"),
            ("entry_stop = \"high\"", "`entry_stop`"),
            ("trail_loss = 0.05", "`trail_loss`"),
            ("max_entries = 2", "`max_entries`"),
        ] {
            let r = rules(
                &format!("name = \"keys\"\nentry = \"close > sma(close, n)\"\nexit = \"close < sma(close, n)\"\n{key}"),
                "n = { values = [10, 20] }",
            );
            let why = r.rule_kernel().unwrap_err();
            assert!(why.contains(named), "{key}: {why}");
        }
    }

    /// A windowed function of a real-valued parameter is computed per
    /// combination on the CPU: the kernel is refused, naming it.
    #[test]
    fn a_per_combination_column_keeps_the_rules_on_the_cpu() {
        let r = rules(
            "name = \"band_gpu\"\nentry = \"close > highest(close - k, n)\"\nexit = \"close < sma(close, n)\"",
            "n = { values = [10, 20] }\nk = { values = [0.5, 1.5] }",
        );
        let why = r.rule_kernel().unwrap_err();
        assert!(why.starts_with("`highest("), "{why}");
        assert!(why.contains("real-valued parameter"), "{why}");
    }
}
