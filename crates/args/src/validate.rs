//! `herd validate FILE`'s flags.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The workload file to check (nothing is sent)
    pub file: PathBuf,

    /// A value for {{env.NAME}}, NAME=VALUE (repeatable; k6's -e)
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
}
