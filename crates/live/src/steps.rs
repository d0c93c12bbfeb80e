//! The outputs of a series' runs (`herd sweep`'s steps, `herd capacity`'s probes): each run's
//! [`Sinks`] made as it begins ([`Outputs::for_step`]: files numbered by run, metrics labelled
//! by step), finished as it ends, its row on the series' page, and the series' JSON rewritten
//! after each run, so a kill leaves what ran. What cannot be written is kept for the end: a
//! failing output never stops the series.

use crate::dashboard::LevelRow;
use crate::{Outputs, Sinks};
use herd_result::RunResult;
use std::path::PathBuf;

/// Labels a run with its step (from 1) and level, before its outputs have it.
type Label = Box<dyn FnMut(&mut RunResult, usize, f64)>;
/// Keeps a run once its outputs have it (a store of runs); what went wrong, for the end.
type Keep = Box<dyn FnMut(&RunResult) -> Result<(), String>>;

pub struct StepOutputs {
    pub outputs: Outputs,
    /// `--json`: the series' result, rewritten whole after each step and at the end.
    json: Option<PathBuf>,
    label: Label,
    keep: Keep,
    current: Option<Sinks>,
    runs: usize,
    problems: Vec<String>,
}

impl StepOutputs {
    /// A series' outputs: `outputs` opened for it, its JSON at `json`, each run labelled and
    /// kept as the command says.
    pub fn new(
        outputs: Outputs,
        json: Option<PathBuf>,
        label: impl FnMut(&mut RunResult, usize, f64) + 'static,
        keep: impl FnMut(&RunResult) -> Result<(), String> + 'static,
    ) -> StepOutputs {
        StepOutputs {
            outputs,
            json,
            label: Box::new(label),
            keep: Box::new(keep),
            current: None,
            runs: 0,
            problems: Vec::new(),
        }
    }

    /// A run begins: its outputs take its stream.
    pub fn begin(&mut self) -> &mut dyn herd_run::Observer {
        self.runs += 1;
        self.current.insert(self.outputs.for_step(self.runs))
    }

    /// A run at `level` ended: it is labelled with its step, its outputs finish (adding to
    /// `run` what they wrote), it is kept, and the page shows its `row` (made only when there
    /// is a page).
    pub fn ended(&mut self, run: &mut RunResult, level: f64, row: impl FnOnce() -> LevelRow) {
        (self.label)(run, self.runs, level);
        if let Some(mut sinks) = self.current.take() {
            let problems = sinks.finish(run);
            self.problems
                .extend(problems.iter().map(|e| format!("cannot write {e}")));
        }
        if let Err(e) = (self.keep)(run) {
            self.problems.push(e);
        }
        self.outputs.level(row);
    }

    /// The series so far (`--json`), in place of what the file held: a kill leaves it.
    pub fn so_far<R: serde::Serialize>(&mut self, result: &dyn Fn() -> R) {
        if let Some(p) = &self.json {
            if let Err(e) = crate::json::write_final(p, &result()) {
                let problem = format!("cannot write {}: {e}", p.display());
                if !self.problems.contains(&problem) {
                    self.problems.push(problem);
                }
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
