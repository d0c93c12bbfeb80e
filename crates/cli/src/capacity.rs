//! `herd capacity`: the highest rate (or the most users) a target sustains within an SLO. The
//! search and the loop that runs its probes are herd-series' (`herd_series::capacity`), the
//! flags herd-args'; this prints the probes as they are judged.

use crate::exit::{self, Exit};
use crate::interrupt;
use crate::series::{runs_for, step_outputs, Length, Level};
use herd_args::capacity::CapacityArgs;
use herd_engine::Control;
use herd_report::series_text;
use herd_result::capacity::{CapacityResult, Slo};
use herd_result::RunResult;
use herd_run::{Sink, Stepped};
use herd_series::capacity::{capacity, CapacitySpec};
use std::io::Write;
use std::sync::Arc;

/// Searches for the highest level within the SLO, a probe table line as each probe is
/// judged; then the answer, the files and the exit code.
pub fn cmd(a: &CapacityArgs) -> Result<i32, Exit> {
    let (spec, runs, slo) = check(a)?;
    let unit = runs.rate_unit();
    let model = spec.model;
    if let Some(said) = herd_run::nothing_listens(&a.url) {
        // A search would probe for tens of seconds to learn what one connection says.
        println!("{said}");
        return Ok(exit::NO_RESPONSE);
    }
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let what = format!("herd capacity {}  SLO: {}", a.url, slo.phrase());
    let levels = herd_live::dashboard::Levels {
        what,
        unit: unit.to_owned(),
        ..Default::default()
    };
    let outputs = crate::outputs::open(&a.outputs, &control, Some(levels))?;
    println!(
        "herd capacity {}  SLO: {}  ({} model)",
        a.url,
        slo.phrase(),
        model.name()
    );
    println!("{}", series_text::probe_header());
    let table = ProbeTable {
        users: a.users,
        unit,
    };
    let mut steps = step_outputs(
        outputs,
        &a.outputs,
        "capacity",
        herd_live::LevelWords {
            model,
            streams: None,
            unit,
        },
    )
    .with(table);
    let (result, failure) = capacity(spec, &*runs, &control, &mut steps);
    let interrupted = result.interrupted;
    let report = || herd_report::html::render_capacity(&result);
    let unwritten = steps.end(report, interrupted);
    let answered = print_answer(&result, &a.url, unit);
    steps.write_json(&result).map_err(Exit::bad_input)?;
    steps.outputs.linger();
    if let Some(e) = failure {
        return Err(Exit::from(e));
    }
    if !unwritten.is_empty() {
        return Err(Exit::bad_input(unwritten.join("\n")));
    }
    Ok(exit::code(herd_series::capacity::conclude(
        &result, answered,
    )))
}

/// Every problem with the flags, the target and the outputs, before anything is sent: the
/// search's spec, the run it probes and the SLO.
fn check(a: &CapacityArgs) -> Result<(CapacitySpec, Box<dyn herd_run::Runs>, Slo), Exit> {
    let flags = a.flags();
    let spec = flags.spec();
    let mut problems = spec.as_ref().err().cloned().unwrap_or_default();
    if a.series.reach.shard.given() {
        problems.push(herd_series::capacity::NOT_SHARDED.to_owned());
    }
    let level = Level::of(flags.model(), flags.range().0);
    let runs = runs_for(
        &a.url,
        &a.series,
        level,
        Length::Time(a.probe_duration),
        None,
    )
    .map_err(|e| problems.push(e.message))
    .ok();
    problems.extend(crate::outputs::check(&a.outputs, true, false));
    match (spec, runs) {
        (Ok(spec), Some(runs)) if problems.is_empty() => {
            let slo = spec.search.slo.clone();
            Ok((spec, runs, slo))
        }
        _ => Err(Exit::bad_input(problems.join("\n"))),
    }
}

/// After the probe table: the warnings, the answer, the knee and the listen queue. Whether
/// anything answered.
fn print_answer(result: &CapacityResult, url: &str, unit: &str) -> bool {
    let (lines, answered) = series_text::capacity_answer(result, url, unit);
    println!();
    for l in lines {
        println!("{l}");
    }
    answered
}

/// The probe table on stdout, a line per probe as it is judged.
struct ProbeTable {
    users: bool,
    /// What the open model's level counts: `req/s`, or `iterations/s` for a workload.
    unit: &'static str,
}

impl Sink for ProbeTable {
    fn stepped(&mut self, step: &Stepped, _run: &mut RunResult) {
        let Stepped::Probed {
            n,
            judged: j,
            measured: m,
        } = *step
        else {
            return;
        };
        let p = &j.probe;
        let level = series_text::probe_level(self.users, p.level, self.unit);
        println!(
            "{}",
            series_text::probe_line(&series_text::ProbeLine {
                n,
                purpose: p.purpose,
                level: &level,
                duration_s: p.duration.as_secs_f64(),
                goodput: m.goodput,
                error_percent: m.error_percent,
                p99_ms: (m.latency_ms.count > 0).then_some(m.latency_ms.p99),
                verdict: &j.verdict(),
            })
        );
        let _ = std::io::stdout().flush();
    }
}
