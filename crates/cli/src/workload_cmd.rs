//! `herd validate FILE`. What a workload run applies and refuses of the flags is
//! `herd_run::flags`' table.

use crate::exit::{self, Exit};
use herd_args::validate::ValidateArgs;

pub fn validate(a: &ValidateArgs) -> Result<i32, Exit> {
    crate::env_values::apply(&a.env)?;
    let w = herd_run::compile_workload(&a.file)?;
    let plan = w.plan(std::thread::available_parallelism().map_or(1, |n| n.get()));
    plan.validate()
        .map_err(|e| Exit::bad_input(format!("{}: {e}", a.file.display())))?;
    println!("{}: ok ({})", a.file.display(), w.describe());
    Ok(exit::OK)
}
