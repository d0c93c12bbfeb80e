//! `--json FILE` written as the run goes: a header line, then one line per closed second,
//! flushed as each second closes; at the end the file is replaced, in one rename, by the full
//! result. A run killed at hour 23 leaves its first 23 hours, which `herd report`, `compare` and
//! `merge` read as a partial result (`herd_result::stream`).

use crate::{RunStart, Sink, SinkError};
use herd_engine::Record;
use herd_result::stream::{name_lines, CheckLine, ScenarioLine, StreamLine};
use herd_result::{write_json, RunResult};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

const FLAG: &str = "--json";

pub struct JsonStream {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    labels: herd_run::Labels,
}

impl JsonStream {
    /// The stream to `path`; nothing is written before [`Sink::start`], so a run refused before
    /// its start leaves an old result where it was.
    pub fn create(path: &Path) -> Self {
        JsonStream {
            path: path.to_owned(),
            out: None,
            labels: herd_run::Labels::default(),
        }
    }

    fn line(&mut self, value: &impl serde::Serialize) -> Result<(), SinkError> {
        let err = |e| SinkError::new(FLAG, &self.path, e);
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        serde_json::to_writer(&mut *out, value).map_err(|e| err(e.into()))?;
        out.write_all(b"\n").map_err(err)?;
        // Each second reaches the file as it closes: a kill loses at most the second in
        // progress. One write a second costs nothing against the run.
        out.flush().map_err(err)
    }
}

impl Sink for JsonStream {
    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        let file = File::create(&self.path).map_err(|e| SinkError::new(FLAG, &self.path, e))?;
        self.out = Some(BufWriter::new(file));
        self.labels = start.labels.clone();
        self.line(&start.header())
    }

    fn record(
        &mut self,
        r: &Record,
        server: Option<&herd_result::Server>,
    ) -> Result<(), SinkError> {
        let mut line = stream_line(r, &self.labels);
        line.server = server.cloned();
        self.line(&line)
    }

    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        self.out = None;
        write_final(&self.path, result).map_err(|e| SinkError::new(FLAG, &self.path, e))
    }
}

/// Record `r` as a line of the stream (`--json`, `--record`), its indices named by `labels`.
pub(crate) fn stream_line(r: &Record, labels: &herd_run::Labels) -> StreamLine {
    let health = r.health.as_ref().map(herd_run::generator_sample);
    let mut line = StreamLine::new(&r.second, r.whole, health);
    line.scheduled = r.load.scheduled;
    line.dropped = r.load.dropped;
    line.in_flight = r.load.in_flight;
    line.by_name = name_lines(&r.second.by_name, |i| labels.name(i).to_owned());
    line.scenarios = (r.script.iterations.iter())
        .map(|&(i, iterations)| ScenarioLine {
            name: labels.scenario(i).to_owned(),
            iterations,
        })
        .collect();
    line.checks = (r.script.checks.iter())
        .map(|&(i, passes, fails)| CheckLine {
            name: labels.check(i).to_owned(),
            passes,
            fails,
        })
        .collect();
    line
}

/// Writes `result` (a run's, or a series' so far) to `path` whole or not at all: into a file
/// beside it, then renamed over it, so a reader (or a kill) never meets half a result.
pub fn write_final(path: &Path, result: &impl serde::Serialize) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".herd-partial");
    let temp = path.with_file_name(name);
    let mut out = BufWriter::new(File::create(&temp)?);
    write_json(result, &mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&temp, path)
}
