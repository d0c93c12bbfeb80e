//! `herd model LOG... -o workload.yaml`: a workload file from what a log showed; `herd model
//! --har session.har -o workload.yaml`: one from what a browser recorded (herd-har).

use crate::exit::{self, Exit};
use herd_args::model::ModelArgs;
use herd_logs::model::render;
use std::path::Path;

pub fn cmd(a: &ModelArgs) -> Result<i32, Exit> {
    crate::outputs::check_path("-o", Some(&a.output))?;
    // Written into the workload file as given: checked by the rule that file is read with, so
    // what passes here loads there (a bare number is refused: the file needs its unit).
    herd_result::units::duration(&a.duration, herd_result::units::Bare::Refused)
        .map_err(|e| Exit::bad_input(format!("--duration: {e}")))?;
    if let Some(har) = &a.har {
        return from_har(a, har);
    }
    if a.users.is_some() {
        // clap waives `requires = "har"` once a LOG is given, since --har conflicts with it
        return Err(Exit::bad_input(
            "--users is for --har: from logs, users come from the log's rate and think times (Little's law)",
        ));
    }
    if a.scenarios == Some(0) {
        return Err(Exit::bad_input("--scenarios must be 1 or more"));
    }
    let report = crate::logs_cmd::analyse(&a.input, true)?;
    let opts = a.options();
    crate::outputs::write_file(&a.output, &render(&report, &opts))?;
    println!("{}", herd_logs::model::summary(&report, &opts, &a.output));
    Ok(exit::OK)
}

fn from_har(a: &ModelArgs, har: &Path) -> Result<i32, Exit> {
    let users = a.users.unwrap_or(10);
    if users == 0 {
        return Err(Exit::bad_input("--users must be 1 or more"));
    }
    let opts = a.har_options(har, users);
    let m = herd_har::model_file(har, &opts).map_err(Exit::bad_input)?;
    crate::outputs::write_file(&a.output, &m.yaml)?;
    println!("{}", m.summary(&a.output));
    Ok(exit::OK)
}
