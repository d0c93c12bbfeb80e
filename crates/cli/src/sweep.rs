//! `herd sweep`: the same targets at rising levels, a table line per step as it completes,
//! autobench's TSV/CSV and the full JSON at the end (autobench + httperf, seed 001; ab at 1 to
//! 1000 users, seed 004).

use crate::exit::{self, Exit};
use crate::interrupt;
use crate::series::{runs_for, step_outputs, Level, Runs, SeriesArgs};
use crate::sweep_table::LiveTable;
use clap::Args;
use herd_engine::Control;
use herd_result::sweep::SweepResult;
use herd_series::levels::{name_targets, NamedTarget};
use herd_series::sweep::{SweepFlags, SweepSpec};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("levels").required(true).args(["rates", "connections"]))]
pub struct SweepArgs {
    /// The URL or workload file to sweep (or use --target, repeatable)
    pub url: Option<String>,

    /// A target, `NAME=URL`, a URL or a workload file; several are swept step by step side by side
    #[arg(long = "target", value_name = "[NAME=]URL|FILE")]
    pub targets: Vec<String>,

    /// Open model: request rates per second (scenario iterations per second for a workload file),
    /// low:high:step (20:600:20) or a list (100,200,400)
    #[arg(long, value_name = "LEVELS")]
    pub rates: Option<String>,

    /// Closed model: concurrent connections (users), e.g. 1,5,10,100,1000 or 10:100:10
    #[arg(short = 'c', long, value_name = "LEVELS")]
    pub connections: Option<String>,

    /// How long each step measures [default: 10s unless --num-conns]
    #[arg(long = "step-duration", value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub step_duration: Option<Duration>,

    /// Each step makes this many connections of --calls-per-conn requests (autobench's --num_conn)
    #[arg(long = "num-conns", value_name = "N", conflicts_with = "step_duration")]
    pub num_conns: Option<u64>,

    /// Pause between steps, so one step's backlog does not spill into the next
    #[arg(long, value_name = "TIME", default_value = "2s", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub cooldown: Duration,

    /// The stop rule: a step breaks it when more than this share of requests get no OK answer
    #[arg(long = "stop-errors", value_name = "PERCENT", default_value = "10%", value_parser = crate::values::percent)]
    pub stop_errors: f64,

    /// ... or when its p99 latency exceeds this
    #[arg(long = "stop-p99", value_name = "TIME", value_parser = crate::values::duration, allow_hyphen_values = true)]
    pub stop_p99: Option<Duration>,

    /// The stop rule as criteria of a healthy step, in the grammar of thresholds and --slo,
    /// e.g. "p99 < 100ms, errors < 5%" (replaces --stop-errors and --stop-p99)
    #[arg(long = "stop", value_name = "CRITERIA", conflicts_with_all = ["stop_errors", "stop_p99", "no_stop"])]
    pub stop: Option<String>,

    /// Run every level (the sweep otherwise stops once every target broke the stop rule two steps
    /// in a row)
    #[arg(long = "no-stop")]
    pub no_stop: bool,

    /// Write the table as autobench's TSV to FILE (--csv writes it as CSV)
    #[arg(long, value_name = "FILE")]
    pub tsv: Option<PathBuf>,

    #[command(flatten)]
    pub outputs: crate::outputs::OutputArgs,

    #[command(flatten)]
    pub series: SeriesArgs,
}

/// A sweep whose every flag and target was checked, nothing sent yet.
struct Checked {
    given: Vec<String>,
    targets: Vec<NamedTarget>,
    runs: Vec<Box<dyn Runs>>,
    unit: &'static str,
    sharded: bool,
}

