//! The one stream of a run's events, and of a series' steps around its runs: a [`Sink`] takes
//! it, whether it is one output (a file, the panel, the metrics endpoint), every output of a
//! run (herd-live's `Sinks`), a series' outputs and tables, or `()`. herd-run tells a run's
//! events; herd-series tells each step's beginning and end, and the run of the step goes to
//! the same sink in between.

use crate::Labels;
use herd_engine::{Progress, Record, RequestsLog};
use herd_result::capacity::{CapacityResult, Judged, Measured};
use herd_result::sweep::{SweepResult, SweepTarget};
use herd_result::{FaultWindow, RunConfig, RunResult, Server, ShardHeader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// How a run starts, told once before its first second: what runs, as its result will
/// describe it, and when its measurement starts by the engine's own instants.
#[derive(Clone, Debug)]
pub struct RunStart {
    pub config: RunConfig,
    /// What the indices in the records name: request names, scenarios, checks.
    pub labels: Labels,
    /// When the measurement starts (the schedule's instant 0 plus the warm-up), as the engine
    /// placed it: in the past for a shard that started late.
    pub measure_start: SystemTime,
    /// A shard's header, and the absolute second its timeline starts in (the shared start
    /// instant), both `None` for a run that is not sharded.
    pub shard: Option<ShardHeader>,
    pub timeline_start_unix_s: Option<u64>,
    /// Tells this run's series from others' in a shared Prometheus: the outputs of a command
    /// (herd-live's `Sinks`) set it, one for all the runs of a series; empty before.
    pub run_id: String,
    /// The run's place in a series (`herd sweep`, `herd capacity`), from 1: the `step` label
    /// of its metrics, set by the series' outputs.
    pub step: Option<usize>,
}

impl RunStart {
    /// The first line of a stream of this run's seconds (`--json`, `--record`).
    pub fn header(&self) -> herd_result::stream::StreamHeader {
        let mut header = herd_result::stream::StreamHeader::new(
            self.config.url.clone(),
            self.config.clone(),
            self.measure_start,
        );
        header.shard = self.shard.clone();
        if self.timeline_start_unix_s.is_some() {
            header.timeline_start_unix_s = self.timeline_start_unix_s;
        }
        header
    }

    /// A run id from the clock and the process: unique enough to tell runs apart.
    pub fn new_run_id() -> String {
        let t = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        format!("{:x}-{:x}", t.as_secs(), std::process::id())
    }
}

/// How a step of a series ended: what its tables say of it.
#[derive(Clone, Copy, Debug)]
pub enum Stepped<'a> {
    /// A sweep ran `target` at `level`.
    Swept { level: f64, target: &'a SweepTarget },
    /// A capacity search ran its `n`th probe (from 1) and judged it on `measured`.
    Probed {
        n: usize,
        judged: &'a Judged,
        measured: &'a Measured,
    },
}

impl Stepped<'_> {
    /// The level the step ran at.
    pub fn level(&self) -> f64 {
        match self {
            Stepped::Swept { level, .. } => *level,
            Stepped::Probed { judged, .. } => judged.probe.level,
        }
    }
}

/// A series as it would read if nothing more ran (marked interrupted: its later steps did not
/// run), made only when a sink asks.
#[derive(Clone, Copy)]
pub enum SoFar<'a> {
    Sweep(&'a dyn Fn() -> SweepResult),
    Capacity(&'a dyn Fn() -> CapacityResult),
}

/// An output that could not write: which output, and why.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {}: {source}", path.display())]
pub struct SinkError {
    pub flag: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl SinkError {
    pub fn new(flag: &'static str, path: &Path, source: std::io::Error) -> Self {
        SinkError {
            flag,
            path: path.to_owned(),
            source,
        }
    }
}

/// What takes the stream of a run's events, in order, and of a series' steps around its runs
/// (ripgrep's printer implementing the searcher's `Sink`). Every method does nothing by
/// default; `()` ignores it all.
///
/// A series tells [`Sink::step`], then its run's events from [`Sink::requests_log`] to
/// [`Sink::finished`], then [`Sink::stepped`], and after each complete step [`Sink::so_far`].
/// The command ends each run it made with [`Sink::amend`], [`Sink::finish`] and
/// [`Sink::linger`]. Sinks run on the collector's thread, never on a worker's.
pub trait Sink {
    /// A series' step begins: the `n`th run of the series (from 1), at `level`; its run's
    /// events follow.
    fn step(&mut self, _n: usize, _level: f64) {}
    /// Where each measured request goes, when this output writes them (`--requests-log`):
    /// asked once before the engine starts; herd-run hands it to the run's workers.
    fn requests_log(&mut self, _labels: &Labels) -> Result<Option<Arc<RequestsLog>>, SinkError> {
        Ok(None)
    }
    /// The run starts: told once, before its first [`Sink::record`].
    fn start(&mut self, _start: &RunStart) -> Result<(), SinkError> {
        Ok(())
    }
    /// About once a second while the run goes on, the live numbers; the seconds closed in it
    /// follow as [`Sink::record`]s.
    fn progress(&mut self, _progress: &Progress) {}
    /// One closed second, in order, with the watched server's readings taken since the last
    /// second (`--watch-*`), joined once by herd-run.
    fn record(&mut self, _record: &Record, _server: Option<&Server>) -> Result<(), SinkError> {
        Ok(())
    }
    /// A workload's fault came into force (its `end_s` the planned end) or was removed (its
    /// `end_s` as it happened), told in the order the proxy's API confirmed them; `name` is the
    /// same in both. Thresholds and recovery come with the result.
    fn fault(&mut self, _window: &FaultWindow) {}
    /// The engine has finished; the result is being built.
    fn finished(&mut self) {}
    /// What this sink has to tell the user now (a push that failed), taken once: shown above
    /// the live panel, or on standard error.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Shows `text` to the user (a shard's wait, a clock warning); false when this sink has
    /// nowhere to show it, and the teller writes it on standard error.
    fn note(&mut self, _text: &str) -> bool {
        false
    }
    /// What this output adds to the result before every output gets it (the requests log's
    /// file and lines).
    fn amend(&mut self, _result: &mut RunResult) -> Result<(), SinkError> {
        Ok(())
    }
    /// The run's full result.
    fn finish(&mut self, _result: &RunResult) -> Result<(), SinkError> {
        Ok(())
    }
    /// Everything is written and shown: a sink others read from (a metrics endpoint) may stay
    /// up a little for its readers.
    fn linger(&mut self) {}
    /// A series' step ended with `run`; the step's outputs may add to it (its files, its label).
    fn stepped(&mut self, _step: &Stepped, _run: &mut RunResult) {}
    /// After each complete step, the series so far: `--json` is rewritten from it as the series
    /// goes, so a kill leaves every step that ran, readable by `herd report`.
    fn so_far(&mut self, _series: SoFar) {}
}

impl Sink for () {}

/// Tells the person running herd `line` through `sink`, or on standard error when it has
/// nowhere to show it.
pub fn tell(sink: &mut dyn Sink, line: &str) {
    let text = format!("herd: {line}");
    if !sink.note(&text) {
        eprintln!("{text}");
    }
}
