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
    /// A series of runs begins (a sweep, a capacity search): each of its runs then starts
    /// with [`Event::Start`] and goes on as a run does, without an end of its own.
    Series(super::series::Levels),
    /// A level of the series finished.
    Level(super::series::LevelRow),
    /// The series ended; `interrupted`: before its last level.
    SeriesEnd { interrupted: bool },
}

/// A closed second: the line a `--json` stream writes for it (its load, names, checks), and
/// what the plan asked for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SecondEvent {
    #[serde(flatten)]
    pub line: StreamLine,
    /// Arrivals per second (open model) or users (closed model) the plan asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
}

impl SecondEvent {
    /// Record `r`, its indices named by `labels` (the run's start tells them).
    pub fn new(r: &Record, labels: &herd_run::Labels) -> Self {
        SecondEvent {
            line: crate::json::stream_line(r, labels),
            target: r.target,
        }
    }
}
