//! The live panel on a terminal while a run goes on: a few lines redrawn in place each second
//! (oha's live view, kept to plain text and three ANSI codes): where the run is and how long is
//! left, the rate of the last second against the plan's, p50 and p99 now, errors, and a
//! sparkline of the rate. Nothing at all when output is piped or redirected.

use herd_engine::Progress;
use herd_result::format::{count, duration_ms, percent, rate};
use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Seconds the sparkline covers.
const SPARK: usize = 40;
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub struct Live {
    on: bool,
    /// Lines drawn last time, to go back over.
    shown: usize,
    planned: Planned,
    /// The rate of each whole second, the last [`SPARK`] of them.
    recent: VecDeque<f64>,
    last: Option<LastSecond>,
}

/// How long the run is meant to last, for the time remaining: a measured duration, or a
/// request count whose time is estimated from the pace so far; and what the plan's target
/// counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Planned {
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    /// The closed model: the plan's target is users, not a rate.
    pub users: bool,
}

impl Planned {
    /// What the panel shows of a run's plan: its length, and whether it counts users.
    pub fn of(plan: &herd_engine::Plan) -> Planned {
        Planned {
            duration: plan.duration.or(plan.length()),
            requests: plan.requests,
            users: matches!(plan.load, herd_engine::Load::Closed { .. }),
        }
    }
}

/// The last whole second, as the panel shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LastSecond {
    pub rps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// What the plan asked for in it.
    pub target: Option<f64>,
}

/// Everything the panel shows, so that drawing it is a pure function.
#[derive(Clone, Debug, PartialEq)]
pub struct Now<'a> {
    pub elapsed: Duration,
    pub requests: u64,
    pub errors: u64,
    pub last: Option<LastSecond>,
    pub recent: &'a [f64],
    pub planned: Planned,
}

impl Live {
    /// Shows the panel only when both stdout and stderr are terminals.
    pub fn new(quiet: bool) -> Self {
        Live {
            on: !quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
            shown: 0,
            planned: Planned::default(),
            recent: VecDeque::with_capacity(SPARK),
            last: None,
        }
    }

    /// Adds the time remaining and the plan's unit to the panel.
    pub fn planned(mut self, planned: Planned) -> Self {
        self.planned = planned;
        self
    }

    pub fn update(&mut self, p: &Progress) {
        if !self.on {
            return;
        }
        // Only whole seconds are samples: a drain's few answers are not a rate that happened.
        for r in p.closed.iter().filter(|r| r.whole) {
            let s = &r.second;
            if self.recent.len() == SPARK {
                self.recent.pop_front();
            }
            self.recent.push_back(s.requests() as f64);
            self.last = Some(LastSecond {
                rps: s.requests() as f64,
                p50_ms: s.latency.value_at_quantile(0.50) as f64 / 1e3,
                p99_ms: s.latency.value_at_quantile(0.99) as f64 / 1e3,
                target: r.target,
            });
        }
        let recent: Vec<f64> = self.recent.iter().copied().collect();
        let lines = panel(&Now {
            elapsed: p.elapsed,
            requests: p.requests,
            errors: p.errors,
            last: self.last,
            recent: &recent,
            planned: self.planned,
        });
        let width = columns();
        let mut out = self.back();
        for l in &lines {
            out.push_str("\x1b[2K");
            out.extend(l.chars().take(width.saturating_sub(1)));
            out.push('\n');
        }
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(out.as_bytes());
        let _ = err.flush();
        self.shown = lines.len();
    }

    pub fn clear(&mut self) {
        if self.shown > 0 {
            let out = self.back() + "\x1b[J";
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(out.as_bytes());
            let _ = err.flush();
            self.shown = 0;
        }
    }

    /// Back to the panel's first line.
    fn back(&self) -> String {
        if self.shown == 0 {
            String::new()
        } else {
            format!("\x1b[{}F", self.shown)
        }
    }
}

/// The terminal's width (lines longer than it would wrap and break the redraw).
fn columns() -> usize {
    // SAFETY: TIOCGWINSZ fills the `winsize` passed, and stderr is open.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) };
    if got == 0 && ws.ws_col > 0 {
        ws.ws_col as usize
    } else {
        80
    }
}

impl crate::Sink for Live {
    fn progress(&mut self, p: &Progress) {
        self.update(p);
    }

