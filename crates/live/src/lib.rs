//! What a run shows and writes while it goes on: the engine's collector hands every closed
//! second to the caller as a [`Record`]; each output is a [`Sink`] of that one stream (ripgrep's
//! printer implementing the searcher's `Sink`): the live panel on a terminal, the web
//! dashboard and its recording, the JSON written as the run goes, the per-second CSV, the
//! HdrHistogram interval log, the metrics endpoint and its pushes (Prometheus remote write,
//! OTLP), and at the end JUnit and Markdown summaries. Sinks run on the collector's thread, never
//! on a worker's; one with its own thread (a pusher) tells the user things through
//! [`Sink::notes`], shown above the live panel.
//!
//! ```no_run
//! use herd_live::{OutputSpec, Outputs};
//! # fn go(prepared: herd_run::Prepared) {
//! let spec = OutputSpec {
//!     json: Some("result.json".into()),
//!     ..OutputSpec::default()
//! };
//! let control = std::sync::Arc::new(herd_engine::Control::new());
//! let mut outputs = Outputs::open(&spec, &control, None).expect("outputs that can be written");
//! let mut sinks = outputs.for_run(Default::default());
//! let mut result = prepared.run(None, &control, &mut sinks).expect("a run");
//! let problems = sinks.finish(&mut result);
//! # }
//! ```

pub mod csv;
pub mod dashboard;
pub mod hlog;
pub mod json;
pub mod junit;
pub mod line;
pub mod markdown;
pub mod metrics;
mod outputs;
pub mod paths;
pub mod requests_log;
mod steps;

pub use outputs::{OutputSpec, Outputs};
pub use steps::StepOutputs;

