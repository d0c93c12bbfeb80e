//! A series of runs (`herd sweep`, `herd capacity`) on the dashboard and in a recording: the
//! run going on now, live as `herd run`'s, under a table of the levels finished so far that grows
//! level by level; at the end the page says so and offers the series' report.

use super::event::{Event, LevelRow, Levels, SecondEvent};
use super::recording::Recording;
use super::Dashboard;
use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::Server;
use std::sync::{Arc, Mutex};

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
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
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
