//! `herd validate FILE`, and what `herd run FILE.yaml` refuses: a workload file sets its own load
//! and requests, so flags that would contradict it are refused rather than silently ignored.

use crate::args::RunArgs;
use crate::exit::{self, Exit};
use clap::Args;
use std::path::{Path, PathBuf};

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

/// `herd run FILE.yaml`: the load, headers and bodies come from the file.
pub fn refuse_load_flags(a: &RunArgs, file: &Path) -> Result<(), Exit> {
    let flags: [(&str, bool); 9] = [
        ("-c/--connections", a.connections.is_some()),
        ("--rate", a.rate.is_some()),
        ("-d/--duration", a.duration.is_some()),
        ("-n/--requests", a.requests.is_some()),
        ("--calls-per-conn", a.calls_per_conn.is_some()),
        ("-m/--method", a.method.is_some()),
        ("-H/--header", !a.headers.is_empty()),
        ("--body", a.body.is_some()),
        ("--body-file", a.body_file.is_some()),
    ];
    let clashes: Vec<&str> = flags.iter().filter(|f| f.1).map(|f| f.0).collect();
    if clashes.is_empty() {
        return Ok(());
    }
    Err(Exit::bad_input(format!(
        "{} cannot be combined with a workload file: set the load, headers and bodies in {}",
        clashes.join(", "),
        file.display()
    )))
}
