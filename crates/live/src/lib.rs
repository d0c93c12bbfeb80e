//! What a run shows and writes while it goes on: the engine's collector hands every closed
//! second to the caller as a [`Record`]; each output is a [`Sink`] of that one stream (herd-run's
//! one trait for a run's events and a series' steps; ripgrep's printer implementing the
//! searcher's `Sink`): the live panel on a terminal, the web
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
//! let problems = sinks.end(&mut result);
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
pub use steps::{LevelWords, StepOutputs};

pub use herd_run::{RunStart, Sink, SinkError};

use herd_engine::{Progress, Record, RequestsLog};
use herd_result::{RunResult, Server};
use herd_run::{Labels, SoFar, Stepped};
use std::sync::Arc;

/// Every sink of a run, itself the one [`Sink`] the run is told to. A sink that fails is
/// reported once and left out of the rest of the stream; the others, and the run, go on.
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
            run_id: RunStart::new_run_id(),
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

    /// Lets each sink add to `result` (the requests log's lines), then hands it to every sink;
    /// what could not be written, one error each.
    pub fn end(&mut self, result: &mut RunResult) -> Vec<SinkError> {
        let _ = Sink::amend(self, result);
        let _ = Sink::finish(self, result);
        std::mem::take(&mut self.problems)
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

impl Sink for Sinks {
    fn step(&mut self, n: usize, level: f64) {
        for (sink, _) in &mut self.sinks {
            sink.step(n, level);
        }
    }

    fn requests_log(&mut self, labels: &Labels) -> Result<Option<Arc<RequestsLog>>, SinkError> {
        let mut tap = None;
        self.each(|s| {
            if let Some(log) = s.requests_log(labels)? {
                tap = Some(log);
            }
            Ok(())
        });
        Ok(tap)
    }

    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        let start = RunStart {
            run_id: self.run_id.clone(),
            step: self.step,
            ..start.clone()
        };
        self.each(|s| s.start(&start));
        Ok(())
    }

    fn progress(&mut self, p: &Progress) {
        // A note from a sink's own thread printed straight to the terminal would be drawn over
        // by the live panel a second later: it goes through the panel instead.
        let notes: Vec<String> = self.sinks.iter_mut().flat_map(|(s, _)| s.notes()).collect();
        for text in notes {
            if !self.note(&text) {
                eprintln!("{text}");
            }
        }
        for (sink, _) in &mut self.sinks {
            sink.progress(p);
        }
    }

    fn record(&mut self, r: &Record, server: Option<&Server>) -> Result<(), SinkError> {
        self.each(|s| s.record(r, server));
        Ok(())
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

    fn note(&mut self, text: &str) -> bool {
        self.sinks.iter_mut().any(|(s, _)| s.note(text))
    }

    fn amend(&mut self, result: &mut RunResult) -> Result<(), SinkError> {
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
        Ok(())
    }

    fn finish(&mut self, result: &RunResult) -> Result<(), SinkError> {
        // A sink that failed in the stream still gets the end: the JSON's final result replaces
        // a stream cut short by a full disk once space came back.
        for (sink, ok) in &mut self.sinks {
            match sink.finish(result) {
                Err(e) if *ok => self.problems.push(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Lets each sink linger, after the results are written and shown.
    fn linger(&mut self) {
        for (sink, _) in &mut self.sinks {
            sink.linger();
        }
    }

    fn stepped(&mut self, step: &Stepped, run: &mut RunResult) {
        for (sink, _) in &mut self.sinks {
            sink.stepped(step, run);
        }
    }

    fn so_far(&mut self, series: SoFar) {
        for (sink, _) in &mut self.sinks {
            sink.so_far(series);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
