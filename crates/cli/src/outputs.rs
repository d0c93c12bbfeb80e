//! The outputs every command that sends load shares (`run`, `replay`, `sweep`, `capacity`,
//! `demo`, a shard): herd-args' `OutputArgs` turned into herd-live's plain-data `OutputSpec`
//! (with herd's environment), whose `Outputs` make each run's sinks; the shard from the
//! environment; the end of a run, the summary and the exit code.

use crate::exit::{self, Exit};
use herd_args::outputs::OutputArgs;
use herd_args::shard::ShardArgs;
use herd_live::{OutputSpec, Outputs, Sink, Sinks};
use herd_result::RunResult;
use herd_run::shard::ShardRun;
use std::sync::Arc;
use std::time::SystemTime;

/// The outputs the flags ask for, as plain data: the OpenTelemetry variables of herd's
/// environment turn OTLP on without the flag, and Ctrl-C ends a lingering endpoint's wait.
pub fn spec(a: &OutputArgs) -> Result<OutputSpec, String> {
    let mut spec = a.spec(|name| std::env::var(name).ok())?;
    spec.interrupts = Some(crate::interrupt::signals);
    Ok(spec)
}

/// Every problem with the outputs (paths, the OTLP target, the store and the labels),
/// before anything is sent.
pub fn check(a: &OutputArgs, series: bool, sharded: bool) -> Vec<String> {
    let mut problems = match spec(a) {
        Ok(spec) => spec.check(series),
        Err(e) => vec![e],
    };
    problems.extend(crate::store_cmd::problems(&a.keep, sharded));
    problems
}

/// The outputs, checked and listening: the run stops before anything is sent otherwise.
pub fn open(
    a: &OutputArgs,
    control: &Arc<herd_engine::Control>,
    series: Option<herd_live::dashboard::Levels>,
) -> Result<Outputs, Exit> {
    let spec = spec(a).map_err(|e| Exit::bad_input(format!("{e}\nnothing was sent")))?;
    Outputs::open(&spec, control, series).map_err(Exit::bad_input)
}

/// The shard this instance plays (`--shard`, `--shard-from-env`), read from herd's environment
/// and clock.
pub fn shard(a: &ShardArgs) -> Result<Option<ShardRun>, Exit> {
    a.flags()
        .resolve(|v| std::env::var(v).ok(), SystemTime::now())
        .map_err(|p| Exit::bad_input(p.join("\n")))
}

/// A prepared run whose outputs can all be written, filed under the labels given; otherwise
/// every problem of both at once.
pub fn prepared(
    prepared: Result<herd_run::Prepared, herd_run::RunError>,
    outputs: &OutputArgs,
) -> Result<herd_run::Prepared, Exit> {
    let sharded = prepared.as_ref().is_ok_and(|p| p.shard().is_some());
    let mut problems = check(outputs, false, sharded);
    if !problems.is_empty() {
        problems.push("nothing was sent".to_owned());
    }
    match prepared {
        Ok(mut p) if problems.is_empty() => {
            p.set_labels(crate::store_cmd::labels(&outputs.keep)?);
            Ok(p)
        }
        Ok(_) => Err(Exit::bad_input(problems.join("\n"))),
        Err(e) if problems.is_empty() => Err(Exit::from(e)),
        Err(e) => {
            let first = Exit::from(e).message;
            Err(Exit::bad_input(format!("{first}\n{}", problems.join("\n"))))
        }
    }
}

/// Writes `text` to `path`, or says why it cannot.
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), Exit> {
    std::fs::write(path, text)
        .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", path.display())))
}

/// Refuses an output path given to `flag` that cannot be written, before any work is done (the
/// one check every command's outputs get).
pub fn check_path(flag: &str, path: Option<&std::path::Path>) -> Result<(), Exit> {
    match path {
        Some(p) => herd_live::paths::check_writable(flag, p).map_err(Exit::bad_input),
        None => Ok(()),
    }
}

/// The one end of every run: hands the result to every sink (the JSON first of all), prints
/// the summary, lets the listening outputs linger, and picks the exit code from how the run
/// ended. The files first: a summary that cannot be printed (`| head` closed the pipe) must not
/// cost the measurement.
pub fn finish(result: &mut RunResult, sinks: &mut Sinks) -> Result<i32, Exit> {
    let problems = sinks.end(result);
    print!("{}", herd_report::output::run_summary(result));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    sinks.linger();
    if !problems.is_empty() {
        let lines: Vec<String> = problems
            .iter()
            .map(|e| format!("cannot write {e}"))
            .collect();
        return Err(Exit::bad_input(lines.join("\n")));
    }
    Ok(exit::code(herd_run::conclude(result)))
}
