//! `herd sweep`: the same targets at rising levels, a table line per step as it completes,
//! autobench's TSV/CSV and the full JSON at the end.

use crate::exit::{self, Exit};
use crate::interrupt;
use crate::series::{runs_for, step_outputs, Level, Runs};
use crate::sweep_table::LiveTable;
use herd_args::sweep::SweepArgs;
use herd_engine::Control;
use herd_result::sweep::SweepResult;
use herd_series::levels::{name_targets, NamedTarget};
use herd_series::sweep::SweepSpec;
use std::sync::Arc;

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
    let spec =
        SweepSpec::of(&a.flags(), &c.targets, timeout, c.sharded).map_err(Exit::bad_input)?;
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
    let outputs = crate::outputs::open(&a.outputs, &control, Some(levels))?;
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
    let given = a.given();
    if given.is_empty() {
        return Err(Exit::bad_input(
            "give a URL or workload file to sweep, or --target [NAME=]URL|FILE (repeatable)",
        ));
    }
    let targets = name_targets(&given);
    let flags = a.flags();
    let (model, levels) = flags.levels().map_err(Exit::bad_input)?;
    let length = flags.length();
    let top = levels.iter().copied().fold(0.0, f64::max);
    let mut problems = Vec::new();
    let shard = crate::outputs::shard(&a.series.reach.shard)?;
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
    problems.extend(crate::outputs::check(&a.outputs, true, shard.is_some()));
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
