//! One error type for the library; every variant carries the user's context
//! (file, line, key, parameter) so the CLI can print it as one clear message.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A data file that cannot be used; `message` already names the line(s).
    #[error("{}: {message}", path.display())]
    Data { path: PathBuf, message: String },

    /// A configuration key with a bad value, or an unknown key.
    #[error("config: {key}: {message}")]
    Config { key: String, message: String },

    /// A rule (or definition) that does not parse or check: `key` names the
    /// config key and the column, `column` is that column (1-based, in
    /// characters), and `message` shows the rule with a caret under it.
    #[error("config: {key}: {message}")]
    Rule {
        key: String,
        column: usize,
        message: String,
    },

    /// A parameter value a strategy cannot accept.
    #[error("parameter '{name}': {message}")]
    Param { name: String, message: String },

    /// A file that could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },

    /// Work stopped on purpose (a time budget ran out); not a failure.
    #[error("interrupted: {0}")]
    Interrupted(String),

    /// The GPU could not be found, could not run the work, or failed.
    #[error("{0}")]
    Gpu(String),

    /// Anything else the user asked for that cannot be done.
    #[error("{0}")]
    Invalid(String),
}

/// What an [`Error`] is about, for callers that branch on it (the Python
/// package raises one exception class per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A config key or value.
    Config,
    /// A rule's text, at a position.
    Rule,
    /// A data file's content (a row, a column).
    Data,
    /// A parameter value.
    Parameter,
    /// Reading or writing a file.
    Io,
    /// The GPU.
    Gpu,
    /// Stopped on purpose.
    Cancelled,
    /// Anything else asked for that cannot be done.
    Invalid,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Config { .. } => ErrorKind::Config,
            Error::Rule { .. } => ErrorKind::Rule,
            Error::Data { .. } => ErrorKind::Data,
            Error::Param { .. } => ErrorKind::Parameter,
            Error::Io { .. } => ErrorKind::Io,
            Error::Gpu(_) => ErrorKind::Gpu,
            Error::Interrupted(_) => ErrorKind::Cancelled,
            Error::Invalid(_) => ErrorKind::Invalid,
        }
    }

    /// The same error with its config key prefixed (`file (key)`), for
    /// errors of a config read from a file; other kinds unchanged.
    pub fn in_file(self, file: &str) -> Self {
        match self {
            Error::Config { key, message } => Error::Config {
                key: format!("{file} ({key})"),
                message,
            },
            Error::Rule {
                key,
                column,
                message,
            } => Error::Rule {
                key: format!("{file} ({key})"),
                column,
                message,
            },
            e => e,
        }
    }

    pub fn config(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config {
            key: key.into(),
            message: message.into(),
        }
    }

    pub fn param(name: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Param {
            name: name.into(),
            message: message.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error: source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// Each kind of mistake comes back as its kind, with the same words as
    /// before kinds existed (a rule's error still reads as a config key's).
    #[test]
    fn errors_say_their_kind() {
        let kind = |text: &str| Config::parse(text).unwrap_err().kind();
        assert_eq!(kind("[backtest]\nfee = -1\n"), ErrorKind::Config);
        let rule = Config::parse(
            "[strategy]\nname = \"r\"\nentry = \"close > sma(close, n\"\nexit = \"false\"\n[strategy.params]\nn = 5\n",
        )
        .unwrap_err();
        assert_eq!(rule.kind(), ErrorKind::Rule);
        assert!(matches!(rule, Error::Rule { column: 12, .. }), "{rule:?}");
        assert!(
            rule.to_string()
                .starts_with("config: strategy.entry, column 12: unclosed '('"),
            "{rule}"
        );
        let in_file = rule.in_file("my.toml");
        assert!(
            in_file
                .to_string()
                .starts_with("config: my.toml (strategy.entry, column 12): "),
            "{in_file}"
        );
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.csv");
        std::fs::write(&bad, "date,open,high,low,close\n2020-01-01,1,2,0.5,x\n").unwrap();
        let options = crate::data::LoadOptions::default();
        assert_eq!(
            crate::data::load(&bad, &options).unwrap_err().kind(),
            ErrorKind::Data
        );
        let missing = dir.path().join("missing.csv");
        assert_eq!(
            crate::data::load(&missing, &options).unwrap_err().kind(),
            ErrorKind::Io
        );
    }
}
