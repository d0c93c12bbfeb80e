//! `herd sweep`'s loop: the same targets at rising levels, one step per level, until the last
//! level, the stop rule ([`Saturation`]), Ctrl-C or a failed run.

mod flags;
mod saturation;

pub use flags::{mixed_units, SweepFlags};
pub use saturation::Saturation;

use crate::pause;
use herd_engine::Control;
use herd_result::sweep::{row_of, Row, StopRule, SweepConfig, SweepResult, SweepStep, SweepTarget};
use herd_result::{Kind, Model, HERD_VERSION, SCHEMA_VERSION};
use herd_run::{Length, Level, RunError, Runs, Sink, SoFar, Stepped};
use std::sync::Arc;
use std::time::Duration;

/// A sweep as asked: its targets, levels and how each step runs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// Open: levels are arrival rates; closed: concurrent users.
    pub model: Model,
    /// In the order of the `runs` given to [`sweep`].
    pub targets: Vec<SweepTarget>,
    /// Every level, in order (closed: whole users).
    pub levels: Vec<f64>,
    /// Each step's length: a time, or a number of requests.
    pub length: Length,
    /// Recorded in the result; the runs already carry it.
    pub calls_per_conn: Option<u64>,
    /// Recorded in the result; the runs already carry it.
    pub timeout: Duration,
    /// Pause between steps, so one step's backlog does not spill into the next.
    pub cooldown: Duration,
    pub stop: StopRule,
}

impl SweepSpec {
    /// The sweep `flags` ask of `targets` (each run's deadline `timeout`, recorded in the
    /// result; a `sharded` sweep runs every level).
    pub fn of(
        flags: &SweepFlags,
        targets: &[crate::levels::NamedTarget],
        timeout: Duration,
        sharded: bool,
    ) -> Result<SweepSpec, String> {
        let (model, levels) = flags.levels()?;
        let targets = targets.iter().map(|t| SweepTarget {
            name: t.name.clone(),
            url: t.url.clone(),
            named: t.named,
        });
        Ok(SweepSpec {
            model,
            targets: targets.collect(),
            levels,
            length: flags.length(),
            calls_per_conn: flags.calls_per_conn,
            timeout,
            cooldown: flags.cooldown,
            stop: flags.stop_rule(sharded)?,
        })
    }
}

/// Runs every target at each level in turn. The result holds every complete step; the error,
/// when a run failed, says why the later ones did not run.
pub fn sweep(
    spec: SweepSpec,
    runs: &[Box<dyn Runs>],
    control: &Arc<Control>,
    sink: &mut dyn Sink,
) -> (SweepResult, Option<RunError>) {
    let model = spec.model;
    let length = spec.length;
    let mut result = SweepResult {
        herd_version: HERD_VERSION.to_owned(),
        schema_version: SCHEMA_VERSION,
        kind: Kind::Sweep,
        model,
        targets: spec.targets,
        config: SweepConfig {
            levels: spec.levels,
            step_duration_s: match length {
                Length::Time(d) => Some(d.as_secs_f64()),
                Length::Requests(_) => None,
            },
            requests_per_step: match length {
                Length::Requests(n) => Some(n),
                Length::Time(_) => None,
            },
            calls_per_conn: spec.calls_per_conn,
            timeout_s: spec.timeout.as_secs_f64(),
            cooldown_s: spec.cooldown.as_secs_f64(),
            stop: spec.stop.clone(),
        },
        steps: Vec::new(),
        stopped_early: None,
        interrupted: false,
    };
    let mut saturation = Saturation::new(spec.stop, result.targets.len());
    let mut failure = None;
    let mut n = 0;
    let levels = result.config.levels.clone();
    'levels: for (i, &level) in levels.iter().enumerate() {
        if i > 0 && !pause(spec.cooldown, control) {
            // Ctrl-C in the pause between steps is an interrupt like any other: the later
            // levels did not run, and the result and exit code must say so.
            result.interrupted = true;
            break;
        }
        let mut step = SweepStep {
            level,
            runs: Vec::new(),
        };
        for (t, r) in result.targets.iter().zip(runs) {
            if control.is_cancelled() {
                break;
            }
            n += 1;
            sink.step(n, level);
            let mut run = match r.run(Level::of(model, level), length, control, sink) {
                Ok(run) => run,
                Err(e) => {
                    failure = Some(e);
                    break 'levels;
                }
            };
            sink.stepped(&Stepped::Swept { level, target: t }, &mut run);
            step.runs.push(run);
        }
        let complete = step.runs.len() == result.targets.len();
        if complete {
            let rows: Vec<Row> = step.runs.iter().map(row_of).collect();
            let runs: Vec<_> = step
                .runs
                .iter()
                .map(herd_result::capacity::measured)
                .collect();
            result.stopped_early = saturation.observe(&rows, &runs);
        }
        if control.is_cancelled() {
            result.interrupted = true;
        }
        if complete {
            result.steps.push(step);
            sink.so_far(SoFar::Sweep(&|| SweepResult {
                interrupted: true,
                ..result.clone()
            }));
        }
        if result.interrupted || result.stopped_early.is_some() {
            break;
        }
    }
    if result.stopped_early.is_some() && result.steps.len() == levels.len() {
        result.stopped_early = None; // it ended at its last level anyway
    }
    (result, failure)
}

/// How a sweep ended: interrupted, then shards missing from a merged sweep, then nothing
/// answered (it measured no server: `answered` is false), else it ran.
pub fn conclude(result: &SweepResult, partial: bool, answered: bool) -> herd_run::Conclusion {
    use herd_run::Conclusion;
    if result.interrupted {
        Conclusion::Interrupted
    } else if partial {
        Conclusion::Partial
    } else if !answered {
        Conclusion::NothingAnswered
    } else {
        Conclusion::Ok
    }
}