use herd_engine::{Progress, Record, RequestsLog};
use herd_result::{RunConfig, RunResult, Server, ShardHeader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// What every sink learns before the first second: what runs, and when its measurement starts.
#[derive(Clone, Debug)]
pub struct Start {
    /// Tells this run's series from others' in a shared Prometheus.
    pub run_id: String,
    pub target: String,
    pub config: RunConfig,
    /// When the measurement starts (after the warm-up).
    pub measure_start: SystemTime,
    /// The absolute second the timeline starts in, when it is not `measure_start`'s: a shard's
    /// shared start instant, so shards line up.
    pub timeline_start_unix_s: Option<u64>,
    pub shard: Option<ShardHeader>,
    /// What the indices in the records name: request names, scenarios, checks.
    pub labels: herd_run::Labels,
    /// The run's place in a series (`herd sweep`, `herd capacity`), from 1: the `step` label
    /// of its metrics.
    pub step: Option<usize>,
}

/// A sink that could not write: which output, and why.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {}: {source}", path.display())]
pub struct SinkError {
    pub flag: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl Start {
    /// The first line of a stream of this run's seconds (`--json`, `--record`).
    pub fn header(&self) -> herd_result::stream::StreamHeader {
        let mut header = herd_result::stream::StreamHeader::new(
            self.target.clone(),
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

impl SinkError {
    pub fn new(flag: &'static str, path: &Path, source: std::io::Error) -> Self {
        SinkError {
            flag,
            path: path.to_owned(),
            source,
        }
    }
}

/// One output of a run, fed the stream of closed seconds.
pub trait Sink {
    /// Where each measured request goes, when this output writes them (`--requests-log`):
    /// asked once before the engine starts.
    fn requests_log(
        &mut self,
        _labels: &herd_run::Labels,
    ) -> Result<Option<Arc<RequestsLog>>, SinkError> {
        Ok(None)
    }
    /// The run starts: told before its first second.
    fn start(&mut self, _start: &Start) -> Result<(), SinkError> {
        Ok(())
    }
    /// About once a second, the live numbers (the records in it are also handed to
    /// [`Sink::record`]).
    fn progress(&mut self, _progress: &Progress) {}
    /// One closed second, in order, with the watched server's readings that came with it.
    fn record(&mut self, _record: &Record, _server: Option<&Server>) -> Result<(), SinkError> {
        Ok(())
    }
    /// What this sink has to tell the user now (a push that failed), taken once: shown above
    /// the live panel, or on standard error.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Shows `text` to the user; false when this sink has nowhere to show it.
    fn note(&mut self, _text: &str) -> bool {
        false
    }
    /// The engine is done; the result is being built.
    /// A workload's fault came into force or was removed (`herd_run::Observer::fault`).
    fn fault(&mut self, _window: &herd_result::FaultWindow) {}
    fn finished(&mut self) {}
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
}

/// Every sink of a run: the one [`herd_run::Observer`] of it. A sink that fails is reported
/// once and left out of the rest of the stream; the others, and the run, go on.
#[derive(Default)]
pub struct Sinks {
    sinks: Vec<(Box<dyn Sink>, bool)>,
    problems: Vec<SinkError>,
    /// Tells this run's series from others' in a shared Prometheus.
    run_id: String,
    /// The run's place in a series, from 1.
    step: Option<usize>,
}

impl Sinks {
    pub fn new() -> Self {
        Sinks {
            run_id: Start::new_run_id(),
            ..Sinks::default()
        }
    }

    /// The sinks of step `step` (from 1) of a series whose runs share `run_id`.
    pub fn of_step(run_id: String, step: usize) -> Self {
        Sinks {
            run_id,
            step: Some(step),
            ..Sinks::default()
        }
    }

    pub fn add(&mut self, sink: impl Sink + 'static) {
        self.sinks.push((Box::new(sink), true));
    }

    pub fn start(&mut self, start: &Start) {
        self.each(|s| s.start(start));
    }

    /// Lets each sink add to `result` (the requests log's lines), then hands it to every sink;
    /// what could not be written, one error each.
    pub fn finish(&mut self, result: &mut RunResult) -> Vec<SinkError> {
        for (sink, ok) in &mut self.sinks {
            match sink.amend(result) {
                Err(e) if *ok => {
                    result.warnings.push(format!("cannot write {e}"));
                    self.problems.push(e);
                    *ok = false;
                }
                _ => {}
            }
        }
        // A sink that failed in the stream still gets the end: the JSON's final result replaces
        // a stream cut short by a full disk once space came back.
        for (sink, ok) in &mut self.sinks {
            match sink.finish(result) {
                Err(e) if *ok => self.problems.push(e),
                _ => {}
            }
        }
        std::mem::take(&mut self.problems)
    }

    /// Lets each sink [`Sink::linger`], after the results are written and shown.
    pub fn linger(&mut self) {
        for (sink, _) in &mut self.sinks {
            sink.linger();
        }
    }

    fn each(&mut self, mut f: impl FnMut(&mut dyn Sink) -> Result<(), SinkError>) {
        for (sink, ok) in &mut self.sinks {
            if !*ok {
                continue;
            }
            if let Err(e) = f(sink.as_mut()) {
                *ok = false;
                self.problems.push(e);
            }
        }
    }
}

impl herd_run::Observer for Sinks {
    fn requests_log(&mut self, labels: &herd_run::Labels) -> Option<Arc<RequestsLog>> {
        let mut tap = None;
        self.each(|s| {
            if let Some(log) = s.requests_log(labels)? {
                tap = Some(log);
            }
            Ok(())
        });
        tap
    }

    fn start(&mut self, s: &herd_run::RunStart) {
        let start = Start {
            run_id: self.run_id.clone(),
            target: s.config.url.clone(),
            config: s.config.clone(),
            measure_start: s.measure_start,
            timeline_start_unix_s: s.timeline_start_unix_s,
            shard: s.shard.clone(),
            labels: s.labels.clone(),
            step: self.step,
        };
        Sinks::start(self, &start);
    }

    fn progress(&mut self, p: &Progress) {
        // A note from a sink's own thread printed straight to the terminal would be drawn over
        // by the live panel a second later: it goes through the panel instead.
        let notes: Vec<String> = self.sinks.iter_mut().flat_map(|(s, _)| s.notes()).collect();
        for text in notes {
            if !self.sinks.iter_mut().any(|(s, _)| s.note(&text)) {
                eprintln!("{text}");
            }
        }
        for (sink, _) in &mut self.sinks {
            sink.progress(p);
        }
    }

    fn record(&mut self, r: &Record, server: Option<&Server>) {
        self.each(|s| s.record(r, server));
    }

    fn fault(&mut self, window: &herd_result::FaultWindow) {
        for (sink, _) in &mut self.sinks {
            sink.fault(window);
        }
    }

    fn finished(&mut self) {
        for (sink, _) in &mut self.sinks {
            sink.finished();
        }
    }

    fn note(&mut self, line: &str) {
        let text = format!("herd: {line}");
        if !self.sinks.iter_mut().any(|(s, _)| s.note(&text)) {
            eprintln!("{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_run::Observer;
    use std::sync::{Arc, Mutex};

    /// A pusher with one warning, or a panel that shows what it is handed.
    struct Noting {
        pending: Vec<String>,
        shown: Option<Arc<Mutex<Vec<String>>>>,
    }

    impl Sink for Noting {
        fn notes(&mut self) -> Vec<String> {
            std::mem::take(&mut self.pending)
        }
        fn note(&mut self, text: &str) -> bool {
            match &self.shown {
                Some(s) => {
                    s.lock().unwrap().push(text.to_owned());
                    true
                }
                None => false,
            }
        }
    }

    #[test]
    fn a_sinks_note_is_shown_once_through_the_panel() {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let mut sinks = Sinks::new();
        sinks.add(Noting {
            pending: Vec::new(),
            shown: Some(Arc::clone(&shown)),
        });
        sinks.add(Noting {
            pending: vec!["a push failed".to_owned()],
            shown: None,
        });
        let progress = Progress {
            measure_start: std::time::SystemTime::now(),
            elapsed: std::time::Duration::from_secs(1),
            requests: 0,
            errors: 0,
            last: None,
            closed: Vec::new(),
            held: 0,
        };
        sinks.progress(&progress);
        sinks.progress(&progress);
        assert_eq!(*shown.lock().unwrap(), ["a push failed"]);
    }
}
