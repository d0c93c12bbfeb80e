//! `herd merge shard-*.json -o total.json`'s flags.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' result files (herd run, herd replay or herd sweep with --shard I/N --json
    /// FILE), or merged ones
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged result as JSON (herd report, compare and plot read it like any run)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}
