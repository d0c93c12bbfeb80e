//! The outputs of a series' runs (`herd sweep`'s steps, `herd capacity`'s probes), the one
//! [`Sink`] a series tells its steps and their runs to: each run's [`Sinks`] made as its step
//! begins ([`Outputs::for_step`]: files numbered by run, metrics labelled by step), finished as
//! it ends, its row on the series' page, the series' own sinks told of each step (its table
//! on stdout), and the series' JSON rewritten after each step, so a kill leaves what ran. What
//! cannot be written is kept for the end: a failing output never stops the series.

use crate::dashboard::LevelRow;
use crate::{Outputs, RunStart, Sink, SinkError, Sinks};
use herd_engine::{Progress, Record, RequestsLog};
use herd_report::series_text;
use herd_result::format::rate;
use herd_result::sweep::{row_of, too_short};
use herd_result::{FaultWindow, Model, RunResult, Server};
use herd_run::{Labels, SoFar, Stepped};
use std::path::PathBuf;
use std::sync::Arc;

/// Labels a run with its step (from 1) and level, before its outputs have it.
type Label = Box<dyn FnMut(&mut RunResult, usize, f64)>;
/// Keeps a run once its outputs have it (a store of runs); what went wrong, for the end.
type Keep = Box<dyn FnMut(&RunResult) -> Result<(), String>>;

/// How a series' levels read, on its page as in its table: the model, HTTP/2's streams per
/// connection (a closed level is then connections of that many), and what the open model's
/// level counts (`req/s`, or `iterations/s` for a workload).
#[derive(Clone, Copy, Debug)]
pub struct LevelWords {
    pub model: Model,
    pub streams: Option<usize>,
    pub unit: &'static str,
}

impl LevelWords {
    /// A step that ended, as a row of the series' page.
    fn row(&self, step: &Stepped, run: &RunResult) -> LevelRow {
        match *step {
            Stepped::Swept { level, target } => {
                let row = row_of(run);
                let x = row.extra.as_ref();
                LevelRow {
                    asked: series_text::step_asked(self.model, self.streams, self.unit, level),
                    target: target.name.clone(),
                    achieved: format!("{} replies/s", rate(row.avg_rep_rate)),
                    p50_ms: x.map_or(0.0, |x| x.p50),
                    p99_ms: x.map_or(0.0, |x| x.p99),
                    errors_percent: row.errors,
                    verdict: series_text::step_verdict(&row, too_short(run)).to_owned(),
                }
            }
            Stepped::Probed {
                judged: j,
                measured: m,
                ..
            } => {
                let users = self.model == Model::Closed;
                let level = series_text::probe_level(users, j.probe.level, self.unit);
                LevelRow {
                    asked: series_text::probe_asked(&level, j.probe.purpose),
                    target: String::new(),
                    achieved: format!("{} good/s", rate(m.goodput)),
                    p50_ms: m.latency_ms.p50,
                    p99_ms: m.latency_ms.p99,
                    errors_percent: m.error_percent,
                    verdict: j.verdict(),
                }
            }
        }
    }
}

pub struct StepOutputs {
    pub outputs: Outputs,
    /// `--json`: the series' result, rewritten whole after each step and at the end.
    json: Option<PathBuf>,
    label: Label,
    keep: Keep,
    words: LevelWords,
    /// The series' own sinks (its table), told of the steps.
    series: Vec<Box<dyn Sink>>,
    /// The outputs of the step running now.
    current: Option<Sinks>,
    step: usize,
    problems: Vec<String>,
}

impl StepOutputs {
    /// A series' outputs: `outputs` opened for it, its JSON at `json`, each run labelled and
    /// kept as the command says, its levels in `words` on its page.
    pub fn new(
        outputs: Outputs,
        json: Option<PathBuf>,
        label: impl FnMut(&mut RunResult, usize, f64) + 'static,
        keep: impl FnMut(&RunResult) -> Result<(), String> + 'static,
        words: LevelWords,
    ) -> StepOutputs {
        StepOutputs {
            outputs,
            json,
            label: Box::new(label),
            keep: Box::new(keep),
            words,
            series: Vec::new(),
            current: None,
            step: 0,
            problems: Vec::new(),
        }
    }

