//! What the optimize loop tries next: the [`Search`] seam. Each iteration
//! screens one [`Proposal`] — a grid and, optionally, a list of its grid
//! indices — and verifies the best of it; the search sees every earlier
//! iteration (its proposal, the screen's record and top K in `sweep.csv`,
//! the verified results) and proposes the next. [`Zoom`] (the whole grid,
//! then zoomed in) is the default; [`Random`] samples the grid uniformly;
//! [`Evolve`] breeds each generation from the best of the earlier ones.
//!
//! A proposal is stored in the iteration's record (`run.json`) before it is
//! screened, so a resumed run screens exactly what was proposed; a search
//! must propose from the history alone (no hidden state), so that the same
//! history gives the same proposal.

mod evolve;
mod propose;
mod random;
mod zoom;

pub use evolve::Evolve;
pub use propose::{History, Next, Proposal, Search};
pub use random::Random;
pub use zoom::Zoom;

use crate::Study;

/// The search a study asks for (`search.method`).
pub fn of(study: &Study) -> sieve_core::Result<Box<dyn Search>> {
    match study.settings().search.method {
        crate::settings::SearchMethod::Grid => Ok(Box::new(Zoom)),
        crate::settings::SearchMethod::Random => {
            Ok(Box::new(Random::new(&study.settings().search)))
        }
        crate::settings::SearchMethod::Evolve => {
            Ok(Box::new(Evolve::new(&study.settings().search)))
        }
    }
}
