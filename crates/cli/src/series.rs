//! What `herd sweep` and `herd capacity` share on the CLI's side: the flags kept at every level,
//! the [`Runs`] each target becomes, and each run's outputs (`StepOutputs`). Levels and target
//! names are read by herd-series (`herd_series::levels`).
//!
//! The loops themselves are herd-series': they ask a [`Runs`] (herd-run's prepared run) for "a
//! run at rate R" or "a run with N users" and never look inside; for a URL a level counts
//! requests, for a workload scenario iterations.

use crate::exit::Exit;
use clap::Args;
use herd_result::RunResult;
pub use herd_run::{Length, Level, Runs};
use herd_run::{LoadFlags, RunSpec, Source};

/// A URL or a workload file, by the rule `herd run` uses, checked at `level` and `length`
/// (every problem before anything is sent); a shard plays its share of every run.
pub fn runs_for(
    target: &str,
    a: &SeriesArgs,
    level: Level,
    length: Length,
    shard: Option<herd_run::shard::ShardRun>,
) -> Result<Box<dyn Runs>, Exit> {
    let source = match herd_run::workload_path(target) {
        Some(path) => Source::Workload { path, target: None },
        None => Source::Url {
            url: target.to_owned(),
        },
    };
    let load = LoadFlags {
        connections: a.max_connections,
        ..a.per_run.flags()
    };
    let spec = RunSpec {
        level: Some(level),
        length: Some(length),
        shard,
        ..a.reach.spec(source, &a.request, load, a.http.flags())
    };
    Ok(Box::new(spec.prepare()?))
}

/// What a series feeds beside its table as each run goes and ends: each run's outputs (the
/// progress line, files numbered by run, metrics labelled by step, the series' page), made as
/// the run begins and finished as it ends, then the run kept in the store (`--store`) as a run
/// of its own, labelled with its step. The sweep's table and the capacity search's have one
/// each.
pub struct StepOutputs {
    pub outputs: herd_live::Outputs,
    keep: crate::store_cmd::StoreFlags,
    /// `--json`: the series' result, rewritten whole after each step and at the end.
    json: Option<std::path::PathBuf>,
    /// `sweep` or `capacity`: the `series` label of each stored run.
    series: &'static str,
    current: Option<herd_live::Sinks>,
    runs: usize,
    problems: Vec<String>,
}

impl StepOutputs {
    pub fn new(
        outputs: herd_live::Outputs,
        given: &crate::outputs::OutputArgs,
        series: &'static str,
    ) -> StepOutputs {
        StepOutputs {
            outputs,
            keep: given.keep.clone(),
            json: given.json.clone(),
            series,
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
    /// `run` what they wrote), the store keeps it, and the page shows its `row` (made only when
    /// there is a page).
    pub fn ended(
        &mut self,
        run: &mut RunResult,
        level: f64,
        row: impl FnOnce() -> herd_live::dashboard::LevelRow,
    ) {
        crate::store_cmd::label_step(&self.keep, run, self.series, self.runs, level);
        if let Some(mut sinks) = self.current.take() {
            let problems = sinks.finish(run);
            self.problems
                .extend(problems.iter().map(|e| format!("cannot write {e}")));
        }
        if let Err(e) = crate::store_cmd::keep(&self.keep, run) {
            self.problems.push(e.message);
        }
        self.outputs.level(row);
    }

    /// The series so far (`--json`), in place of what the file held: a kill leaves it.
    pub fn so_far<R: serde::Serialize>(&mut self, result: &dyn Fn() -> R) {
        if let Some(p) = &self.json {
            if let Err(e) = herd_live::json::write_final(p, &result()) {
                let problem = format!("cannot write {}: {e}", p.display());
                if !self.problems.contains(&problem) {
                    self.problems.push(problem);
                }
            }
        }
    }

    /// The series' result at its end (`--json`), whole or not at all.
    pub fn write_json(&self, result: &impl serde::Serialize) -> Result<(), Exit> {
        let Some(p) = &self.json else { return Ok(()) };
        herd_live::json::write_final(p, result)
            .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", p.display())))
    }

    /// The series ended: its page offers `report`; what could not be written, for the end.
    pub fn end(&mut self, report: impl FnOnce() -> String, interrupted: bool) -> Option<Exit> {
        self.outputs.end_series(report, interrupted);
        let problems = std::mem::take(&mut self.problems);
        (!problems.is_empty()).then(|| Exit::bad_input(problems.join("\n")))
    }
}

/// The flags of `herd run` that a series keeps the same at every level: the request, how the
/// target is reached, and the load besides the level and the length (in a series' words:
/// `load_args::SERIES`).
#[derive(Args, Debug, Clone)]
#[command(mut_args = crate::load_args::series)]
pub struct SeriesArgs {
    #[command(flatten)]
    pub request: crate::args::RequestArgs,

    #[command(flatten)]
    pub per_run: crate::load_args::PerRunArgs,

    /// Open model: the most connections a run may open [default: 1000]
    #[arg(long = "max-connections", value_name = "N", value_parser = crate::values::count::<u64>)]
    pub max_connections: Option<u64>,

    #[command(flatten)]
    pub reach: crate::args::ReachArgs,

    #[command(flatten, next_help_heading = None::<&str>)]
    pub http: crate::http_args::HttpArgs,
}
