//! Rule strategies: a strategy written in the config as `entry` / `exit`
//! rules over indicators, compiled once into a plan and run by the same
//! engine and metrics as the built-ins.
//!
//! The files, lowest first (each reads only files of this folder listed
//! before it; `scripts/check_layers.py` checks that they form no cycle):
//!
//! * [`error`] is the error a rule's text reports (a caret under it);
//!   [`parse`] turns text into expressions; [`scalar`] is the language's
//!   arithmetic on one value; [`functions`] lists every function once (its
//!   name, signature, warm-up, column and whether the crossing fast path
//!   may read it); [`external`], functions defined outside sieve; [`ir`]
//!   is the graph of typed nodes everything below shares.
//! * [`check`] resolves names and types into one graph; [`plan`] decides
//!   what is computed once per indicator setting and what per combination;
//!   [`eval`] evaluates it block by block with the position state machine.
//! * [`source`] is what the config says; [`keys`] the trade-management
//!   keys (any `K` per key); [`gates`] the crossings that gate rules;
//!   [`compiled`] the compiled form; [`compile`] turns one into the other;
//!   [`frames`], the bars an expression read on other bars reads, and how
//!   its values reach the strategy's.
//! * [`block`] evaluates one combination's rules block by block;
//!   [`decide`] hands each close's decision to the engine; [`gated`] reads
//!   rules only where a crossing gates them; [`pair`] reads a crossing
//!   pair's other terms at its crossings; [`run`] chooses the path;
//!   [`signals`] runs signals given from outside; [`builtin`] a built-in
//!   with trade management.
//! * [`describe`], [`wgsl`] (the GPU kernel), [`values`] (one expression's
//!   values), and [`strategy_impl`]: the [`Strategy`](crate::strategy::Strategy)
//!   trait.

mod across;
mod block;
mod builtin;
mod check;
mod compile;
mod compiled;
mod cross;
mod decide;
mod describe;
mod error;
mod eval;
mod external;
mod frames;
mod functions;
mod gated;
mod gates;
mod ir;
mod keys;
mod pair;
mod parse;
mod plan;
mod run;
mod scalar;
mod signals;
mod source;
mod strategy_impl;
mod values;
mod wgsl;

pub use builtin::ManagedBuiltin;
pub use check::suggest;
pub use compiled::RuleStrategy;
pub use cross::{cross_section, Across, CrossExpression, Weights};
pub use error::RuleError;
pub use eval::column;
pub use external::{ExternalFunction, ExternalFunctions};
pub use ir::Col;
pub use keys::{KeyRead, KeySeries};
pub use keys::{KeySpec, KeyValue, Kind, ManagedKeys, Management, Role, KEYS};
pub use signals::{signal_targets, simulate_signals, SignalKeys};
pub use source::{is_name, reserved, RuleAxis, RuleSource, MAX_DEFINES};
pub use values::{fuzz_one, values, values_of, Expression};
pub use wgsl::{RuleKernel, BAR_COLUMNS, ENTRY_POINT, NAN_BITS};
