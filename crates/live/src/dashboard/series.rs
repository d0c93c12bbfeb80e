//! The dashboard of a series of runs (`herd sweep --dashboard`, `herd capacity --dashboard`):
//! the run going on now, live as `herd run`'s, under a table of the levels finished so far that
//! grows level by level; at the end the page says so and offers the series' report.

use super::event::{Event, SecondEvent};
use super::server::Shared;
use super::view::{Frame, View};
use super::{Dashboard, Options};
use crate::{SinkError, Watched};
use herd_engine::Progress;
use herd_report::html::esc;
use herd_result::format::{count, duration_ms, percent};
use herd_result::stream::StreamHeader;
use herd_result::sweep::level_text;
use herd_result::{RunConfig, Server};
use std::fmt::Write;
use std::sync::Arc;

/// What the page says of the series.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    /// The command, e.g. `herd sweep http://127.0.0.1:8080/ at 100, 200 req/s`.
    pub what: String,
    /// The step running now, e.g. `200 req/s`.
    pub step: Option<String>,
    pub rows: Vec<LevelRow>,
    /// Several targets side by side: the table has a column naming them.
    pub named: bool,
    pub done: bool,
    /// Ctrl-C (or the page's stop) ended the series before its last level.
    pub interrupted: bool,
}

/// One finished level (one target's run at it, for a sweep of several).
#[derive(Clone, Debug, Default)]
pub struct LevelRow {
    /// The level asked for, with its unit: `200 req/s`, `50 users`.
    pub asked: String,
    pub target: String,
    /// What it achieved, with its unit: `198 req/s`.
    pub achieved: String,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors_percent: f64,
    /// The series' word on the level: `ok`, `held`, `broke: p99 < 100ms`...
    pub verdict: String,
}

/// The dashboard of a series: one page for every run of it.
pub struct SeriesDashboard {
    board: Dashboard,
    /// What the open model's level counts: `req/s`, or `iterations/s` for a workload.
    unit: &'static str,
}

impl SeriesDashboard {
    /// Listens now, so a taken port stops the series before anything is sent.
    pub fn listen(
        o: Options,
        what: String,
        named: bool,
        unit: &'static str,
    ) -> Result<Self, SinkError> {
        let board = Dashboard::listen(o)?;
        board.shared.change(|s| {
            s.series = Some(Levels {
                what,
                named,
                ..Levels::default()
            })
        });
        Ok(SeriesDashboard { board, unit })
    }

    pub fn url(&self) -> String {
        self.board.url()
    }

    /// What follows the next run: the page, then `inner` (the progress line).
    pub fn step(&self, inner: Box<dyn herd_run::Observer>) -> StepFeed {
        StepFeed {
            shared: Arc::clone(&self.board.shared),
            unit: self.unit,
            inner,
            labels: herd_run::Labels::default(),
            watched: Watched::default(),
        }
    }

    /// A level finished: a row of the table.
    pub fn level(&self, row: LevelRow) {
        self.board.shared.change(|s| {
            if let Some(levels) = &mut s.series {
                levels.rows.push(row);
            }
        });
    }

    /// The series ended: the page says so and offers `report` (the series' HTML report).
    pub fn finish(&self, report: String, interrupted: bool) {
        self.board.shared.change(|s| {
            if let Some(levels) = &mut s.series {
                levels.done = true;
                levels.interrupted = interrupted;
                levels.step = None;
            }
            s.report = Some(report.into());
        });
    }

    /// Gives the browsers watching a moment to be told the series ended.
    pub fn linger(&self) {
        self.board.shared.await_told(super::GRACE);
    }
}

/// Feeds one run of a series to the page, and to the observer it wraps.
pub struct StepFeed {
    shared: Arc<Shared>,
    unit: &'static str,
    inner: Box<dyn herd_run::Observer>,
    labels: herd_run::Labels,
    watched: Watched,
}

impl herd_run::Observer for StepFeed {
    fn begins(&mut self, config: &RunConfig, labels: &herd_run::Labels) {
        self.labels = labels.clone();
        let header = StreamHeader::new(
            config.url.clone(),
            config.clone(),
            std::time::SystemTime::now(),
        );
        // The run's config is where a series' observer learns the level of the run.
        let level = match (config.model, config.rate) {
            (herd_result::Model::Open, Some(r)) => format!("{} {}", level_text(r), self.unit),
            _ => format!("{} users", count(config.connections)),
        };
        let step = match &self.shared.lock().series {
            Some(l) if l.named => format!("{level}, {}", config.url),
            _ => level,
        };
        self.shared.change(|s| {
            s.view = View::default();
            s.view.apply(&Event::Start(header));
            if let Some(levels) = &mut s.series {
                levels.step = Some(step);
            }
        });
        self.inner.begins(config, labels);
    }

    fn starting(&mut self, shard: Option<&herd_result::ShardHeader>, start: Option<u64>) {
        self.inner.starting(shard, start);
    }

    fn watched(&mut self, fresh: &Server) {
        self.watched.add(fresh);
        self.inner.watched(fresh);
    }

    fn progress(&mut self, p: &Progress) {
        for r in &p.closed {
            let mut second = SecondEvent::new(r, &self.labels);
            second.line.server = self.watched.take();
            self.shared.change(|s| s.view.apply(&Event::Second(second)));
        }
        self.inner.progress(p);
    }

    fn finished(&mut self) {
        self.inner.finished();
    }

    fn note(&mut self, line: &str) {
        self.inner.note(line);
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
        out.push_str(&super::html::fragment(run, ""));
        out.push_str("</section>\n");
    }
    out
}
