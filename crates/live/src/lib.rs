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
//! use herd_live::{Sinks, Start, json::JsonStream};
//! # fn go(prepared: herd_run::Prepared, start: Start) -> Result<(), herd_live::SinkError> {
//! let mut sinks = Sinks::new();
//! sinks.add(JsonStream::create("result.json".as_ref())?);
//! sinks.start(&start);
//! let control = std::sync::Arc::new(herd_engine::Control::new());
//! let result = prepared.run(None, &control, &mut sinks).expect("a run");
//! let problems = sinks.finish(&result);
//! # Ok(()) }
//! ```

pub mod csv;
pub mod dashboard;
pub mod hlog;
pub mod json;
pub mod junit;
pub mod line;
pub mod markdown;
pub mod metrics;
pub mod requests_log;

use herd_engine::{Progress, Record};
use herd_result::{RunConfig, RunResult, ShardHeader};
use std::path::{Path, PathBuf};
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
    /// The run is about to start.
    fn start(&mut self, _start: &Start) -> Result<(), SinkError> {
        Ok(())
    }
    /// About once a second, the live numbers (the records in it are also handed to
    /// [`Sink::record`]).
    fn progress(&mut self, _progress: &Progress) {}
    /// One closed second, in order.
    fn record(&mut self, _record: &Record) -> Result<(), SinkError> {
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
    /// The watched server's readings since the last call, told before the seconds they go with.
    fn watched(&mut self, _fresh: &herd_result::Server) {}
    /// The engine is done; the result is being built.
    fn finished(&mut self) {}
    /// The run's full result.
    fn finish(&mut self, _result: &RunResult) -> Result<(), SinkError> {
        Ok(())
    }
    /// Everything is written and shown: a sink others read from (a metrics endpoint) may stay
    /// up a little for its readers.
    fn linger(&mut self) {}
}

/// Every sink of a run. A sink that fails is reported once and left out of the rest of the
/// stream; the others, and the run, go on.
#[derive(Default)]
pub struct Sinks {
    sinks: Vec<(Box<dyn Sink>, bool)>,
    problems: Vec<SinkError>,
}

impl Sinks {
    pub fn new() -> Self {
        Sinks::default()
    }

    pub fn add(&mut self, sink: impl Sink + 'static) {
        self.sinks.push((Box::new(sink), true));
    }

    pub fn start(&mut self, start: &Start) {
        self.each(|s| s.start(start));
    }

    /// Hands `result` to every sink; what could not be written, one error each.
    pub fn finish(&mut self, result: &RunResult) -> Vec<SinkError> {
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
        for r in &p.closed {
            self.each(|s| s.record(r));
        }
    }

    fn watched(&mut self, fresh: &herd_result::Server) {
        for (sink, _) in &mut self.sinks {
            sink.watched(fresh);
        }
    }

    fn finished(&mut self) {
        for (sink, _) in &mut self.sinks {
            sink.finished();
        }
    }
}

/// The watched server's readings a stream sink has been told and not yet written: they go with
/// the next second it writes.
#[derive(Default)]
pub(crate) struct Watched(Option<herd_result::Server>);

impl Watched {
    pub(crate) fn add(&mut self, fresh: &herd_result::Server) {
        match &mut self.0 {
            Some(s) => s.append(fresh.clone()),
            None => self.0 = Some(fresh.clone()),
        }
    }

    pub(crate) fn take(&mut self) -> Option<herd_result::Server> {
        self.0.take()
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
