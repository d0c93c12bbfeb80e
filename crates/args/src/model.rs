//! `herd model LOG... -o workload.yaml` and `herd model --har session.har -o workload.yaml`'s
//! flags, and the options herd-logs and herd-har write the workload file with.

use crate::logs::LogInput;
use clap::Args;
use herd_logs::model::{parse_scale, DataChoice, ModelOptions};
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

impl ModelArgs {
    /// The options of a workload file modelled from logs.
    pub fn options(&self) -> ModelOptions {
        ModelOptions {
            target: self
                .target
                .clone()
                .unwrap_or_else(|| "http://127.0.0.1:8080".into()),
            scenarios: self.scenarios,
            scale: self.scale,
            duration: self.duration.clone(),
            data: DataChoice::parse(&self.data),
            assets: self.assets,
            open: self.open,
        }
    }

    /// The options of a workload file modelled from the HAR file `har`, for `users` users.
    pub fn har_options(&self, har: &Path, users: u64) -> herd_har::Options {
        herd_har::Options {
            target: self.target.clone(),
            users,
            duration: self.duration.clone(),
            assets: self.assets,
            source: har.display().to_string(),
        }
    }
}
