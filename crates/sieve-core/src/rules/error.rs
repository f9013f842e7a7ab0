//! The error a rule's text reports: a message at a byte, shown under the
//! key with the rule and a caret.

use crate::error::Error;

/// A syntax or meaning error at byte `at` of a rule's text.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleError {
    pub at: usize,
    pub message: String,
}

impl RuleError {
    /// As a config error: the key and column, then the rule with a caret.
    pub(super) fn into_error(self, key: &str, text: &str) -> Error {
        let at = self.at.min(text.len());
        let column = text[..at].chars().count() + 1;
        let shown = text.replace(['\n', '\r', '\t'], " ");
        Error::Rule {
            key: format!("{key}, column {column}"),
            column,
            message: format!(
                "{}\n    {shown}\n    {}^",
                self.message,
                " ".repeat(column - 1)
            ),
        }
    }
}
