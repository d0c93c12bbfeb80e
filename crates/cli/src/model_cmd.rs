//! `herd model LOG... -o workload.yaml`: a workload file from what a log showed; `herd model
//! --har session.har -o workload.yaml`: one from what a browser recorded (herd-har).

use crate::exit::{self, Exit};
use crate::logs_cmd::LogInput;
use clap::Args;
use herd_logs::model::{parse_scale, render, DataChoice, ModelOptions};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(mut_arg("logs", |a| a.required(false).required_unless_present("har")))]
pub struct ModelArgs {
    #[command(flatten)]
    pub input: LogInput,

    /// A HAR file (a browser's developer tools: Network, Export HAR) instead of logs: the
    /// recorded session becomes the steps, with think times, extractions and credentials as
    /// {{env.HAR_...}} values (docs/har.md)
    #[arg(long, value_name = "FILE.har", conflicts_with_all = ["logs", "patterns", "format", "fields", "scenarios", "scale", "data", "open", "session_idle"])]
    pub har: Option<PathBuf>,

    /// With --har: the virtual users replaying the session [default: 10]
    #[arg(long, value_name = "N", requires = "har")]
    pub users: Option<u64>,

    /// The workload file to write
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.yaml",
        required = true
    )]
    pub output: PathBuf,

    /// The system to test (the log does not say) [default: http://127.0.0.1:8080; with --har,
    /// the recorded site]
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,

    /// Scenarios written (the top request types); the rest are listed in a comment with why
    /// [default: as many as cover 95% of the requests, static files aside]
    #[arg(long, value_name = "N")]
    pub scenarios: Option<usize>,

    /// Multiply the observed peak rate: 2x, 1.5, 150%
    #[arg(long, value_name = "FACTOR", default_value = "1x", value_parser = scale)]
    pub scale: f64,

    /// How long the load holds
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub duration: String,

    /// Ids: observed values with their frequencies, a Zipf source with the fitted exponent, or
    /// auto (observed when few, else Zipf)
    #[arg(long, value_name = "auto|values|zipf", default_value = "auto", value_parser = ["auto", "values", "zipf"])]
    pub data: String,

    /// Model static files (css, js, images) too; by default they are left out
    #[arg(long, visible_alias = "include-assets")]
    pub assets: bool,

    /// An open model at the peak rate without think times (default: closed, users from
    /// Little's law with the log's think times)
    #[arg(long)]
    pub open: bool,
}

fn scale(s: &str) -> Result<f64, String> {
    parse_scale(s).ok_or_else(|| format!("`{s}` is not a scale: write 2x, 1.5 or 150%"))
}

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
    let report = a.input.analyse(true)?;
    let opts = ModelOptions {
        target: a
            .target
            .clone()
            .unwrap_or_else(|| "http://127.0.0.1:8080".into()),
        scenarios: a.scenarios,
        scale: a.scale,
        duration: a.duration.clone(),
        data: DataChoice::parse(&a.data),
        assets: a.assets,
        open: a.open,
    };
    crate::outputs::write_file(&a.output, &render(&report, &opts))?;
    println!("{}", herd_logs::model::summary(&report, &opts, &a.output));
    Ok(exit::OK)
}

fn from_har(a: &ModelArgs, har: &Path) -> Result<i32, Exit> {
    let users = a.users.unwrap_or(10);
    if users == 0 {
        return Err(Exit::bad_input("--users must be 1 or more"));
    }
    let opts = herd_har::Options {
        target: a.target.clone(),
        users,
        duration: a.duration.clone(),
        assets: a.assets,
        source: har.display().to_string(),
    };
    let m = herd_har::model_file(har, &opts).map_err(Exit::bad_input)?;
    crate::outputs::write_file(&a.output, &m.yaml)?;
    println!("{}", m.summary(&a.output));
    Ok(exit::OK)
}
