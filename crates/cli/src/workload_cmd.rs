//! `herd validate FILE`. What a workload run applies and refuses of the flags is
//! `herd_run::flags`' table.

use crate::exit::{self, Exit};
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

pub fn validate(a: &ValidateArgs) -> Result<i32, Exit> {
    crate::env_values::apply(&a.env)?;
    let w = herd_run::compile_workload(&a.file)?;
    let plan = w.plan(std::thread::available_parallelism().map_or(1, |n| n.get()));
    plan.validate()
        .map_err(|e| Exit::bad_input(format!("{}: {e}", a.file.display())))?;
    println!("{}: ok ({})", a.file.display(), w.describe());
    Ok(exit::OK)
}
