//! What the dashboard is told, in order: the run's start, each closed second, the end. The
//! same events go to the browsers (as the view they make) and, one JSON line each, to a
//! recording (`--record`) that `herd report` turns into the same page afterwards.

use herd_engine::Record;
use herd_result::format::count;
use herd_result::stream::{StreamHeader, StreamLine};
use herd_result::sweep::level_text;
use herd_result::{Model, RunConfig, RunResult};
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
    Series(Levels),
    /// A level of the series finished.
    Level(LevelRow),
    /// The series ended; `interrupted`: before its last level.
    SeriesEnd { interrupted: bool },
    /// A workload's fault came into force (its planned end) or was removed.
    Fault(herd_result::FaultWindow),
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

/// What the page says of the series.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Levels {
    /// The command, e.g. `herd sweep http://127.0.0.1:8080/ at 100,200`.
    pub what: String,
    /// What the open model's level counts: `req/s`, or `iterations/s` for a workload.
    pub unit: String,
    /// Several targets side by side: the table has a column naming them.
    #[serde(default)]
    pub named: bool,
    /// The step running now, e.g. `200 req/s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<LevelRow>,
    #[serde(default)]
    pub done: bool,
    /// Ctrl-C (or the page's stop) ended the series before its last level.
    #[serde(default)]
    pub interrupted: bool,
}

impl Levels {
    /// The step a run of the series plays, from its config: where the series' page learns
    /// the level of each run.
    pub fn step_of(&self, config: &RunConfig) -> String {
        let level = match (config.model, config.rate) {
            (Model::Open, Some(r)) => format!("{} {}", level_text(r), self.unit),
            _ => format!("{} users", count(config.connections)),
        };
        if self.named {
            format!("{level}, {}", config.url)
        } else {
            level
        }
    }
}

/// One finished level (one target's run at it, for a sweep of several).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LevelRow {
    /// The level asked for, with its unit: `200 req/s`, `50 users`.
    pub asked: String,
    #[serde(default)]
    pub target: String,
    /// What it achieved, with its unit: `198 replies/s`.
    pub achieved: String,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors_percent: f64,
    /// The series' word on the level: `ok`, `held`, `broke: p99 < 100ms`...
    pub verdict: String,
}
