//! `herd history ls|show|trend|detect|baseline`'s flags: which runs (`Select`, herd-history's
//! filters as given) and what each question asks.

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// List stored runs, oldest first
    Ls(LsArgs),
    /// One stored run, as `herd report` shows a result (-o run.html for its page)
    Show(ShowArgs),
    /// A metric over the runs, as a table, or a chart page with -o trend.html
    Trend(TrendArgs),
    /// The runs where a metric's level changed (E-Divisive means, a permutation test, and the
    /// runs' own noise), each named with its labels
    Detect(DetectArgs),
    /// Pin a run as the baseline `herd compare --baseline` compares with
    Baseline(BaselineArgs),
}

#[derive(Args, Debug)]
pub struct LsArgs {
    #[command(flatten)]
    pub select: Select,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The run's id (`herd history ls`)
    pub id: i64,
    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Write the report to this file (.html, .pdf, .txt)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the run's result as JSON (`herd run --json`'s format)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub command: BaselineCommand,
}

#[derive(Subcommand, Debug)]
pub enum BaselineCommand {
    /// Pin run ID as the baseline of the runs with these labels
    Set(BaselineSetArgs),
}

#[derive(Args, Debug)]
pub struct BaselineSetArgs {
    /// The run's id (`herd history ls`)
    pub id: i64,
    /// The labels it is the baseline for (`herd compare --baseline 'KEY=VALUE'`); none: any run
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

/// Which runs: the store and the filters every question shares.
#[derive(Args, Debug)]
pub struct Select {
    /// The store: a SQLite file or postgres://... (default: $HERD_STORE)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Only runs with this label; repeat for runs with all of them
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Only runs against this target (as listed)
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Only runs of this workload file (or URL, for a run of one URL)
    #[arg(long, value_name = "FILE|URL")]
    pub workload: Option<String>,
    /// Only runs started at or after: 2026-11-01, 2026-11-01T12:00:00Z, or a time ago (7d, 12h)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only runs started before (same forms as --since)
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only the last N of them
    #[arg(long, value_name = "N", value_parser = crate::values::count::<usize>)]
    pub last: Option<usize>,
    /// Also write the answer as JSON to this file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct TrendArgs {
    #[command(flatten)]
    pub select: Select,
    /// The metrics, comma-separated: throughput, error_rate, p50, p75, p90, p95, p99, p999,
    /// max, mean, bytes, requests
    #[arg(
        long,
        value_name = "METRIC",
        default_value = "p99",
        value_delimiter = ','
    )]
    pub metric: Vec<String>,
    /// A request name's figures instead of the whole run's
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Also draw the trend as an HTML page (change points marked)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DetectArgs {
    #[command(flatten)]
    pub select: Select,
    /// The metric whose changes to find (as for trend)
    #[arg(long, value_name = "METRIC", default_value = "p99")]
    pub metric: String,
    /// A request name's figures instead of the whole run's
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The seed of the permutation test's shuffles: the same seed, the same answer
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

impl Select {
    /// The filters as given, for herd-history to read.
    pub fn filters(&self) -> herd_history::Select {
        herd_history::Select {
            labels: self.labels.clone(),
            target: self.target.clone(),
            workload: self.workload.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            last: self.last,
        }
    }
}
