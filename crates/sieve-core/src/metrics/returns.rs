//! Return metrics over a window: E_start is the close before the window (or
//! the initial cash), E_end the last close in it.

/// total_return = E_end / E_start − 1.
pub fn total_return(start: f64, end: f64) -> f64 {
    end / start - 1.0
}

/// cagr = (E_end / E_start)^(1/years) − 1, years = calendar days / 365.25.
/// NaN for a window with no elapsed time, or an account that went to zero or
/// below (no real growth rate exists).
pub fn cagr(start: f64, end: f64, years: f64) -> f64 {
    let ratio = end / start;
    if years <= 0.0 || ratio.is_nan() || ratio < 0.0 {
        return f64::NAN;
    }
    ratio.powf(1.0 / years) - 1.0
}
