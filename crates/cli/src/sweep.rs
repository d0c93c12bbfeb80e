//! `herd sweep`: the same targets at rising levels, a table line per step as it completes,
//! autobench's TSV/CSV and the full JSON at the end (autobench + httperf, seed 001; ab at 1 to
//! 1000 users, seed 004).

use crate::exit::{self, Exit};
use crate::interrupt;
use crate::series::{
    check_outputs, name_targets, parse_levels, runs_for, Length, Level, RequestArgs, RunOutputs,
    Runs,
};
use crate::series_log::SeriesLog;
use crate::sweep_table::LiveTable;
use clap::Args;
use herd_engine::Control;
use herd_result::sweep::{write_table, Separator, StopRule, SweepResult, SweepTarget};
use herd_result::{write_json, Model};
use herd_series::sweep::SweepSpec;
use std::path::{Path, PathBuf};
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

    /// Write the table as autobench's TSV to FILE
    #[arg(long, value_name = "FILE")]
    pub tsv: Option<PathBuf>,

    /// Write the table as CSV to FILE
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// Write every step's full result as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    #[command(flatten)]
    pub board: crate::series_board::BoardArgs,

    #[command(flatten)]
    pub request: RequestArgs,
}

/// `10%`, `10` or `0.5%` -> percent: a PERCENT flag may leave out the `%` (docs/units.md).
pub fn cmd(a: &SweepArgs) -> Result<i32, Exit> {
    let mut given: Vec<String> = a.url.iter().cloned().collect();
    given.extend(a.targets.iter().cloned());
    if given.is_empty() {
        return Err(Exit::bad_input(
            "give a URL or workload file to sweep, or --target [NAME=]URL|FILE (repeatable)",
        ));
    }
    let targets = name_targets(&given);
    let (model, levels) = match (&a.rates, &a.connections) {
        (Some(r), _) => (Model::Open, parse_levels(r)),
        (None, Some(c)) => (Model::Closed, parse_levels(c)),
        (None, None) => unreachable!("clap requires one of --rates and --connections"),
    };
    let mut levels = levels.map_err(Exit::bad_input)?;
    if model == Model::Closed {
        levels = levels.iter().map(|u| u.round().max(1.0)).collect();
    }
    let length = match a.num_conns {
        Some(n) => Length::Requests(n.saturating_mul(a.request.calls_per_conn.unwrap_or(1))),
        None => Length::Time(a.step_duration.unwrap_or(Duration::from_secs(10))),
    };
    let level_of = |x: f64| match model {
        Model::Open => Level::Rate(x),
        Model::Closed => Level::Users(x as u64),
    };
    // Every problem with the flags shows before anything is sent: prepare each target once at
    // the highest level.
    let top = levels.iter().copied().fold(0.0, f64::max);
    let mut problems = Vec::new();
    let shard = a.request.shard.resolve()?;
    if shard.is_some() {
        problems.extend(shard_problems(a, length));
    }
    let mut runs: Vec<Box<dyn Runs>> = Vec::new();
    for (j, t) in targets.iter().enumerate() {
        let shard = shard
            .clone()
            .map(|s| step_instants(s, a, length, j, targets.len()));
        match runs_for(&t.url, &a.request, level_of(top), length, shard) {
            Ok(r) => runs.push(r),
            Err(e) => problems.push(if targets.len() > 1 {
                format!("{}: {}", t.name, e.message)
            } else {
                e.message
            }),
        }
    }
    let unit = runs.first().map_or("req/s", |r| r.rate_unit());
    if model == Model::Open && runs.iter().any(|r| r.rate_unit() != unit) {
        problems.push(
            "URLs and workload files cannot be swept side by side at the same rates: a URL's rate \
             counts requests, a workload's scenario iterations; sweep them separately"
                .to_owned(),
        );
    }
    let outputs = [&a.tsv, &a.csv, &a.json];
    problems.extend(check_outputs(outputs.iter().filter_map(|p| p.as_deref())));
    problems.extend(crate::series::check_requests_log(&a.request));
    if !problems.is_empty() {
        return Err(Exit::bad_input(problems.join("\n")));
    }
    let stop = match &a.stop {
        Some(text) => StopRule::parse(text).map_err(|e| Exit::bad_input(format!("--stop: {e}")))?,
        // A shard sees only its share: the shards would stop apart, so a sharded sweep runs
        // every level and the stop rule is the merge's to judge.
        None if shard.is_some() => StopRule::default(),
        None => StopRule {
            max_error_percent: (!a.no_stop).then_some(a.stop_errors),
            max_p99_ms: a
                .stop_p99
                .filter(|_| !a.no_stop)
                .map(|d| d.as_secs_f64() * 1e3),
            ..StopRule::default()
        },
    };
    let spec = SweepSpec {
        model,
        targets: targets
            .iter()
            .map(|t| SweepTarget {
                name: t.name.clone(),
                url: t.url.clone(),
                named: t.named,
            })
            .collect(),
        levels,
        length,
        calls_per_conn: a.request.calls_per_conn,
        timeout: runs
            .first()
            .map_or(herd_run::DEFAULT_TIMEOUT, |r| r.timeout()),
        cooldown: a.cooldown,
        stop,
    };
    let control = Arc::new(Control::new());
    interrupt::cancel_on_signal(Arc::clone(&control));
    let http = a.request.http.flags();
    let what = format!(
        "herd sweep {} at {}",
        given.join(" "),
        a.rates
            .as_deref()
            .or(a.connections.as_deref())
            .unwrap_or_default()
    );
    let levels = herd_live::dashboard::Levels {
        what,
        unit: unit.to_owned(),
        named: targets.len() > 1,
        ..Default::default()
    };
    let board = (a.board).start(levels, &control, a.json.as_deref())?;
    let mut table = LiveTable {
        model,
        named: targets.len() > 1,
        unit,
        streams: http.http2.then(|| http.streams.unwrap_or(1)),
        outputs: RunOutputs {
            quiet: a.request.quiet,
            log: a.request.requests_log.as_deref().map(|p| {
                let names = runs.iter().map(|r| r.labels().names).collect();
                SeriesLog::new(p, names, &control)
            }),
            board,
        },
    };
    table.header();
    let (mut result, failure) = herd_series::sweep::sweep(spec, &runs, &control, &mut table);
    let log_failed = table
        .outputs
        .log
        .take()
        .and_then(|log| log.finish(result.steps.iter_mut().flat_map(|s| s.runs.iter_mut())));
    let report = || herd_report::html::render_sweep(&result);
    crate::series_board::finish(table.outputs.board.as_ref(), report, result.interrupted);
    let answered = summary(&result);
    write_outputs(&result, a)?;
    if let Some(b) = &table.outputs.board {
        b.linger();
    }
    if let Some(e) = failure {
        // What ran is written above; the error says why the rest did not.
        return Err(Exit::from(e));
    }
    if let Some(e) = log_failed {
        return Err(e);
    }
    Ok(if result.interrupted {
        exit::INTERRUPTED
    } else if !answered {
        exit::NO_RESPONSE
    } else {
        exit::OK
    })
}

