//! `herd model LOG... -o workload.yaml`: a workload file from what a log showed.

use crate::exit::{self, Exit};
use crate::logs_cmd::{check_writable, LogInput};
use clap::Args;
use herd_logs::model::{parse_scale, render, DataChoice, ModelOptions};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(flatten)]
    pub input: LogInput,

    /// The workload file to write
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.yaml",
        required = true
    )]
    pub output: PathBuf,

    /// The system to test (the log does not say)
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
    pub target: String,

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
    #[arg(long)]
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
    check_writable(&a.output)?;
    // Written into the workload file as given: checked by the rule that file is read with, so
    // what passes here loads there (a bare number is refused: the file needs its unit).
    herd_result::units::duration(&a.duration, herd_result::units::Bare::Refused)
        .map_err(|e| Exit::bad_input(format!("--duration: {e}")))?;
    if a.scenarios == Some(0) {
        return Err(Exit::bad_input("--scenarios must be 1 or more"));
    }
    let report = a.input.analyse(true)?;
    let opts = ModelOptions {
        target: a.target.clone(),
        scenarios: a.scenarios,
        scale: a.scale,
        duration: a.duration.clone(),
        data: match a.data.as_str() {
            "values" => DataChoice::Values,
            "zipf" => DataChoice::Zipf,
            _ => DataChoice::Auto,
        },
        assets: a.assets,
        open: a.open,
    };
    let yaml = render(&report, &opts);
    std::fs::write(&a.output, &yaml)
        .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", a.output.display())))?;
    let picked = herd_logs::model::pick(&report, &opts);
    let covered: f64 = picked.iter().map(|t| t.share).sum();
    println!(
        "{}: {} scenarios from {} requests ({} request types), covering {:.1}% of the requests (the file's last comment lists the types left out and why); check it with `herd validate {}`",
        a.output.display(),
        picked.len(),
        report.input.records,
        report.types.len(),
        covered,
        a.output.display()
    );
    Ok(exit::OK)
}
