//! What `herd sweep` and `herd capacity` share on the CLI's side: the [`Runs`] each target
//! becomes and each run's outputs (herd-live's `StepOutputs`). The flags kept at every level are
//! herd-args' (`SeriesArgs`); levels and target names are read by herd-series
//! (`herd_series::levels`).
//!
//! The loops themselves are herd-series': they ask a [`Runs`] (herd-run's prepared run) for "a
//! run at rate R" or "a run with N users" and never look inside; for a URL a level counts
//! requests, for a workload scenario iterations.

use crate::exit::Exit;
use herd_args::outputs::OutputArgs;
use herd_args::series::SeriesArgs;
pub use herd_live::StepOutputs;
pub use herd_run::{Length, Level, Runs};

/// A URL or a workload file, by the rule `herd run` uses, checked at `level` and `length`
/// (every problem before anything is sent); a shard plays its share of every run.
pub fn runs_for(
    target: &str,
    a: &SeriesArgs,
    level: Level,
    length: Length,
    shard: Option<herd_run::shard::ShardRun>,
) -> Result<Box<dyn Runs>, Exit> {
    Ok(Box::new(a.spec(target, level, length, shard).prepare()?))
}

/// A series' outputs run by run (herd-live's `StepOutputs`), each run labelled with its step
/// and kept in the store (`--store`) as a run of its own; `series`: `sweep` or `capacity`, the
/// `series` label of each stored run.
pub fn step_outputs(
    outputs: herd_live::Outputs,
    given: &OutputArgs,
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
