//! What candidates are ranked by ([`Objective`], one list of them) and the
//! ranking order: higher first, undefined last, ties by grid index.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use super::Metrics;

/// Declares [`Objective`], [`Objective::ALL`] and each objective's name
/// from one list: an objective is named once, here, and read once, by its
/// arm in [`Objective::of`] (which the compiler requires, as it does the
/// GPU backend's code for it).
macro_rules! objectives {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// What candidates are ranked by; higher is better.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub enum Objective {
            #[default]
            $($variant),*
        }

        impl Objective {
            /// Every objective, in the order messages list them.
            pub const ALL: &'static [Objective] = &[$(Objective::$variant),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Objective::$variant => $name),*
                }
            }
        }
    };
}

objectives![
    Calmar => "calmar",
    Sharpe => "sharpe",
    Sortino => "sortino",
    Cagr => "cagr",
    TotalReturn => "total_return",
    ProfitFactor => "profit_factor",
];

impl Objective {
    /// The objective of `m`; NaN (ranks last) with fewer than `min_trades`.
    pub fn of(self, m: &Metrics, min_trades: u64) -> f64 {
        if m.trades < min_trades {
            return f64::NAN;
        }
        match self {
            Objective::Calmar => m.calmar,
            Objective::Sharpe => m.sharpe,
            Objective::Sortino => m.sortino,
            Objective::Cagr => m.cagr,
            Objective::TotalReturn => m.total_return,
            Objective::ProfitFactor => m.profit_factor,
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Objective {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Objective::ALL
            .iter()
            .copied()
            .find(|o| o.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Objective::ALL.iter().map(|o| o.name()).collect();
                format!(
                    "unknown objective '{s}'; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// The one order every ranking in sieve uses: higher score first, NaN last,
/// ties by lower grid index.
#[inline]
pub fn rank_order(a_score: f64, a_index: u64, b_score: f64, b_index: u64) -> Ordering {
    let by_score = match (a_score.is_nan(), b_score.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => b_score.partial_cmp(&a_score).unwrap_or(Ordering::Equal),
    };
    by_score.then(a_index.cmp(&b_index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_last_then_index() {
        let mut v = [
            (f64::NAN, 0),
            (1.0, 5),
            (2.0, 9),
            (1.0, 3),
            (f64::INFINITY, 7),
            (-1.0, 1),
        ];
        v.sort_by(|a, b| rank_order(a.0, a.1, b.0, b.1));
        let idx: Vec<u64> = v.iter().map(|x| x.1).collect();
        assert_eq!(idx, vec![7, 9, 3, 5, 1, 0]);
    }
}
