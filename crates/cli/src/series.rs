//! What `herd sweep` and `herd capacity` share on the CLI's side: the flags kept at every level,
//! the [`Runs`] each target becomes, and each run's outputs (herd-live's `StepOutputs`). Levels and target
//! names are read by herd-series (`herd_series::levels`).
//!
//! The loops themselves are herd-series': they ask a [`Runs`] (herd-run's prepared run) for "a
//! run at rate R" or "a run with N users" and never look inside; for a URL a level counts
//! requests, for a workload scenario iterations.

use crate::exit::Exit;
use clap::Args;
pub use herd_live::StepOutputs;
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

/// A series' outputs run by run (herd-live's `StepOutputs`), each run labelled with its step
/// and kept in the store (`--store`) as a run of its own; `series`: `sweep` or `capacity`, the
/// `series` label of each stored run.
pub fn step_outputs(
    outputs: herd_live::Outputs,
    given: &crate::outputs::OutputArgs,
    series: &'static str,
    words: herd_live::LevelWords,
) -> StepOutputs {
    let (label, keep) = (given.keep.clone(), given.keep.clone());
    StepOutputs::new(
        outputs,
        given.json.clone(),
        move |run, step, level| crate::store_cmd::label_step(&label, run, series, step, level),
        move |run| crate::store_cmd::keep(&keep, run).map_err(|e| e.message),
        words,
    )
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
