//! The compiled form of a rule strategy ([`Rules`], [`RuleStrategy`]): the
//! graph, its roots, the plan, the fast paths found; and what it says of
//! itself — the keys of its shared series, its warm-up, whether the data
//! has what it reads.

use super::check::{self, suggest};
use super::error::RuleError;
use super::functions::{Func, Windowed};
use super::gates::{Gated, PairFilters};
use super::ir::{self, Col, Graph, Id, Op, UserColumn};
use super::keys::ManagedRoots;
use super::parse;
use super::plan::Plan;
use super::source::RuleSource;
use crate::data::Bars;
use crate::error::{Error, Result};
use crate::grid::ParamSpace;
use crate::indicators::{Indicator, RuleSeries, RULE_SETTING_LEN};
use crate::strategy::{Direction, ParamSpec};

/// The rules' root nodes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Roots {
    pub(super) entry: Id,
    pub(super) exit: Id,
    /// Both or neither.
    pub(super) short: Option<(Id, Id)>,
    pub(super) stop: Option<Id>,
    pub(super) managed: ManagedRoots,
}

impl Roots {
    /// Every root: the rules, the trailing stop, the keys.
    pub(super) fn all(&self) -> Vec<Id> {
        let mut roots = vec![self.entry, self.exit];
        roots.extend(self.short.iter().flat_map(|&(a, b)| [a, b]));
        roots.extend(self.stop);
        roots.extend(self.managed.keys());
        roots
    }

    /// The short entry and exit rules in `direction`: none when long
    /// only, the exit and entry swapped when the short rules are not
    /// given.
    pub(super) fn short_rules(&self, direction: Direction) -> Option<(Id, Id)> {
        match (direction, self.short) {
            (Direction::Long, _) => None,
            (Direction::LongShort, None) => Some((self.exit, self.entry)),
            (Direction::LongShort, Some(pair)) => Some(pair),
        }
    }
}

/// A compiled rule strategy: the [`Rules`] plus the names the
/// [`Strategy`] trait hands out, owned (a run shares it by `Arc`).
#[derive(Debug)]
pub struct RuleStrategy {
    pub(super) rules: Rules,
    pub(super) name: String,
    pub(super) summary: String,
    pub(super) params: Vec<ParamSpec>,
}

/// The compiled rules themselves (what the fuzz target runs).
#[derive(Debug)]
pub(super) struct Rules {
    pub(super) source: RuleSource,
    pub(super) n_params: usize,
    pub(super) graph: Graph,
    pub(super) roots: Roots,
    pub(super) plan: Plan,
    /// `[strategy.define]` names and their nodes.
    pub(super) defines: Vec<(String, Id)>,
    /// Per node: the node whose tables it shares — the same windowed
    /// function of the same parameter-free input with its window one
    /// parameter (`sma(close, fast)` and `sma(close, slow)` read one set of
    /// SMAs); itself for every other node.
    pub(super) canonical: Vec<Id>,
    /// Rules that are one crossing pair and nothing else (`entry =
    /// cross_above(a, b)`, `exit = cross_below(a, b)`), `a` and `b` shared
    /// averages of prices: the screen finds their changes with the
    /// built-in crosses' scan.
    pub(super) cross_pair: Option<(Id, Id)>,
    /// The crossing pair's other terms, read at its crossings alone.
    pub(super) pair_filters: PairFilters,
    /// Per rule, a crossing of fewer parameters than the strategy has,
    /// and-ed into it, the rest evaluable bar by bar alone: the screen
    /// evaluates the rules only where one holds (`rules/gated.rs`). `None`
    /// when some rule has none, or for a crossing pair.
    pub(super) gated: Option<Gated>,
    /// The rules of each expression read on other bars
    /// ([`Graph::frames`], by index).
    pub(super) frames: Vec<Rules>,
}

impl PartialEq for RuleStrategy {
    fn eq(&self, other: &Self) -> bool {
        self.rules.source == other.rules.source
    }
}

impl Rules {
    /// The rules of one expression, `root` of `graph` (an expression read
    /// on other bars, `sieve.indicator`'s, a portfolio's `rank_by`): named
    /// `name`, reading `n_params` parameters of which `int_params` (bits)
    /// are whole numbers.
    pub(super) fn of_expression(
        name: &str,
        graph: Graph,
        root: Id,
        n_params: usize,
        int_params: u64,
    ) -> Rules {
        let frames = Rules::frames_of(&graph, n_params, int_params);
        Rules {
            source: RuleSource {
                name: name.to_string(),
                ..RuleSource::default()
            },
            n_params,
            plan: Plan::new(&graph, &[root], int_params),
            graph,
            roots: Roots {
                entry: root,
                exit: root,
                short: None,
                stop: None,
                managed: ManagedRoots::default(),
            },
            defines: Vec::new(),
            canonical: Vec::new(),
            cross_pair: None,
            pair_filters: PairFilters::default(),
            gated: None,
            frames,
        }
    }

