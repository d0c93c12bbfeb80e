//! The live line on a terminal while a run goes on; nothing at all when output is piped.

use herd_engine::Progress;
use herd_result::format::count;
use std::io::{IsTerminal, Write};
use std::time::Duration;

pub struct Live {
    on: bool,
    shown: bool,
    planned: Planned,
}

/// How long the run is meant to last, for the time remaining: a measured duration, or a
/// request count whose time is estimated from the pace so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Planned {
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
}

/// The last complete second, as the line shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LastSecond {
    pub requests: u64,
    pub p99_ms: f64,
}

impl Live {
    /// Shows progress only when both stdout and stderr are terminals.
    pub fn new(quiet: bool) -> Self {
        Live {
            on: !quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
            shown: false,
            planned: Planned::default(),
        }
    }

    /// Adds the time remaining to the line.
    pub fn planned(mut self, planned: Planned) -> Self {
        self.planned = planned;
        self
    }

    pub fn update(&mut self, p: &Progress) {
        if !self.on {
            return;
        }
        let last = p.last.as_ref().map(|s| LastSecond {
            requests: s.requests(),
            p99_ms: s.latency.value_at_quantile(0.99) as f64 / 1e3,
        });
        let text = line(p.elapsed, p.requests, p.errors, last, self.planned);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        self.shown = true;
    }

    pub fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

impl herd_run::Observer for Live {
    fn progress(&mut self, p: &Progress) {
        self.update(p);
    }

    fn finished(&mut self) {
        self.clear();
    }
}

impl crate::Sink for Live {
    fn progress(&mut self, p: &Progress) {
        self.update(p);
    }

    fn finished(&mut self) {
        self.clear();
    }
}

/// The progress line, a pure function of what the run reported so far.
pub fn line(
    elapsed: Duration,
    requests: u64,
    errors: u64,
    last: Option<LastSecond>,
    planned: Planned,
) -> String {
    let (rps, p99) = match last {
        Some(s) => (count(s.requests), format!("{:.1} ms", s.p99_ms)),
        None => ("-".into(), "-".into()),
    };
    let left = match remaining(elapsed, requests, planned) {
        Some(d) => format!(" ({} left)", clock(d)),
        None => String::new(),
    };
    format!(
        "  {:>6}{left}  {} requests  {} errors  last second: {rps} req/s, p99 {p99}",
        clock(elapsed),
        count(requests),
        count(errors),
    )
}

/// Time left of a timed run; of a counted run, estimated from its pace so far (unknown until
/// the first request ended).
fn remaining(elapsed: Duration, requests: u64, planned: Planned) -> Option<Duration> {
    let by_time = planned.duration.map(|d| d.saturating_sub(elapsed));
    let by_count = planned.requests.and_then(|n| {
        let done = requests.min(n);
        if done == 0 || elapsed.is_zero() {
            return None;
        }
        let per_s = done as f64 / elapsed.as_secs_f64();
        Some(Duration::from_secs_f64((n - done) as f64 / per_s))
    });
    match (by_time, by_count) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `45s`, `4m05s`, `1h02m03s`: whole seconds, rounded.
fn clock(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}h{m:02}m{s:02}s")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_time_left_and_thousands_separators() {
        let secs = Duration::from_secs;
        let last = Some(LastSecond {
            requests: 12_345,
            p99_ms: 1.5,
        });
        let timed = Planned {
            duration: Some(secs(300)),
            requests: None,
        };
        assert_eq!(
            line(secs(15), 1_234_567, 1_002, last, timed),
            "     15s (4m45s left)  1,234,567 requests  1,002 errors  last second: 12,345 req/s, p99 1.5 ms"
        );
        // A counted run: 1,000 of 4,000 in 10 s, so 30 s to go.
        let counted = Planned {
            duration: None,
            requests: Some(4_000),
        };
        assert_eq!(
            line(secs(10), 1_000, 0, None, counted),
            "     10s (30s left)  1,000 requests  0 errors  last second: - req/s, p99 -"
        );
        // Nothing to estimate from yet, or nothing planned: no time left shown.
        assert!(!line(secs(0), 0, 0, None, counted).contains("left"));
        assert!(!line(secs(5), 10, 0, None, Planned::default()).contains("left"));
        assert_eq!(clock(secs(3_723)), "1h02m03s");
        assert_eq!(clock(secs(300) - secs(301).min(secs(300))), "0s");
    }
}
