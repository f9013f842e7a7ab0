//! Numbers and tables for people: the terminal's tables and the report's
//! labels (files write numbers with `sieve_core::format`).

use sieve_core::format::float;

/// A float for people: 6 significant digits, NaN and inf spelled out.
pub fn human(x: f64) -> String {
    if !x.is_finite() {
        return sieve_core::format::float(x);
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-4..9).contains(&magnitude) {
        return format!("{x:.5e}");
    }
    let decimals = (5 - magnitude).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Left-aligned first column, right-aligned others.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut width = vec![0; cols];
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (i, cell) in row.iter().enumerate() {
            if i == 0 {
                out.push_str(&format!("{cell:<w$}", w = width[0]));
            } else {
                out.push_str(&format!("  {cell:>w$}", w = width[i]));
            }
        }
        out.push('\n');
    }
    out
}

/// `x` with `digits` significant digits (never rounding away integer
/// digits: 125 stays "125"), trailing zeros dropped.
pub fn round_sig(x: f64, digits: i32) -> String {
    if !x.is_finite() {
        return float(x);
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, 17) as usize;
    trim_zeros(&format!("{x:.decimals$}"))
}

/// "1.2500" → "1.25", "2.000" → "2", "-0.00" → "0".
pub fn trim_zeros(s: &str) -> String {
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Labels of sorted distinct `values`: the fewest significant digits
/// (`min_digits` at least) that still tell every value from its neighbours.
pub fn short_labels(values: &[f64], min_digits: i32) -> Vec<String> {
    for digits in min_digits..=17 {
        let labels: Vec<String> = values.iter().map(|&v| round_sig(v, digits)).collect();
        if labels.windows(2).all(|w| w[0] != w[1]) {
            return labels;
        }
    }
    values.iter().map(|&v| float(v)).collect()
}

/// A tick label on a continuous axis `span` wide: the decimals its ticks
/// (at most ten, at steps of 1, 2 or 5 × 10^k) need, and no more.
pub fn axis_label(v: f64, span: f64) -> String {
    let step = span.abs() / 10.0;
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        6
    };
    trim_zeros(&format!("{v:.decimals$}"))
}

/// The label of a tick at whole number `v`, or "" between whole numbers.
pub fn integer_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// The label of a tick on cell centre `v` (cells centred on 0, 1, ...).
pub fn cell_label(labels: &[String], v: f64) -> String {
    if v < -0.5 || (v - v.round()).abs() > 1e-9 {
        return String::new();
    }
    labels.get(v.round() as usize).cloned().unwrap_or_default()
}
