//! What the dashboard is told, in order: the run's start, each closed second, the end. The
//! same events go to the browsers (as the view they make) and, one JSON line each, to a
//! recording (`--record`) that `herd report` turns into the same page afterwards.

use herd_engine::Record;
use herd_result::stream::{StreamHeader, StreamLine};
use herd_result::RunResult;
use serde::{Deserialize, Serialize};

/// One event of a run, as a line of a recording.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// What runs: the header a `--json` stream starts with.
    Start(StreamHeader),
    /// One closed second.
    Second(SecondEvent),
    /// The run's full result.
    End(Box<RunResult>),
}

/// A closed second: the line a `--json` stream writes for it, and what the plan asked for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SecondEvent {
    #[serde(flatten)]
    pub line: StreamLine,
    /// Arrivals per second (open model) or users (closed model) the plan asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
}

impl SecondEvent {
    pub fn new(r: &Record) -> Self {
        let health = r.health.as_ref().map(herd_run::generator_sample);
        // The line carries the second's load (scheduled, dropped, in flight), as --json's does.
        let mut line = StreamLine::new(&r.second, r.whole, health);
        line.scheduled = r.load.scheduled;
        line.dropped = r.load.dropped;
        line.in_flight = r.load.in_flight;
        SecondEvent {
            line,
            target: r.target,
        }
    }
}
