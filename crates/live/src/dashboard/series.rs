//! A series of runs (`herd sweep`, `herd capacity`) on the dashboard and in a recording: the
//! run going on now, live as `herd run`'s, under a table of the levels finished so far that grows
//! level by level; at the end the page says so and offers the series' report.

use super::event::{Event, SecondEvent};
use super::record::Recording;
use super::view::Frame;
use super::Dashboard;
use crate::{Sink, SinkError, Start};
use herd_engine::Record;
use herd_report::html::esc;
use herd_result::format::{count, duration_ms, percent};
use herd_result::sweep::level_text;
use herd_result::{Model, RunConfig, Server};
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::sync::{Arc, Mutex};

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
    /// The step a run of the series plays, from its config: where a series' observer learns
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

/// A series' live outputs: the page (`--dashboard`) and the recording (`--record`), each told
/// every event.
#[derive(Clone)]
pub struct SeriesLive {
    outputs: Arc<Outputs>,
}

struct Outputs {
    board: Option<Dashboard>,
    record: Option<Mutex<Recording>>,
    /// The first write the recording could not make; the rest of it is left out.
    failed: Mutex<Option<SinkError>>,
}

impl Outputs {
    fn tell(&self, e: &Event) {
        if let Some(b) = &self.board {
            b.shared.change(|s| s.view.apply(e));
        }
        if let Some(r) = &self.record {
            let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
            if failed.is_none() {
                let mut r = r.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = r.write(e) {
                    r.close();
                    *failed = Some(e);
                }
            }
        }
    }
}

impl SeriesLive {
    /// The outputs of a series described by `levels` (its `what`, `unit` and `named`): the
    /// recording is created now, so a path that cannot be written stops the series before
    /// anything is sent.
    pub fn start(
        board: Option<Dashboard>,
        record: Option<Recording>,
        levels: Levels,
    ) -> Result<Self, SinkError> {
        let record = match record {
            Some(mut r) => {
                r.open()?;
                Some(Mutex::new(r))
            }
            None => None,
        };
        let outputs = Outputs {
            board,
            record,
            failed: Mutex::new(None),
        };
        outputs.tell(&Event::Series(levels));
        Ok(SeriesLive {
            outputs: Arc::new(outputs),
        })
    }

    /// The page's address, when there is one.
    pub fn url(&self) -> Option<String> {
        self.outputs.board.as_ref().map(Dashboard::url)
    }

    /// The sink of the series' next run: its seconds on the page and in the recording.
    pub fn step(&self) -> StepFeed {
        StepFeed {
            series: self.clone(),
            labels: herd_run::Labels::default(),
        }
    }

    /// A level finished: a row of the table.
    pub fn level(&self, row: LevelRow) {
        self.outputs.tell(&Event::Level(row));
    }

    /// The series ended: the page says so and offers `report` (the series' HTML report). The
    /// recording's error, if it could not be written.
    pub fn finish(&self, report: String, interrupted: bool) -> Option<SinkError> {
        if let Some(b) = &self.outputs.board {
            b.shared.change(|s| s.report = Some(report.into()));
        }
        self.outputs.tell(&Event::SeriesEnd { interrupted });
        if let Some(r) = &self.outputs.record {
            r.lock().unwrap_or_else(|e| e.into_inner()).close();
        }
        let mut failed = self
            .outputs
            .failed
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        failed.take()
    }

    /// Gives the browsers watching a moment to be told the series ended.
    pub fn linger(&self) {
        if let Some(b) = &self.outputs.board {
            b.shared.await_told(super::GRACE);
        }
    }
}

/// Feeds one run of a series to the series' page and recording.
pub struct StepFeed {
    series: SeriesLive,
    labels: herd_run::Labels,
}

impl Sink for StepFeed {
    fn start(&mut self, start: &Start) -> Result<(), SinkError> {
        self.labels = start.labels.clone();
        self.series.outputs.tell(&Event::Start(start.header()));
        Ok(())
    }

    fn record(&mut self, r: &Record, server: Option<&Server>) -> Result<(), SinkError> {
        let mut second = SecondEvent::new(r, &self.labels);
        second.line.server = server.cloned();
        self.series.outputs.tell(&Event::Second(second));
        Ok(())
    }
}

/// The page's view of a series: where it is, the levels so far, the run going on.
pub fn fragment(levels: &Levels, run: &Frame, report: &str) -> String {
    let mut out = String::new();
    let done = levels.rows.len();
    let (state, text) = match (levels.done, &levels.step) {
        (true, _) if levels.interrupted => (
            "finished",
            format!("Finished: stopped after {done} level(s). {report}"),
        ),
        (true, _) => ("finished", format!("Finished: {done} level(s). {report}")),
        (false, Some(step)) => (
            "running",
            format!("Running the step at {step}; {done} level(s) done."),
        ),
        (false, None) => ("running", "Starting…".to_owned()),
    };
    let _ = writeln!(out, "<p id=\"series\">{}</p>", esc(&levels.what));
    let _ = writeln!(
        out,
        "<p id=\"series-status\" class=\"{state}\" data-state=\"{state}\" data-levels=\"{done}\">{}</p>",
        esc(&text)
    );
    let target = if levels.named { "<th>target</th>" } else { "" };
    let _ = write!(
        out,
        "<table id=\"levels\"><thead><tr><th>asked</th>{target}<th>achieved</th><th>p50</th>\
         <th>p99</th><th>errors</th><th>verdict</th></tr></thead><tbody>"
    );
    if levels.rows.is_empty() {
        out.push_str("<tr><td colspan=\"7\">none finished yet</td></tr>");
    }
    for r in &levels.rows {
        let target = if levels.named {
            format!("<td>{}</td>", esc(&r.target))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<tr class=\"level\"><td>{}</td>{target}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.asked),
            esc(&r.achieved),
            duration_ms(r.p50_ms),
            duration_ms(r.p99_ms),
            percent(r.errors_percent),
            esc(&r.verdict),
        );
    }
    out.push_str("</tbody></table>\n");
    if let (false, Some(step)) = (levels.done, &levels.step) {
        let _ = writeln!(out, "<section id=\"step\"><h2>Now: {}</h2>", esc(step));
        out.push_str(&super::html::run_fragment(run, ""));
        out.push_str("</section>\n");
    }
    out
}
