//! `herd model LOG... -o workload.yaml`: a workload file from what a log showed; `herd model
//! --har session.har -o workload.yaml`: one from what a browser recorded (herd-har).

use crate::exit::{self, Exit};
use herd_args::model::ModelArgs;
use herd_logs::model::render;
use std::path::Path;

pub fn cmd(a: &ModelArgs) -> Result<i32, Exit> {
    crate::outputs::check_path("-o", Some(&a.output))?;
    if let Some(refused) = a.refused() {
        return Err(Exit::bad_input(refused));
    }
    if let Some(har) = &a.har {
        return from_har(a, har);
    }
    let report = crate::logs_cmd::analyse(&a.input, true)?;
    let opts = a.options();
    crate::outputs::write_file(&a.output, &render(&report, &opts))?;
    println!("{}", herd_logs::model::summary(&report, &opts, &a.output));
    Ok(exit::OK)
}

fn from_har(a: &ModelArgs, har: &Path) -> Result<i32, Exit> {
    let opts = a.har_options(har);
    let m = herd_har::model_file(har, &opts).map_err(Exit::bad_input)?;
    crate::outputs::write_file(&a.output, &m.yaml)?;
    println!("{}", m.summary(&a.output));
    Ok(exit::OK)
}
