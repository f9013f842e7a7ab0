//! The rule language's arithmetic and comparisons on one value: undefined
//! is NaN, arithmetic passes it on, every comparison with it is false, and
//! a division by zero is undefined. Every evaluator (scalars, blocks, single
//! bars) and the constant folder share these.

use super::parse::BinOp;

#[inline(always)]
pub(super) fn compare(op: BinOp, a: f64, b: f64) -> bool {
    match op {
        BinOp::Lt => a < b,
        BinOp::Le => a <= b,
        BinOp::Gt => a > b,
        BinOp::Ge => a >= b,
        BinOp::Eq => a == b,
        // Not IEEE's `!=`: with an undefined side every comparison is false.
        BinOp::Ne => differ(a, b),
        _ => false,
    }
}

/// a ≠ b with both defined: IEEE's `!=` is true when either is NaN, and a
/// comparison with an undefined value must be false.
#[inline(always)]
#[allow(clippy::double_comparisons)]
pub(super) fn differ(a: f64, b: f64) -> bool {
    a < b || a > b
}

/// Not a ≥ b: a below b, or either undefined.
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)]
pub(super) fn below_or_undefined(a: f64, b: f64) -> bool {
    !(a >= b)
}

#[inline(always)]
pub(super) fn arith(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        // Division by zero is undefined, not ±∞.
        BinOp::Div => {
            if b == 0.0 {
                f64::NAN
            } else {
                a / b
            }
        }
        _ => f64::NAN,
    }
}

/// NaN-propagating minimum (f64::min would drop an undefined side).
#[inline(always)]
pub(super) fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

#[inline(always)]
pub(super) fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}
