//! What a watch saw, as data: each process target's series, each endpoint's, on one origin.

use crate::exporter::{Gap, Series};
use crate::process::{Gauges, Note, ProcessSample, ProcessTarget};
use std::time::Instant;

/// Everything watched about one process target.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessSeries {
    pub target: ProcessTarget,
    /// The pid asked for, or the oldest process of the name (nginx's master).
    pub pid: u32,
    /// Every process counted at some point.
    pub pids: Vec<u32>,
    /// The roots of the separate process trees a name matched (nginx's master for one nginx);
    /// more than one means unrelated processes were summed. Empty for a pid.
    pub trees: Vec<u32>,
    /// The pid a name was narrowed to (`--watch-parent`).
    pub parent: Option<u32>,
    /// The first reading, before the first interval; `None` if the process was already gone.
    pub start: Option<Gauges>,
    pub samples: Vec<ProcessSample>,
    pub notes: Vec<Note>,
    pub notes_dropped: usize,
}

/// Everything kept from one endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct ExporterSeries {
    pub url: String,
    /// The selectors, as written back.
    pub metrics: Vec<String>,
    pub scrapes: u64,
    pub gaps: Vec<Gap>,
    pub series: Vec<Series>,
    pub series_dropped: usize,
}

/// What a watch saw, with the instant its times count from.
#[derive(Clone, Debug, PartialEq)]
pub struct Observations {
    pub origin: Instant,
    pub processes: Vec<ProcessSeries>,
    pub exporters: Vec<ExporterSeries>,
}

impl Observations {
    /// Seconds from the origin to `at`, negative before it (during a warm-up).
    pub fn t(&self, at: Instant) -> f64 {
        seconds_since(self.origin, at)
    }
}

/// Signed seconds from `origin` to `at`.
pub fn seconds_since(origin: Instant, at: Instant) -> f64 {
    match at.checked_duration_since(origin) {
        Some(d) => d.as_secs_f64(),
        None => -origin.duration_since(at).as_secs_f64(),
    }
}
