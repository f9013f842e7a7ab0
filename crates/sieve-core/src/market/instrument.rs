//! One instrument of a study.

use crate::data::Bars;
use crate::evaluate::Scoring;

/// One instrument: a name, its bars and how they are scored.
#[derive(Debug, Clone)]
pub struct Instrument {
    pub name: String,
    pub bars: Bars,
    pub scoring: Scoring,
}
