//! `--shard I/N`, `--shard-from-env VAR --shards N`, `--start-at`, `--late`: which part of a run
//! this instance plays and when it starts, the same flags for `herd run`, `grpc`, `sweep`,
//! `capacity` and `replay`. herd-run reads them (`ShardFlags`) into the `ShardRun` it plays
//! (the CLI gives it the environment and the time), checked with every other flag before anything
//! is sent.

use clap::{Args, ValueEnum};
use herd_run::shard::Late as Lateness;
use herd_run::ShardFlags;

#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Shards (one run from several machines)")]
pub struct ShardArgs {
    /// Play shard I of N of the run (numbered from 0): its share of the arrivals, users, data
    /// rows and connection cap; `herd merge` adds the shards' results up
    #[arg(long, value_name = "I/N", conflicts_with = "shard_from_env")]
    pub shard: Option<String>,

    /// Read the shard index I from this environment variable, e.g. JOB_COMPLETION_INDEX
    /// (Kubernetes Indexed Jobs) or NOMAD_ALLOC_INDEX; needs --shards N
    #[arg(long = "shard-from-env", value_name = "VAR", requires = "shards")]
    pub shard_from_env: Option<String>,

    /// The number of shards N, with --shard-from-env
    #[arg(long, value_name = "N")]
    pub shards: Option<u64>,

    /// Start on this shared instant: an RFC 3339 time in whole seconds
    /// (2026-12-01T12:00:00Z) or +DURATION from now (+90s). The plan is checked first; an
    /// instance ready too late exits 7 unless --late skip
    #[arg(long = "start-at", value_name = "TIME|+DURATION")]
    pub start_at: Option<String>,

    /// What an instance ready after the start instant does: fail (exit 7, the merge reports the
    /// shard missing) or skip (play the rest, counting what it missed)
    #[arg(long, value_name = "WHAT", value_enum, default_value_t = Late::Fail)]
    pub late: Late,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Late {
    #[default]
    Fail,
    Skip,
}

impl ShardArgs {
    /// The flags as herd-run reads them.
    pub fn flags(&self) -> ShardFlags {
        ShardFlags {
            shard: self.shard.clone(),
            shard_from_env: self.shard_from_env.clone(),
            shards: self.shards,
            start_at: self.start_at.clone(),
            late: match self.late {
                Late::Fail => Lateness::Fail,
                Late::Skip => Lateness::Skip,
            },
        }
    }

    /// Whether any shard flag was given.
    pub fn given(&self) -> bool {
        self.flags().given()
    }
}
