//! Human-readable tables.

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