    /// Above the panel: cleared, the note written, the panel drawn again at the next update.
    fn note(&mut self, text: &str) -> bool {
        if !self.on {
            return false;
        }
        self.clear();
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
        true
    }

    fn finished(&mut self) {
        self.clear();
    }
}

/// The panel's lines, a pure function of what the run reported so far.
pub fn panel(now: &Now) -> Vec<String> {
    let left = match remaining(now.elapsed, now.requests, now.planned) {
        Some(d) => format!(" ({} left)", clock(d)),
        None => String::new(),
    };
    let of = now
        .planned
        .duration
        .map(|d| format!(" of {}", clock(d)))
        .unwrap_or_default();
    let errors = if now.requests > 0 && now.errors > 0 {
        format!(
            " ({})",
            percent(100.0 * now.errors as f64 / now.requests as f64)
        )
    } else {
        String::new()
    };
    let mut lines = vec![format!(
        "  {}{of}{left}   {} requests   {} errors{errors}",
        clock(now.elapsed),
        count(now.requests),
        count(now.errors),
    )];
    lines.push(match now.last {
        Some(s) => {
            let plan = match (s.target, now.planned.users) {
                (Some(t), true) => format!("   plan {} users", rate(t)),
                (Some(t), false) if t > 0.0 => {
                    format!("   plan {} ({})", rate(t), percent(100.0 * s.rps / t))
                }
                _ => String::new(),
            };
            format!(
                "  {} req/s{plan}   p50 {}   p99 {}   (last second)",
                rate(s.rps),
                duration_ms(s.p50_ms),
                duration_ms(s.p99_ms),
            )
        }
        None => "  - req/s   p50 -   p99 -   (no whole second yet)".to_owned(),
    });
    if !now.recent.is_empty() {
        lines.push(format!(
            "  {}  req/s, the last {} s",
            sparkline(now.recent),
            now.recent.len()
        ));
    }
    lines
}

/// Each value as a bar, the highest the tallest (all lowest when all are zero).
pub fn sparkline(values: &[f64]) -> String {
    let max = values.iter().copied().fold(0.0, f64::max);
    values
        .iter()
        .map(|v| {
            if max <= 0.0 {
                BARS[0]
            } else {
                BARS[((v / max) * 7.0).round().clamp(0.0, 7.0) as usize]
            }
        })
        .collect()
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
    fn the_panel_shows_time_left_the_rate_against_the_plan_and_a_sparkline() {
        let secs = Duration::from_secs;
        let recent = [1_000.0, 2_000.0, 0.0, 2_000.0];
        let timed = Planned {
            duration: Some(secs(300)),
            ..Planned::default()
        };
        let now = Now {
            elapsed: secs(15),
            requests: 1_234_567,
            errors: 1_002,
            last: Some(LastSecond {
                rps: 12_345.0,
                p50_ms: 0.85,
                p99_ms: 1.5,
                target: Some(12_500.0),
            }),
            recent: &recent,
            planned: timed,
        };
        assert_eq!(
            panel(&now),
            [
                "  15s of 5m00s (4m45s left)   1,234,567 requests   1,002 errors (0.0812%)",
                "  12,345 req/s   plan 12,500 (98.8%)   p50 850 us   p99 1.50 ms   (last second)",
                "  ▅█▁█  req/s, the last 4 s",
            ]
        );
        // A counted run: 1,000 of 4,000 in 10 s, so 30 s to go; nothing whole yet.
        let counted = Now {
            elapsed: secs(10),
            requests: 1_000,
            errors: 0,
            last: None,
            recent: &[],
            planned: Planned {
                requests: Some(4_000),
                ..Planned::default()
            },
        };
        assert_eq!(
            panel(&counted),
            [
                "  10s (30s left)   1,000 requests   0 errors",
                "  - req/s   p50 -   p99 -   (no whole second yet)",
            ]
        );
        // The closed model's plan is users; nothing planned, nothing left shown.
        let users = Now {
            last: Some(LastSecond {
                target: Some(50.0),
                ..now.last.unwrap()
            }),
            planned: Planned {
                users: true,
                ..Planned::default()
            },
            ..now.clone()
        };
        let lines = panel(&users);
        assert!(lines[1].contains("plan 50.0 users"), "{lines:?}");
        assert!(!lines[0].contains("left"), "{lines:?}");
        assert_eq!(sparkline(&[0.0, 0.0]), "▁▁");
        assert_eq!(clock(secs(3_723)), "1h02m03s");
    }
}
