//! What the config says of a rule strategy ([`RuleSource`], its
//! trade-management keys as written, its parameters' grids), the names a
//! rule may give, and the error a rule's text reports with a caret.

use super::external::ExternalFunctions;
use super::functions::Func;
use super::ir::Col;
use super::keys::Management;
use crate::error::{Error, Result};
use crate::grid::AxisValues;

/// One `[strategy.params]` entry of a rule strategy: its values, or what
/// is wrong with them (the message, reported under the entry's key when the
/// compiler reaches it: after the rules, and after whether it is used).
pub type RuleAxis = std::result::Result<AxisValues, String>;

/// The most `[strategy.define]` entries a rule strategy may have.
pub const MAX_DEFINES: usize = 10_000;

/// What the config says of a rule strategy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleSource {
    pub name: String,
    pub entry: String,
    pub exit: String,
    pub short_entry: Option<String>,
    pub short_exit: Option<String>,
    pub trailing_stop: Option<String>,
    /// `stop_loss`, `take_profit`, `max_bars`, `size` and the rest.
    pub management: Management,
    /// `[strategy.define]` in declaration order.
    pub define: Vec<(String, String)>,
    /// `[strategy.params]`: the parameters are exactly its keys, in order.
    pub params: Vec<(String, RuleAxis)>,
    /// Functions defined outside sieve that the rules may call.
    pub functions: ExternalFunctions,
    /// Expressions that read the parameters besides the rules: (key, text,
    /// a number or else true/false), which may call `rank`, `count` and
    /// `total`. Checked with the rules, and what they read of the
    /// parameters counts (a window makes a whole number), but nothing
    /// trades on them: a target-weight portfolio's `weight` and
    /// `rebalance`.
    pub read_also: Vec<(String, String, bool)>,
}

/// A parameter or definition name must be one a rule can write, and not a
/// column, function or keyword.
pub(super) fn check_name(key: &str, name: &str) -> Result<()> {
    if !is_name(name) {
        return Err(Error::config(
            key,
            format!("'{name}' is not a name a rule can use: letters, digits and _, not starting with a digit"),
        ));
    }
    if reserved(name) {
        return Err(Error::config(
            key,
            format!("'{name}' is already a column, function or keyword (a newer sieve may have added it); rename it, e.g. 'my_{name}'"),
        ));
    }
    Ok(())
}

/// Letters, digits and `_`, not starting with a digit: a name a rule can
/// write.
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Names a definition (or a function defined outside sieve) may not take:
/// the rule language's own words, values and functions.
pub fn reserved(name: &str) -> bool {
    Col::ALL.iter().any(|(n, _)| *n == name)
        || Func::named(name).is_some()
        || matches!(
            name,
            "and" | "or" | "not" | "true" | "false" | "col" | "tf" | "informative"
        )
}
