//! Progress on long steps: a bar with rate and ETA on a terminal; without
//! one (Slurm logs, CI), a one-line report every 30 s (5 s with -v). After
//! the first batch of a sweep, the rate and the projected time are printed
//! once, with a clear warning when the work would take over an hour.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Projections shorter than this are not worth a line.
const PROJECTION_MIN: Duration = Duration::from_secs(10);
const HOUR: f64 = 3600.0;

pub struct Progress {
    bar: ProgressBar,
    label: String,
    unit: String,
    /// Interval of the plain-text lines without a terminal (`None` on one).
    log_every: Option<Duration>,
    state: Mutex<LogState>,
}

struct LogState {
    start: Instant,
    last_line: Instant,
    /// Where the first batch ended: the projection measures from there, so
    /// set-up work (indicators) does not inflate it.
    first: Option<(u64, Instant)>,
    projected: bool,
}

impl Progress {
    pub fn new(len: u64, label: &str, unit: &str, verbose: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = if terminal {
            ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_length(len);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{label:>8} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} {{rate}}/s ETA {{eta}}"
            ))
            .map(|s| {
                // The rate the way every sieve message writes numbers
                // (`267638`, not `267,637.9054`).
                s.with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", crate::text::human(state.per_sec()));
                    },
                )
            })
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        let now = Instant::now();
        Progress {
            bar,
            label: label.to_string(),
            unit: unit.to_string(),
            log_every: (!terminal).then_some(Duration::from_secs(if verbose { 5 } else { 30 })),
            state: Mutex::new(LogState {
                start: now,
                last_line: now,
                first: None,
                projected: false,
            }),
        }
    }

    pub fn set(&self, pos: u64) {
        self.bar.set_position(pos);
        self.report();
    }

    pub fn inc(&self) {
        self.bar.inc(1);
        self.report();
    }

    fn report(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        let pos = self.bar.position();
        let len = self.bar.length().unwrap_or(0).max(1);
        let elapsed = s.start.elapsed().as_secs_f64();
        if pos == 0 || elapsed <= 0.0 {
            return;
        }
        let rate = pos as f64 / elapsed;
        let left = len.saturating_sub(pos) as f64 / rate;
        match s.first {
            None => s.first = Some((pos, Instant::now())),
            Some((p0, t0)) if !s.projected && pos > p0 => {
                s.projected = true;
                let steady = (pos - p0) as f64 / t0.elapsed().as_secs_f64().max(1e-9);
                let total = elapsed + len.saturating_sub(pos) as f64 / steady;
                if let Some(line) = projection(&self.label, &self.unit, len, steady, total) {
                    self.bar.suspend(|| eprintln!("{line}"));
                }
            }
            Some(_) => {}
        }
        if let Some(every) = self.log_every {
            if s.last_line.elapsed() >= every {
                s.last_line = Instant::now();
                eprintln!(
                    "{}: {pos}/{len} {} ({:.0}%), {} {}/s, ETA {}",
                    self.label,
                    self.unit,
                    100.0 * pos as f64 / len as f64,
                    crate::text::human(rate),
                    self.unit,
                    duration(left)
                );
            }
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The line printed after the first batch: rate and projected total time;
/// `None` when the whole step is short.
pub fn projection(label: &str, unit: &str, len: u64, rate: f64, total_s: f64) -> Option<String> {
    if total_s < PROJECTION_MIN.as_secs_f64() {
        return None;
    }
    let mut line = format!(
        "{label}: {} {unit}/s; {len} {unit} will take about {}",
        crate::text::human(rate),
        duration(total_s)
    );
    if total_s > HOUR && unit == "comb" {
        line.push_str(
            "\nwarning: that is over an hour; consider sampling it instead (sieve optimize with [search] method = \"evolve\"), splitting the grid across machines (--shard K/N, then sieve merge), a coarser grid, or the GPU backend (--backend gpu, a build with --features gpu; kernels for sma_cross, ema_cross and activation)",
        );
    }
    Some(line)
}

/// Seconds as a short human duration: `45 s`, `12 min`, `3.5 h`, `85 days`.
pub fn duration(s: f64) -> String {
    if !s.is_finite() {
        "?".into()
    } else if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 90.0 * 60.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 48.0 * HOUR {
        format!("{:.1} h", s / HOUR)
    } else {
        format!("{:.0} days", s / (24.0 * HOUR))
    }
}

/// The optimize loop's steps as progress bars (and its notes on stderr):
/// what the CLI shows, and the Python package with `progress=True`.
pub struct ProgressObserver {
    /// Draw bars and print notes at all.
    pub show: bool,
    /// Without a terminal, report every 5 s instead of every 30 s.
    pub verbose: bool,
    bar: Option<Progress>,
}

impl ProgressObserver {
    pub fn new(show: bool, verbose: bool) -> Self {
        ProgressObserver {
            show,
            verbose,
            bar: None,
        }
    }
}

impl crate::control::Observer for ProgressObserver {
    fn start(&mut self, iteration: u32, stage: crate::rundir::Stage, total: u64) {
        let unit = match stage {
            crate::rundir::Stage::Sweep => "comb",
            _ => "cand",
        };
        let label = format!("{iteration}:{}", stage.name());
        self.bar = self
            .show
            .then(|| Progress::new(total, &label, unit, self.verbose));
    }
    fn progress(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set(done);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
    fn note(&mut self, message: &str) {
        if self.show {
            eprintln!("{message}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_by_hand() {
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(12.0 * 60.0), "12 min");
        assert_eq!(duration(3.5 * HOUR), "3.5 h");
        // 1.2e12 combinations at 1.6e5 comb/s: 7.5e6 s = 87 days.
        assert_eq!(duration(1.2e12 / 1.6e5), "87 days");
    }

    #[test]
    fn projection_warns_only_past_an_hour() {
        assert_eq!(projection("sweep", "comb", 1000, 500.0, 2.0), None);
        let short = projection("sweep", "comb", 100_000, 5000.0, 20.0).unwrap();
        assert!(
            short.contains("20 s") && !short.contains("warning"),
            "{short}"
        );
        let long = projection("sweep", "comb", 1_200_000_000_000, 1.6e5, 7.5e6).unwrap();
        assert!(
            long.contains("87 days") && long.contains("--shard"),
            "{long}"
        );
    }
}
