//! Drawdown: max over t of 1 − E_t / max_{s≤t} E_s, the window's starting
//! value included, as a positive fraction.

#[derive(Debug, Clone, Copy)]
pub struct Drawdown {
    peak: f64,
    /// Lowest equity since the peak: the drawdown only grows at a new trough,
    /// so the division runs there and not on every bar.
    trough: f64,
    max: f64,
}

impl Drawdown {
    pub fn new(start_equity: f64) -> Self {
        Drawdown {
            peak: start_equity,
            trough: start_equity,
            max: 0.0,
        }
    }

    /// The state after some pushes, from the running peak and the largest
    /// drawdown so far (no further push may follow: the low since the peak
    /// is not known).
    pub(crate) fn from_parts(peak: f64, max: f64) -> Self {
        Drawdown {
            peak,
            trough: f64::NAN,
            max,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, equity: f64) {
        if equity > self.peak {
            self.peak = equity;
            self.trough = equity;
        } else if equity < self.trough {
            self.trough = equity;
            let dd = 1.0 - equity / self.peak;
            if dd > self.max {
                self.max = dd;
            }
        }
    }

    pub fn max_drawdown(&self) -> f64 {
        self.max
    }
}

/// calmar = cagr / max_drawdown; NaN when max_drawdown = 0.
pub fn calmar(cagr: f64, max_drawdown: f64) -> f64 {
    if max_drawdown == 0.0 {
        f64::NAN
    } else {
        cagr / max_drawdown
    }
}
