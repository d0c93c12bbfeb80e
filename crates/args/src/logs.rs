//! The flags of `herd logs LOG...` (and `--against RESULT`), and the log files and analysis
//! `logs`, `model` and `replay` share, as herd-logs reads them (`input::Files`, `input::Input`).

use clap::Args;
use herd_logs::input::{Files, Input};
use herd_logs::source::FormatSpec;
use std::path::PathBuf;
use std::time::Duration;

/// The log files and how they are written (shared by `logs`, `model` and `replay`).
#[derive(Args, Debug, Clone)]
pub struct LogFiles {
    /// Access logs (gzip is read as is); several files are merged in time order
    #[arg(value_name = "LOG", required = true)]
    pub logs: Vec<PathBuf>,

    /// auto (the default: Combined or Common, a time taken after them, or JSON lines),
    /// common, combined, json, an Apache LogFormat string ('%h %l %u %t "%r" %>s %b %D') or an
    /// nginx log_format line ('log_format timed '$remote_addr ... $request_time';')
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub format: String,

    /// JSON lines: which key holds what, e.g. time=ts,uri=url,taken_ms=duration (roles: time,
    /// client, request, method, uri, query, status, bytes, referer, user_agent, taken, taken_ms,
    /// taken_us)
    #[arg(long, value_name = "ROLE=KEY,...")]
    pub fields: Option<String>,
}

impl LogFiles {
    /// The files as given, for herd-logs to read.
    pub fn files(&self) -> Files {
        Files {
            logs: self.logs.clone(),
            format: self.format.clone(),
            fields: self.fields.clone(),
        }
    }

    /// How the lines are written (--format, --fields).
    pub fn spec(&self) -> Result<FormatSpec, String> {
        self.files().spec()
    }
}

/// The logs to read and how to analyse them (`logs` and `model`).
#[derive(Args, Debug, Clone)]
pub struct LogInput {
    #[command(flatten)]
    pub files: LogFiles,

    /// Name request types yourself: '/items/{id}', 'GET /search', '/static/*' (repeatable; the
    /// first that matches wins, the rest are found automatically)
    #[arg(long = "pattern", value_name = "PATTERN")]
    pub patterns: Vec<String>,

    /// A client's session ends after this long without a page request
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = crate::values::duration)]
    pub session_idle: Duration,
}

impl LogInput {
    /// The logs and how to analyse them, for herd-logs to read.
    pub fn input(&self) -> Input {
        Input {
            files: self.files.files(),
            patterns: self.patterns.clone(),
            session_idle: self.session_idle,
        }
    }
}

#[derive(Args, Debug)]
pub struct LogsArgs {
    #[command(flatten)]
    pub input: LogInput,

    /// Request types listed in the text summary
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,

    /// Also write the analysis as JSON (schema/logs.schema.json)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Also write a self-contained HTML page with charts
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    pub output: Option<PathBuf>,

    /// Compare a run's result with this server log: requests, status classes and times per
    /// second and per request type within the run's window (exit 3 when they differ)
    #[arg(long, value_name = "RESULT.json")]
    pub against: Option<PathBuf>,

    /// How far herd's and the server's counts may differ before --against flags them
    #[arg(long, value_name = "PERCENT", default_value = "2%", value_parser = crate::values::threshold)]
    pub tolerance: f64,
}