/// Sweeps the targets level by level: every problem before anything is sent, then the table
/// line by line, each run's outputs, the summary, the files and the exit code.
pub fn cmd(a: &SweepArgs) -> Result<i32, Exit> {
    let c = check(a)?;
    let timeout = c.runs.first().map(|r| r.timeout());
    let timeout = timeout.unwrap_or(herd_run::DEFAULT_TIMEOUT);
    let spec = SweepSpec::of(&flags(a), &c.targets, timeout, c.sharded).map_err(Exit::bad_input)?;
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let http = a.series.http.flags();
    let what = format!(
        "herd sweep {} at {}",
        c.given.join(" "),
        a.rates
            .as_deref()
            .or(a.connections.as_deref())
            .unwrap_or_default()
    );
    let levels = herd_live::dashboard::Levels {
        what,
        unit: c.unit.to_owned(),
        named: c.targets.len() > 1,
        ..Default::default()
    };
    let outputs = a.outputs.open(&control, Some(levels))?;
    let table = LiveTable {
        model: spec.model,
        named: c.targets.len() > 1,
        unit: c.unit,
        streams: http.http2.then(|| http.streams.unwrap_or(1)),
    };
    table.header();
    let mut steps = step_outputs(outputs, &a.outputs, "sweep", table.words()).with(table);
    let (result, failure) = herd_series::sweep::sweep(spec, &c.runs, &control, &mut steps);
    let report = || herd_report::html::render_sweep(&result);
    let unwritten = steps.end(report, result.interrupted);
    let answered = summary(&result);
    result
        .write_tables(a.tsv.as_deref(), a.outputs.csv.as_deref())
        .map_err(Exit::bad_input)?;
    steps.write_json(&result).map_err(Exit::bad_input)?;
    steps.outputs.linger();
    if let Some(e) = failure {
        // What ran is written above; the error says why the rest did not.
        return Err(Exit::from(e));
    }
    if !unwritten.is_empty() {
        return Err(Exit::bad_input(unwritten.join("\n")));
    }
    Ok(exit::code(herd_series::sweep::conclude(
        &result, false, answered,
    )))
}

/// Every problem with the flags, the targets and the outputs, before anything is sent: each
/// target is prepared once at the highest level.
fn check(a: &SweepArgs) -> Result<Checked, Exit> {
    let mut given: Vec<String> = a.url.iter().cloned().collect();
    given.extend(a.targets.iter().cloned());
    if given.is_empty() {
        return Err(Exit::bad_input(
            "give a URL or workload file to sweep, or --target [NAME=]URL|FILE (repeatable)",
        ));
    }
    let targets = name_targets(&given);
    let flags = flags(a);
    let (model, levels) = flags.levels().map_err(Exit::bad_input)?;
    let length = flags.length();
    let top = levels.iter().copied().fold(0.0, f64::max);
    let mut problems = Vec::new();
    let shard = a.series.reach.shard.resolve()?;
    if shard.is_some() {
        problems.extend(flags.shard_problems(a.series.reach.shard.start_at.is_some()));
    }
    let mut runs: Vec<Box<dyn Runs>> = Vec::new();
    for (j, t) in targets.iter().enumerate() {
        let shard = shard.clone().map(|s| {
            s.in_series(
                length,
                a.series.per_run.warmup,
                a.cooldown,
                j,
                targets.len(),
            )
        });
        match runs_for(&t.url, &a.series, Level::of(model, top), length, shard) {
            Ok(r) => runs.push(r),
            Err(e) => problems.push(if targets.len() > 1 {
                format!("{}: {}", t.name, e.message)
            } else {
                e.message
            }),
        }
    }
    let units: Vec<&str> = runs.iter().map(|r| r.rate_unit()).collect();
    problems.extend(herd_series::sweep::mixed_units(model, &units));
    let unit = units.first().copied().unwrap_or("req/s");
    let tables = [("--tsv", &a.tsv), ("--csv", &a.outputs.csv)];
    problems.extend(
        tables
            .iter()
            .filter_map(|(flag, p)| herd_live::paths::check_writable(flag, p.as_deref()?).err()),
    );
    problems.extend(a.outputs.check(true, shard.is_some()));
    if !problems.is_empty() {
        return Err(Exit::bad_input(problems.join("\n")));
    }
    Ok(Checked {
        given,
        targets,
        runs,
        unit,
        sharded: shard.is_some(),
    })
}

/// The flags that shape the series, for herd-series to read.
fn flags(a: &SweepArgs) -> SweepFlags {
    SweepFlags {
        rates: a.rates.clone(),
        connections: a.connections.clone(),
        step_duration: a.step_duration,
        num_conns: a.num_conns,
        calls_per_conn: a.series.per_run.calls_per_conn,
        stop: a.stop.clone(),
        stop_errors: a.stop_errors,
        stop_p99: a.stop_p99,
        no_stop: a.no_stop,
        cooldown: a.cooldown,
    }
}

/// After the table: where each target saturated, and why the sweep ended. Returns whether any
/// target answered at all.
pub fn summary(r: &SweepResult) -> bool {
    let (lines, answered) = herd_report::series_text::sweep_summary(r);
    println!();
    for l in lines {
        println!("{l}");
    }
    answered
}
