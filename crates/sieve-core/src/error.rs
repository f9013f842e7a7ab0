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

    /// Anything else the user asked for that cannot be done.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
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