/// What a sharded sweep cannot do, each with what to do instead.
fn shard_problems(a: &SweepArgs, length: Length) -> Vec<String> {
    let mut problems = Vec::new();
    if a.stop.is_some() || a.stop_p99.is_some() {
        problems.push(
            "--stop and --stop-p99 judge each step, but a shard sees only its share and the shards would stop apart: a sharded sweep runs every level; judge the merged sweep (herd merge)"
                .to_owned(),
        );
    }
    if a.request.shard.start_at.is_some() && matches!(length, Length::Requests(_)) {
        problems.push(
            "--start-at with --num-conns: a step ended by a request count has no known length, so the shards' later steps could not start together; give --step-duration"
                .to_owned(),
        );
    }
    problems
}

/// A sharded sweep's runs start on shared instants: every step of every target has a slot of
/// whole seconds (its warm-up and length, the drain of at most 2 s, the cooldown and 1 s to
/// spare), so each shard's step `k` of target `j` starts with the others' wherever each ended
/// the last one.
fn step_instants(
    mut shard: herd_run::shard::ShardRun,
    a: &SweepArgs,
    length: Length,
    target: usize,
    targets: usize,
) -> herd_run::shard::ShardRun {
    let Length::Time(step) = length else {
        return shard;
    };
    let warmup = a.request.warmup.unwrap_or_default();
    let slot = warmup + step + Duration::from_secs(3) + a.cooldown;
    let slot = Duration::from_secs(slot.as_secs() + u64::from(slot.subsec_nanos() > 0));
    shard.start_at = shard.start_at.map(|at| at + slot * target as u32);
    shard.stride = slot * targets as u32;
    shard
}

/// After the table: where each target saturated, and why the sweep ended. Returns whether any
/// target answered at all (a sweep nothing answered measured no server, as a run would not).
pub fn summary(r: &SweepResult) -> bool {
    println!();
    let mut answered = r.steps.is_empty();
    for (i, k) in r.knees().into_iter().enumerate() {
        let runs = r.steps.iter().filter_map(|s| s.runs.get(i));
        let answers = herd_result::answers::series_answers(&r.targets[i].url, runs);
        for w in &answers.warnings {
            println!("{w}");
        }
        if answers.nothing_answered {
            // "Saturated from the first level" would blame a server that is not there.
            continue;
        }
        answered = true;
        println!("{}", k.sentence_in(&r.level_unit()));
        if k.limited_steps > 0 {
            println!(
                "{}: some steps were limited by herd itself (marked LIMITED): their numbers describe herd, not the server",
                k.name
            );
        }
    }
    if let Some(why) = &r.stopped_early {
        println!("stopped early: {why}");
    }
    if r.interrupted {
        println!("interrupted: later levels did not run");
    }
    answered
}

fn write_outputs(r: &SweepResult, a: &SweepArgs) -> Result<(), Exit> {
    let table = r.table();
    if let Some(p) = &a.tsv {
        write_file(p, write_table(&table, Separator::Tab).as_bytes())?;
    }
    if let Some(p) = &a.csv {
        write_file(p, write_table(&table, Separator::Comma).as_bytes())?;
    }
    if let Some(p) = &a.json {
        let mut buf = Vec::new();
        write_json(r, &mut buf).map_err(|e| Exit::bad_input(e.to_string()))?;
        write_file(p, &buf)?;
    }
    Ok(())
}

pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Exit> {
    std::fs::write(path, bytes)
        .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", path.display())))
}
