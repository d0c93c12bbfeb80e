//! `herd validate FILE`, and which argument of `herd run` names a workload file. What such a run
//! applies and refuses of the flags is `herd_run::flags`' table.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The workload file to check (nothing is sent)
    pub file: PathBuf,
}

/// The workload file named by `herd run`'s argument, if it names one rather than a URL.
pub fn workload_file(a: &RunArgs) -> Option<PathBuf> {
    herd_run::workload_path(a.url.as_deref()?)
}

pub fn validate(a: &ValidateArgs) -> Result<i32, Exit> {
    let w = herd_run::compile_workload(&a.file)?;
    let plan = w.plan(std::thread::available_parallelism().map_or(1, |n| n.get()));
    plan.validate()
        .map_err(|e| Exit::bad_input(format!("{}: {e}", a.file.display())))?;
    println!("{}: ok ({})", a.file.display(), w.describe());
    Ok(exit::OK)
}
