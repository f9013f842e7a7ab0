//! Progress on long steps: a bar with rate and ETA on a terminal; on a pipe,
//! nothing, or (with -v) a line every few seconds.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    /// For -v on a pipe: (label, start, last line printed).
    log: Option<Mutex<(Instant, Instant)>>,
    label: String,
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
                "{label:>8} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit} {{per_sec}} ETA {{eta}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        let now = Instant::now();
        Progress {
            bar,
            log: (verbose && !terminal).then(|| Mutex::new((now, now))),
            label: label.to_string(),
        }
    }

    pub fn set(&self, pos: u64) {
        self.bar.set_position(pos);
        self.maybe_log();
    }

    pub fn inc(&self) {
        self.bar.inc(1);
        self.maybe_log();
    }

    fn maybe_log(&self) {
        let Some(log) = &self.log else { return };
        let Ok(mut guard) = log.lock() else { return };
        let (start, last) = &mut *guard;
        if last.elapsed() < Duration::from_secs(5) {
            return;
        }
        *last = Instant::now();
        let pos = self.bar.position();
        let len = self.bar.length().unwrap_or(0).max(1);
        let rate = pos as f64 / start.elapsed().as_secs_f64();
        let eta = (len.saturating_sub(pos)) as f64 / rate;
        eprintln!(
            "{}: {pos}/{len} ({:.0}%), {rate:.0}/s, ETA {eta:.0}s",
            self.label,
            100.0 * pos as f64 / len as f64
        );
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