    /// The rules of `graph`'s expressions read on other bars.
    pub(super) fn frames_of(graph: &Graph, n_params: usize, int_params: u64) -> Vec<Rules> {
        (graph.frames.iter())
            .map(|f| Rules::of_expression("frame", f.graph.clone(), f.root, n_params, int_params))
            .collect()
    }

    /// The key of shared node `id` at the parameters `params` (a twin of
    /// windows: its canonical node's key at its window).
    pub(super) fn key(&self, id: Id, params: &[f64]) -> Indicator {
        let mut setting = [0u64; RULE_SETTING_LEN];
        if let Some(ps) = &self.plan.shared[id] {
            for (s, &p) in setting.iter_mut().zip(ps) {
                *s = params[p].to_bits();
            }
        }
        Indicator::Rule(RuleSeries {
            node: self.canonical.get(id).copied().unwrap_or(id) as u32,
            setting,
        })
    }

    /// The parameters an [`Op::Frame`] reads (its `args`, parameter
    /// nodes), by their index, from this graph's `scalars`; NaN for the
    /// others.
    pub(super) fn frame_params(&self, args: &[Id], scalars: &[f64]) -> Vec<f64> {
        let mut params = vec![f64::NAN; self.n_params];
        for &a in args {
            if let Op::Param(i) = self.graph.nodes[a].op {
                params[i] = scalars[a];
            }
        }
        params
    }

    /// The parameters of a shared key (NaN for those it does not read).
    pub(super) fn params_of(&self, key: RuleSeries) -> Vec<f64> {
        let mut params = vec![f64::NAN; self.n_params];
        if let Some(ps) = self
            .plan
            .shared
            .get(key.node as usize)
            .and_then(Option::as_ref)
        {
            for (&p, &s) in ps.iter().zip(&key.setting) {
                params[p] = f64::from_bits(s);
            }
        }
        params
    }

    /// Whether any rule reads the volume column.
    pub(super) fn reads_volume(&self) -> bool {
        self.plan.columns.iter().any(|(_, c)| *c == Col::Volume)
            || self
                .graph
                .nodes
                .iter()
                .any(|n| matches!(n.op, Op::Call(Func::Windowed(w), _) if w.spec().reads_volume))
    }

    /// Per node, the bar from which it can be defined (lengths add up along
    /// a chain); one pass, children first.
    pub(super) fn warmups(&self, scalars: &[f64]) -> Vec<usize> {
        let mut w = vec![0usize; self.graph.nodes.len()];
        for id in 0..w.len() {
            w[id] = self.node_warmup(id, scalars, &w);
        }
        w
    }

    pub(super) fn node_warmup(&self, id: Id, scalars: &[f64], done: &[usize]) -> usize {
        let node = &self.graph.nodes[id];
        let below = node
            .op
            .children()
            .iter()
            .map(|&c| done[c])
            .max()
            .unwrap_or(0);
        let window = |i: Id| {
            let v = scalars[i];
            if v.is_finite() && v >= 0.0 {
                v.min(1e9) as usize
            } else {
                0
            }
        };
        match &node.op {
            Op::Call(f, args) => match f {
                Func::Windowed(w) => {
                    let spec = w.spec();
                    let inputs = spec.series.len();
                    // At most three settings (`stoch_d`); no allocation per call.
                    let mut windows = [0usize; 3];
                    let settings = &args[inputs..];
                    for (slot, &a) in windows.iter_mut().zip(settings) {
                        *slot = window(a);
                    }
                    let lag = (spec.lag)(&windows[..settings.len().min(3)]);
                    match inputs {
                        0 => lag,
                        _ => below + lag,
                    }
                }
                // Either branch may decide.
                Func::If => done[args[0]].max(done[args[1]].min(done[args[2]])),
                Func::Abs
                | Func::Min
                | Func::Max
                | Func::Clamp
                | Func::CrossAbove
                | Func::CrossBelow => below,
            },
            // Either side can make it true.
            Op::Bin(parse::BinOp::Or, a, b) => done[*a].min(done[*b]),
            // A higher timeframe's warm-up in its own bars: each holds at
            // least one of these (a lower bound). Another instrument's
            // bars may be finer: none said.
            Op::Frame(k, args) => match self.graph.frames[*k].on {
                ir::FrameOn::Timeframe(_) => {
                    self.frames[*k].warmup(&self.frame_params(args, scalars))
                }
                ir::FrameOn::Informative(_) => 0,
            },
            _ => below,
        }
    }
}

