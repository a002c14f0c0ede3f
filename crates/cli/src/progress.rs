//! Progress on standard error: an indicatif bar with the rate and the time left when standard
//! error is a terminal, plain lines otherwise (as before the bars, for logs and scripts).

use clconv::Request;
use clconv_verify::exhaustive::ProgressEvent;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// `check`'s progress, a tick per request checked: a bar on a terminal, a line per 10%
/// otherwise.
pub struct Progress {
    total: usize,
    done: AtomicUsize,
    start: Instant,
    /// The bar, when standard error is a terminal.
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let style = ProgressStyle::with_template(
                "[{bar:30}] {pos}/{len} {elapsed} elapsed, ~{eta} left, {rate}  {msg}",
            )
            .expect("a valid template")
            .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} requests/s", s.per_sec());
            })
            .progress_chars("#> ");
            ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
                .with_style(style)
        });
        Progress {
            total,
            done: 0.into(),
            start: Instant::now(),
            bar,
        }
    }

    /// `r` is checked (from any checking thread).
    pub fn tick(&self, r: &Request) {
        if let Some(bar) = &self.bar {
            bar.set_message(r.to_string());
            bar.inc(1);
            return;
        }
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let width = 30;
        let filled = done * width / self.total;
        let line = format!(
            "[{}{}] {done}/{} {:.0}s {r}",
            "#".repeat(filled),
            " ".repeat(width - filled),
            self.total,
            self.start.elapsed().as_secs_f64()
        );
        if done * 10 / self.total != (done - 1) * 10 / self.total {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    /// Every request is checked: the bar stays, finished, above the results.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// `check --exhaustive`'s bar on a terminal, fed by the run's [`ProgressEvent`]s (without a
/// terminal the verifier prints its own lines).
pub struct ExhaustiveBar(ProgressBar);

impl ExhaustiveBar {
    /// The bar, if standard error is a terminal.
    pub fn on_terminal() -> Option<ExhaustiveBar> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let style = ProgressStyle::with_template(
            "[{bar:30}] {percent:>3}%  {elapsed} elapsed, ~{eta} left, {rate}  {msg}",
        )
        .expect("a valid template")
        .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            // Element checks: an input through one kernel, the fast path or the sample.
            let _ = write!(w, "{:.1}M checks/s", s.per_sec() / 1e6);
        })
        .progress_chars("#> ");
        Some(ExhaustiveBar(
            ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr()).with_style(style),
        ))
    }

    /// One event of the run (from any thread).
    pub fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Start { total } => {
                self.0.set_length(total);
                self.0.reset_elapsed();
                self.0.reset_eta();
            }
            ProgressEvent::Group(label) => self.0.set_message(label.to_string()),
            ProgressEvent::Advance(work) => self.0.inc(work),
        }
    }

    /// Runs `f` (which writes a result line) with the bar off the terminal.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.suspend(f)
    }

    /// The run is over: the bar goes, the summary line follows.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
