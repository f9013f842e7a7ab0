//! The HTML every page shares: the style sheet, escaping, and the
//! document's start.

use std::fmt::Write as _;

pub(crate) const CSS: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}table.trades td,table.trades th{font-variant-numeric:tabular-nums;white-space:nowrap}tr.gap td{text-align:center;color:#777;font-style:italic}svg{display:block;margin:1em 0}.foot{color:#888;font-size:small}.warn{color:#a40}";

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The document's start: its title (as the page's heading too) and style.
pub(crate) fn push_document_start(html: &mut String, title: &str) {
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n<style>{}</style></head><body>\n<h1>{}</h1>\n",
        esc(title),
        CSS,
        esc(title)
    );
}
