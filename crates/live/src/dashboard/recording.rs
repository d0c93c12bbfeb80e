//! `--record FILE`: the dashboard's events as NDJSON, one line each, flushed as each second
//! closes (a run killed mid-way leaves every second before the kill), and [`read`], which
//! `herd report` uses to make the dashboard's page of it afterwards.

use super::event::{Event, SecondEvent};
use super::view::View;
use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::RunResult;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

const FLAG: &str = "--record";

pub struct Recording {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    labels: herd_run::Labels,
}

impl Recording {
    /// The recording to `path`, created at the start of the run.
    pub fn create(path: &Path) -> Self {
        Recording {
            path: path.to_owned(),
            out: None,
            labels: herd_run::Labels::default(),
        }
    }

    /// Creates the file: a series' recording opens before its first run starts.
    pub(crate) fn open(&mut self) -> Result<(), SinkError> {
        let file = File::create(&self.path).map_err(|e| SinkError::new(FLAG, &self.path, e))?;
        self.out = Some(BufWriter::new(file));
        Ok(())
    }

    /// Ends the file: nothing more is written.
    pub(crate) fn close(&mut self) {
        self.out = None;
    }

    pub(crate) fn write(&mut self, e: &Event) -> Result<(), SinkError> {
        let err = |e| SinkError::new(FLAG, &self.path, e);
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        serde_json::to_writer(&mut *out, e).map_err(|e| err(e.into()))?;
        out.write_all(b"\n").map_err(err)?;
        out.flush().map_err(err)
    }
}

impl Sink for Recording {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        self.open()?;
        self.labels = start.labels.clone();
        self.write(&Event::Start(start.header()))
    }

    fn record(
        &mut self,
        r: &Record,
        server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        let mut second = SecondEvent::new(r, &self.labels);
        second.line.server = server.cloned();
        self.write(&Event::Second(second))
    }

    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        let written = self.write(&Event::End(Box::new(result.clone())));
        self.out = None;
        written
    }
}

/// A recording that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: not an event of a herd recording: {source}")]
    Malformed {
        path: String,
        line: usize,
        source: serde_json::Error,
    },
}

/// Whether `text` starts as a recording does.
pub fn is_recording(text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    first.starts_with("{\"event\":\"start\"") || first.starts_with("{\"event\":\"series\"")
}

/// The view a recording describes, or `None` when `path` is not a recording. A line cut short
/// by a kill ends the recording; the seconds before it stand.
pub fn read(path: &Path) -> Result<Option<View>, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    if !is_recording(&text) {
        return Ok(None);
    }
    let mut view = View::default();
    for (n, line) in text.lines().enumerate() {
        match serde_json::from_str::<Event>(line) {
            Ok(e) => view.apply(&e),
            Err(e) if e.classify() == serde_json::error::Category::Eof => break,
            Err(source) => {
                return Err(ReadError::Malformed {
                    path: path.display().to_string(),
                    line: n + 1,
                    source,
                })
            }
        }
    }
    Ok(Some(view))
}
