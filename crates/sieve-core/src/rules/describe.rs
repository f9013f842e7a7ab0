//! The rules described for `sieve strategies --config`: the rules as
//! written, the definitions and the parameters.

use super::compiled::RuleStrategy;
use super::functions::{Arg, Func};
use super::ir::{Col, Id, Op};
use crate::grid::ParamSpace;
use crate::indicators::Indicator;
use crate::strategy::ParamKind;

impl RuleStrategy {
    /// Whether `short_entry` / `short_exit` are given.
    pub fn has_short_rules(&self) -> bool {
        self.rules.roots.short.is_some()
    }

    /// The trade-management keys as written.
    pub fn management(&self) -> &super::keys::Management {
        &self.rules.source.management
    }

    /// Whether a rule, definition or key reads the bars' volume.
    pub fn reads_volume(&self) -> bool {
        use super::ir::{Col, Op};
        self.rules
            .graph
            .nodes
            .iter()
            .any(|n| matches!(n.op, Op::Col(Col::Volume)))
    }

    /// The rules as written, the definitions and the parameters, for
    /// `sieve strategies --config`.
    pub(super) fn describe_rules(&self, space: &ParamSpace) -> String {
        let mut out = format!("{}\n    {}\n", self.name, self.summary);
        let s = &self.rules.source;
        for (key, text) in [
            ("short_entry", &s.short_entry),
            ("short_exit", &s.short_exit),
            ("trailing_stop", &s.trailing_stop),
        ] {
            if let Some(t) = text {
                out.push_str(&format!("    {key}: {t}\n"));
            }
        }
        if s.management.any() {
            out.push_str("    trade management (read on the entry's decision bar):\n");
            for (key, value) in s.management.entries() {
                out.push_str(&format!("        {:<16} {}\n", key.name, value.text()));
            }
        }
        if !s.define.is_empty() {
            out.push_str("    definitions:\n");
            for (name, text) in &s.define {
                out.push_str(&format!("        {name} = {text}\n"));
            }
        }
        out.push_str("    parameters:\n");
        for p in &self.params {
            let kind = match (p.kind, s.read_also.is_empty()) {
                (ParamKind::Int, true) => "int (a window length)",
                (ParamKind::Int, false) => "int (a window, or a grid of whole numbers)",
                (ParamKind::Float, _) => "float",
            };
            let values = space.axes.iter().find(|a| a.name == p.name).map_or_else(
                || format!("fixed {}", crate::format::float(p.default)),
                |a| format!("{} values", a.values.len()),
            );
            out.push_str(&format!("        {:<12} {kind}, {values}\n", p.name));
        }
        let keys = self.rules.space_indicators(space);
        out.push_str(&format!(
            "    shared series the grid computes: {} (each once, {} bytes per bar)\n",
            keys.len(),
            keys.len() * 8
        ));
        for &id in &self.rules.plan.shared_nodes {
            let canonical = self.rules.canonical[id];
            if canonical != id {
                out.push_str(&format!(
                    "        {:<40} the tables of {}\n",
                    self.show(id),
                    self.show(canonical)
                ));
                continue;
            }
            let count = keys
                .iter()
                .filter(|k| matches!(k, Indicator::Rule(r) if r.node as usize == id))
                .count();
            let params: Vec<&str> = self.rules.plan.shared[id]
                .iter()
                .flatten()
                .map(|&p| self.params[p].name.as_ref())
                .collect();
            out.push_str(&format!(
                "        {:<40} {count} setting{} ({})\n",
                self.show(id),
                if count == 1 { "" } else { "s" },
                if params.is_empty() {
                    "fixed".to_string()
                } else {
                    params.join(" × ")
                }
            ));
        }
        out
    }

    /// A node as text (definitions by name).
    pub(super) fn show(&self, id: Id) -> String {
        self.show_within(id, 8)
    }

    pub(super) fn show_within(&self, id: Id, depth: usize) -> String {
        if depth == 0 {
            return "…".to_string();
        }
        let show = |i: Id| self.show_within(i, depth - 1);
        let compound = !matches!(
            self.rules.graph.nodes[id].op,
            Op::Col(_) | Op::User(_) | Op::Param(_) | Op::Number(_) | Op::Bool(_)
        );
        if let Some((name, _)) = self
            .rules
            .defines
            .iter()
            .find(|(_, d)| *d == id)
            .filter(|_| compound)
        {
            return name.clone();
        }
        match &self.rules.graph.nodes[id].op {
            Op::Number(bits) => crate::format::float(f64::from_bits(*bits)),
            Op::Bool(b) => b.to_string(),
            Op::Param(i) => self.params[*i].name.to_string(),
            Op::Col(c) => Col::ALL
                .iter()
                .find(|(_, k)| k == c)
                .map_or("?", |(n, _)| n)
                .to_string(),
            Op::User(k) => {
                let u = &self.rules.graph.user[*k];
                match (u.quoted, u.name.contains('"')) {
                    (false, _) => u.name.clone(),
                    (true, false) => format!("col(\"{}\")", u.name),
                    (true, true) => format!("col(\"{}\")", u.name.replace('"', "\"\"")),
                }
            }
            Op::Neg(a) => format!("-{}", show(*a)),
            Op::Not(a) => format!("not {}", show(*a)),
            Op::Bin(op, a, b) => format!("({} {} {})", show(*a), op.symbol(), show(*b)),
            Op::Call(f, args) => {
                let a: Vec<String> = args
                    .iter()
                    .zip(f.args())
                    .map(|(&i, kind)| match (&self.rules.graph.nodes[i].op, kind) {
                        // A true/false series the checker read as 1 / 0.
                        (Op::Call(Func::If, c), Arg::Bool | Arg::Same) if f.is_windowed() => {
                            show(c[0])
                        }
                        _ => show(i),
                    })
                    .collect();
                format!("{}({})", f.name(), a.join(", "))
            }
            Op::Frame(k, _) => self.rules.graph.frames[*k].text.clone(),
            Op::Extern(k, args) => {
                let name = self.rules.graph.functions.get(*k).map_or("?", |f| f.name());
                let a: Vec<String> = args.iter().map(|&i| show(i)).collect();
                format!("{name}({})", a.join(", "))
            }
        }
    }
}
