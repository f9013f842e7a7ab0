//! What a reader is asked for ([`LoadOptions`]) and what it returns
//! ([`Loaded`]): the types every format's reader shares, below them all.

use crate::data::Bars;

/// How to read the bars (`[data]` keys that change the values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Scale open/high/low/close by adj_close / close per bar.
    pub adjust: bool,
    /// `data.columns`: the file has no header; these name its columns.
    pub columns: Option<Vec<String>>,
    /// The other columns to read (those the rules read); `None` reads
    /// every one. The rest are only named ([`Bars::unread`]).
    pub extra: Option<Vec<String>>,
}

/// Validated bars plus notices worth one line each to the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub bars: Bars,
    pub notices: Vec<String>,
}