impl Rules {
    pub fn indicators(&self, params: &[f64], out: &mut Vec<Indicator>) {
        out.extend(
            self.plan
                .shared_nodes
                .iter()
                .map(|&id| self.key(id, params)),
        );
    }

    pub(super) fn check_data(&self, bars: &Bars) -> Result<()> {
        for (frame, rules) in self.graph.frames.iter().zip(&self.frames) {
            let checked = rules.check_data(super::frames::columns_of(frame, bars)?);
            // An informative instrument's columns are its own: say whose.
            checked.map_err(|e| match (&frame.on, e) {
                (
                    ir::FrameOn::Informative(name),
                    Error::Rule {
                        key,
                        column,
                        message,
                    },
                ) => Error::Rule {
                    key,
                    column,
                    message: (message.replace("the data's", "its"))
                        .replace("the data", &format!("informative '{name}'")),
                },
                (_, e) => e,
            })?;
        }
        for u in &self.graph.user {
            let twice = bars.extra.iter().filter(|c| c.name == u.name).count() > 1;
            let problem = match bars.extra(&u.name) {
                Some(_) if twice => format!(
                    "the data has two columns named '{}'; which one is meant is ambiguous (rename one)",
                    u.name
                ),
                Some(column) => match &column.problem {
                    Some(p) => format!("the data's column '{}' is not numbers ({p})", u.name),
                    None => continue,
                },
                None => self.unknown_column(u, bars),
            };
            return Err(RuleError {
                at: u.at,
                message: problem,
            }
            .into_error(&u.key, &u.text));
        }
        if self.reads_volume() && bars.volume.is_none() {
            let readers: Vec<&str> = Windowed::ALL
                .iter()
                .map(|w| w.spec())
                .filter(|s| s.reads_volume)
                .map(|s| s.name)
                .collect();
            return Err(Error::config(
                "strategy",
                format!(
                    "the rules of '{}' read `volume` (directly or through {}), but the data has no volume column (name one `volume`, or remove what reads it from the rules)",
                    self.source.name,
                    readers.join(" or ")
                ),
            ));
        }
        Ok(())
    }

    /// Why `u` names nothing: no parameter, definition or value, and no
    /// column of `bars`; lists the columns the data has.
    pub(super) fn unknown_column(&self, u: &UserColumn, bars: &Bars) -> String {
        if let Some(role) = crate::data::column_role(&u.name).filter(|_| u.quoted) {
            return format!("'{}' is {role}, not a column rules read by col(…)", u.name);
        }
        let columns = bars.other_columns();
        let listed = match columns.is_empty() {
            true => "the data has no columns beyond its time, prices and volume".to_string(),
            false => format!("the data's other columns are {}", columns.join(", ")),
        };
        let mut known = match u.quoted {
            true => Vec::new(),
            false => check::bare_names(
                self.defines.iter().map(|(n, _)| n.as_str()),
                self.source.params.iter().map(|(n, _)| n.as_str()),
            ),
        };
        known.extend(columns.iter().map(|c| c.to_string()));
        let hint = suggest(&u.name, known.iter().map(String::as_str));
        match u.quoted {
            true => format!("the data has no column '{}'{hint}; {listed}", u.name),
            false => format!(
                "unknown name '{}'{hint}: not a parameter (those need values in [strategy.params]), a definition, a value or a column of the data; {listed}",
                u.name
            ),
        }
    }

    pub(super) fn warmup(&self, params: &[f64]) -> usize {
        let scalars = ir::scalar_values(&self.graph, params, self.graph.nodes.len());
        let w = self.warmups(&scalars);
        // Any rule that can open a position (the exit opens a short in
        // long_short without short rules; the direction is not known here).
        let r = self.roots;
        let first = w[r.entry].min(w[r.exit]);
        r.short.map_or(first, |(short, _)| first.min(w[short]))
    }

    pub(super) fn space_indicators(&self, space: &ParamSpace) -> Vec<Indicator> {
        let mut keys = Vec::new();
        for &id in &self.plan.shared_nodes {
            let ps = self.plan.shared[id].as_deref().unwrap_or_default();
            // Constraints among these parameters alone prune settings.
            let local: Vec<&crate::grid::Constraint> = space
                .constraints
                .iter()
                .filter(|c| c.params().iter().all(|p| ps.contains(p)))
                .collect();
            space.for_each_setting(ps, |params| {
                if local.iter().all(|c| c.holds(params)) {
                    keys.push(self.key(id, params));
                }
            });
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}