    /// Adds a sink of the whole series (its table on stdout): told of each step as it begins
    /// and ends, before the step's outputs finish, and of the series so far.
    pub fn with(mut self, sink: impl Sink + 'static) -> StepOutputs {
        self.series.push(Box::new(sink));
        self
    }

    /// The series so far (`--json`), in place of what the file held: a kill leaves it.
    fn write_so_far(&mut self, series: SoFar) {
        let Some(p) = &self.json else { return };
        let written = match series {
            SoFar::Sweep(r) => crate::json::write_final(p, &r()),
            SoFar::Capacity(r) => crate::json::write_final(p, &r()),
        };
        if let Err(e) = written {
            let problem = format!("cannot write {}: {e}", p.display());
            if !self.problems.contains(&problem) {
                self.problems.push(problem);
            }
        }
    }

    /// The series' result at its end (`--json`), whole or not at all.
    pub fn write_json(&self, result: &impl serde::Serialize) -> Result<(), String> {
        let Some(p) = &self.json else { return Ok(()) };
        crate::json::write_final(p, result)
            .map_err(|e| format!("cannot write {}: {e}", p.display()))
    }

    /// The series ended: its page offers `report`; what could not be written, for the end.
    pub fn end(&mut self, report: impl FnOnce() -> String, interrupted: bool) -> Vec<String> {
        self.outputs.end_series(report, interrupted);
        std::mem::take(&mut self.problems)
    }
}

/// The step's events go to its outputs; the series' own sinks hear of the steps.
impl Sink for StepOutputs {
    fn step(&mut self, n: usize, level: f64) {
        self.step = n;
        self.current = Some(self.outputs.for_step(n));
        for s in &mut self.series {
            s.step(n, level);
        }
    }

    fn requests_log(&mut self, labels: &Labels) -> Result<Option<Arc<RequestsLog>>, SinkError> {
        self.current
            .as_mut()
            .map_or(Ok(None), |s| s.requests_log(labels))
    }

    fn start(&mut self, start: &RunStart) -> Result<(), SinkError> {
        self.current.as_mut().map_or(Ok(()), |s| s.start(start))
    }

    fn progress(&mut self, progress: &Progress) {
        if let Some(s) = &mut self.current {
            s.progress(progress);
        }
    }

    fn record(&mut self, record: &Record, server: Option<&Server>) -> Result<(), SinkError> {
        self.current
            .as_mut()
            .map_or(Ok(()), |s| s.record(record, server))
    }

    fn fault(&mut self, window: &FaultWindow) {
        if let Some(s) = &mut self.current {
            s.fault(window);
        }
    }

    fn finished(&mut self) {
        if let Some(s) = &mut self.current {
            s.finished();
        }
    }

    fn note(&mut self, text: &str) -> bool {
        self.current.as_mut().is_some_and(|s| s.note(text))
    }

    /// The step ended: the series' sinks are told (its table's line), the run is labelled with
    /// its step, its outputs finish (adding to `run` what they wrote), it is kept, and the page
    /// shows its row.
    fn stepped(&mut self, step: &Stepped, run: &mut RunResult) {
        for s in &mut self.series {
            s.stepped(step, run);
        }
        (self.label)(run, self.step, step.level());
        if let Some(mut sinks) = self.current.take() {
            let problems = sinks.end(run);
            self.problems
                .extend(problems.iter().map(|e| format!("cannot write {e}")));
        }
        if let Err(e) = (self.keep)(run) {
            self.problems.push(e);
        }
        let words = self.words;
        self.outputs.level(|| words.row(step, run));
    }

    fn so_far(&mut self, series: SoFar) {
        for s in &mut self.series {
            s.so_far(series);
        }
        self.write_so_far(series);
    }
}
