//! What `herd sweep` and `herd capacity` keep the same at every level, and the run it makes of
//! a target at a level (herd-run's `RunSpec`; the CLI prepares it into a `Runs`).

use clap::Args;
use herd_run::shard::ShardRun;
use herd_run::{Length, Level, LoadFlags, RunSpec, Source};

/// The flags of `herd run` that a series keeps the same at every level: the request, how the
/// target is reached, and the load besides the level and the length (in a series' words:
/// `load::SERIES`).
#[derive(Args, Debug, Clone)]
#[command(mut_args = crate::load::series)]
pub struct SeriesArgs {
    #[command(flatten)]
    pub request: crate::run::RequestArgs,

    #[command(flatten)]
    pub per_run: crate::load::PerRunArgs,

    /// Open model: the most connections a run may open [default: 1000]
    #[arg(long = "max-connections", value_name = "N", value_parser = crate::values::count::<u64>)]
    pub max_connections: Option<u64>,

    #[command(flatten)]
    pub reach: crate::run::ReachArgs,

    #[command(flatten, next_help_heading = None::<&str>)]
    pub http: crate::http::HttpArgs,
}

impl SeriesArgs {
    /// A URL or a workload file, by the rule `herd run` uses, at `level` and `length`; a shard
    /// plays its share of every run.
    pub fn spec(
        &self,
        target: &str,
        level: Level,
        length: Length,
        shard: Option<ShardRun>,
    ) -> RunSpec {
        let source = match herd_run::workload_path(target) {
            Some(path) => Source::Workload { path, target: None },
            None => Source::Url {
                url: target.to_owned(),
            },
        };
        let load = LoadFlags {
            connections: self.max_connections,
            ..self.per_run.flags()
        };
        RunSpec {
            level: Some(level),
            length: Some(length),
            shard,
            ..self
                .reach
                .spec(source, &self.request, load, self.http.flags())
        }
    }
}
