//! `herd capacity`'s search: the pure state machine that says what to probe next
//! ([`Search`], with the rule for how many requests a verdict needs in [`evidence`]), and the
//! loop that runs the probes it asks for ([`capacity`]) and puts the answer together
//! ([`result`]).

pub mod evidence;
mod flags;
mod search;

pub use evidence::{ObjectiveEvidence, SloEvidence, Verdict, TAIL_SAMPLES};
pub use flags::{CapacityFlags, NOT_SHARDED};
pub use search::{Action, Judged, Probe, Search, SearchConfig, GENERATOR_RETRIES};

use crate::pause;
use herd_engine::Control;
use herd_result::capacity::{
    measured, sentence, sentence_in, CapacityResult, Outcome, ProbeRecord, Slo,
};
use herd_result::knee::knee;
use herd_result::{GeneratorVerdict, Kind, Model, RunResult};
use herd_run::{Length, Level, RunError, Runs, Sink, SoFar, Stepped};
use std::sync::Arc;
use std::time::Duration;

/// A capacity search as asked: what it loads, in which model, and how it searches.
#[derive(Clone, Debug)]
pub struct CapacitySpec {
    /// The URL or workload file, as the result names it.
    pub target: String,
    /// Open: levels are rates; closed: users (then `search.users` is set too).
    pub model: Model,
    pub search: SearchConfig,
    /// Pause between probes, so one probe's backlog does not spill into the next.
    pub cooldown: Duration,
}

/// Runs the probes the search asks for, one after another, until it ends, Ctrl-C (`control`)
/// or a run fails. The result holds every probe that ran; the error, when there is one, says
/// why the rest did not.
pub fn capacity(
    spec: CapacitySpec,
    runs: &dyn Runs,
    control: &Arc<Control>,
    sink: &mut dyn Sink,
) -> (CapacityResult, Option<RunError>) {
    let model = spec.model;
    let slo = spec.search.slo.clone();
    let mut search = Search::new(spec.search);
    let mut done = Vec::new();
    let mut action = search.next(None);
    let mut failure = None;
    while let Action::Probe(p) = action.clone() {
        if !done.is_empty() && !pause(spec.cooldown, control) {
            break;
        }
        sink.step(done.len() + 1, p.level);
        let mut run = match runs.run(
            Level::of(model, p.level),
            Length::Time(p.duration),
            control,
            sink,
        ) {
            Ok(r) => r,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        if control.is_cancelled() {
            break;
        }
        let m = measured(&run);
        action = search.next(Some(&m));
        let judged = search.history().last().expect("a probe was judged");
        let n = search.history().len();
        let step = Stepped::Probed {
            n,
            judged,
            measured: &m,
        };
        sink.stepped(&step, &mut run);
        done.push(run);
        sink.so_far(SoFar::Capacity(&|| {
            // Interrupted: no answer from `action`, the probes as judged so far.
            let r = result(
                spec.target.clone(),
                model,
                slo.clone(),
                &action,
                search.history(),
                done.clone(),
                true,
            );
            with_unit(r, runs.rate_unit())
        }));
        if nothing_answers(&done) {
            // Every request failed before a response and none ever got one (nothing listens, or
            // nothing answers): longer or other probes would only say so again.
            break;
        }
    }
    let interrupted = control.is_cancelled();
    let r = result(
        spec.target,
        model,
        slo,
        &action,
        search.history(),
        done,
        interrupted,
    );
    (with_unit(r, runs.rate_unit()), failure)
}

/// The result's sentence in the unit a level counts (`iterations/s` for a workload).
fn with_unit(mut r: CapacityResult, unit: &str) -> CapacityResult {
    if unit != "req/s" {
        r.sentence = sentence_in(&r, unit);
    }
    r
}

/// No probe got a response although requests were sent: there is no server to search.
fn nothing_answers(done: &[RunResult]) -> bool {
    let (completed, errors) = done.iter().fold((0, 0), |(c, e), r| {
        (c + r.totals.completed, e + r.totals.errors)
    });
    herd_result::answers::nothing_answered(completed) && errors > 0
}

/// Puts the result together from the search's end and its probes' runs, in order.
pub fn result(
    target: String,
    model: Model,
    slo: Slo,
    end: &Action,
    judged: &[Judged],
    runs: Vec<RunResult>,
    interrupted: bool,
) -> CapacityResult {
    let probes: Vec<ProbeRecord> = judged
        .iter()
        .zip(runs)
        .map(|(j, result)| ProbeRecord {
            level: j.probe.level,
            purpose: j.probe.purpose,
            duration_s: j.probe.duration.as_secs_f64(),
            held: j.held(),
            broke: j.broke.clone(),
            too_few: j.too_few,
            generator: result.generator.verdict,
            result,
        })
        .collect();
    let points: Vec<(f64, f64)> = probes
        .iter()
        .filter(|p| p.generator == GeneratorVerdict::Ok && p.too_few.is_none())
        .map(|p| (p.level, measured(&p.result).goodput))
        .collect();
    let knee = knee(model, &points);
    let (found, ceiling, undecided) = match end {
        Action::Done { level, ceiling } if !interrupted => (Some(*level), *ceiling, None),
        Action::Undecided(u) if !interrupted => (None, None, Some(u.clone())),
        _ => (None, None, None),
    };
    let mut r = CapacityResult {
        herd_version: herd_result::HERD_VERSION.to_owned(),
        schema_version: herd_result::SCHEMA_VERSION,
        kind: Kind::Capacity,
        target,
        model,
        capacity_rps: found.filter(|_| model == Model::Open),
        capacity_users: found
            .filter(|_| model == Model::Closed)
            .map(|u| u.round() as u64),
        ceiling,
        outcome: match (&undecided, found) {
            _ if interrupted => Outcome::Interrupted,
            (Some(_), _) | (None, None) => Outcome::Undecided,
            (None, Some(x)) if x <= 0.0 => Outcome::Unmet,
            (None, Some(_)) => Outcome::Found,
        },
        undecided,
        knee,
        sentence: String::new(),
        interrupted,
        probes,
        slo,
    };
    r.sentence = sentence(&r);
    r
}

/// How a capacity search ended: interrupted, then nothing answered (`answered` false), then no
/// level met the SLO, then an answer, or why there is none.
pub fn conclude(result: &CapacityResult, answered: bool) -> herd_run::Conclusion {
    use herd_result::capacity::{Outcome, Undecided};
    use herd_run::Conclusion;
    if result.interrupted {
        Conclusion::Interrupted
    } else if !answered {
        Conclusion::NothingAnswered
    } else {
        match (result.outcome, &result.undecided) {
            (Outcome::Unmet, _) => Conclusion::SloUnmet,
            (_, None) => Conclusion::Ok,
            (_, Some(Undecided::GeneratorLimited { .. })) => Conclusion::GeneratorLimited,
            (_, Some(_)) => Conclusion::Undecided,
        }
    }
}
