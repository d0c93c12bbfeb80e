//! `--store` and `--label` on a run, and `herd store add FILE...`: results kept in a store
//! (herd-store: SQLite by default, PostgreSQL for `postgres://`).

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The store flags of a command that sends load.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreFlags {
    /// Also keep the result in a store of runs: a SQLite file, or postgres://user@host/db
    /// (default: $HERD_STORE; see docs/history.md)
    #[arg(long, value_name = "PATH|URL", help_heading = "Outputs")]
    pub store: Option<String>,

    /// A label for the run, KEY=VALUE (branch=main, commit=abc123), kept in its JSON and the
    /// store; repeat for more
    #[arg(long = "label", value_name = "KEY=VALUE", help_heading = "Outputs")]
    pub labels: Vec<String>,
}

#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Keep results written earlier (`herd run --json`, shard files: merged first) in a store
    Add(AddArgs),
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// Run results; the shards of one run (--shard I/N) are merged and stored as one run
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,

    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL", help_heading = "Outputs")]
    pub store: Option<String>,
}
