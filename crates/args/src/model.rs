//! `herd model LOG... -o workload.yaml` and `herd model --har session.har -o workload.yaml`'s
//! flags, and the options herd-logs and herd-har write the workload file with.

use crate::logs::LogInput;
use clap::Args;
use herd_logs::model::{parse_scale, DataChoice, ModelOptions};
use herd_result::units::Bare;
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

    /// What the flags refuse together: a --duration the workload file could not read, --users
    /// without --har (clap waives `requires = "har"` once a LOG is given, since --har
    /// conflicts with it), none of something.
    pub fn refused(&self) -> Option<String> {
        // Written into the workload file as given: checked by the rule that file is read with,
        // so what passes here loads there (a bare number is refused: the file needs its unit).
        if let Err(e) = herd_result::units::duration(&self.duration, Bare::Refused) {
            return Some(format!("--duration: {e}"));
        }
        let refused = match (&self.har, self.users) {
            (Some(_), Some(0)) => "--users must be 1 or more",
            (None, Some(_)) => {
                "--users is for --har: from logs, users come from the log's rate and think times (Little's law)"
            }
            (None, None) if self.scenarios == Some(0) => "--scenarios must be 1 or more",
            _ => return None,
        };
        Some(refused.to_owned())
    }

    /// The options of a workload file modelled from the HAR file `har` [default: 10 users].
    pub fn har_options(&self, har: &Path) -> herd_har::Options {
        herd_har::Options {
            target: self.target.clone(),
            users: self.users.unwrap_or(10),
            duration: self.duration.clone(),
            assets: self.assets,
            source: har.display().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    fn refused(args: &[&str]) -> Option<String> {
        let cli =
            crate::Cli::try_parse_from([&["herd", "model", "-o", "w.yaml"][..], args].concat())
                .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let crate::Command::Model(a) = &cli.command else {
            panic!("not model")
        };
        a.refused()
    }

    #[test]
    fn what_the_model_flags_refuse_together() {
        assert_eq!(refused(&["access.log"]), None);
        assert_eq!(refused(&["--har", "s.har", "--users", "3"]), None);
        let said = |args: &[&str]| refused(args).unwrap_or_default();
        assert!(said(&["--duration", "10", "access.log"]).starts_with("--duration: "));
        assert!(said(&["--users", "3", "access.log"]).starts_with("--users is for --har"));
        assert_eq!(
            said(&["--har", "s.har", "--users", "0"]),
            "--users must be 1 or more"
        );
        assert_eq!(
            said(&["--scenarios", "0", "access.log"]),
            "--scenarios must be 1 or more"
        );
    }
}
