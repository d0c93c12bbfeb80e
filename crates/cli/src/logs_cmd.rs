//! `herd logs LOG...`: what is in a web server's access log (rate, request types, sizes, time
//! taken, sessions, id popularity), as text, JSON and a self-contained HTML page; and
//! `herd logs --against RESULT SERVER_LOG`: whether the server logged what a run sent.

use crate::exit::{self, Exit};
use clap::Args;
use herd_logs::source::{FormatSpec, ReadStats};
use herd_logs::summary::LogsReport;
use std::path::{Path, PathBuf};
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
    pub fn spec(&self) -> Result<FormatSpec, Exit> {
        self.plain().spec().map_err(Exit::bad_input)
    }

    fn plain(&self) -> herd_logs::input::Files {
        herd_logs::input::Files {
            logs: self.logs.clone(),
            format: self.format.clone(),
            fields: self.fields.clone(),
        }
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
    /// Reads and analyses the logs; `warn` tells of bad lines on stderr (`herd logs` shows
    /// them in its summary instead).
    pub fn analyse(&self, warn: bool) -> Result<LogsReport, Exit> {
        let input = herd_logs::input::Input {
            files: self.files.plain(),
            patterns: self.patterns.clone(),
            session_idle: self.session_idle,
        };
        let (report, stats) = input.analyse().map_err(Exit::bad_input)?;
        if warn {
            warn_bad(&stats);
        }
        Ok(report)
    }
}

/// Bad lines are not fatal, but the user hears of them (stderr, so stdout stays clean).
pub fn warn_bad(s: &ReadStats) {
    if let Some(said) = herd_logs::input::bad_lines(s) {
        eprintln!("herd: {said}");
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

pub fn cmd(a: &LogsArgs) -> Result<i32, Exit> {
    crate::outputs::check_path("--json", a.json.as_deref())?;
    crate::outputs::check_path("-o", a.output.as_deref())?;
    if let Some(result) = &a.against {
        return against_cmd(a, result);
    }
    let report = a.input.analyse(false)?;
    print!("{}", herd_logs::text::render(&report, a.top));
    if let Some(p) = &a.json {
        herd_result::write_json_file(&report, p).map_err(Exit::bad_input)?;
    }
    if let Some(p) = &a.output {
        crate::outputs::write_file(p, &herd_logs::html::render(&report))?;
    }
    Ok(exit::OK)
}

/// A `herd logs --json` file, when `path` holds one (`kind: "logs"`): `herd report` shows it.
pub fn read_logs_json(path: &Path) -> Option<Result<LogsReport, Exit>> {
    herd_logs::input::read_report_json(path).map(|r| r.map_err(Exit::bad_input))
}

fn against_cmd(a: &LogsArgs, result: &Path) -> Result<i32, Exit> {
    let files = a.input.files.plain();
    let (c, stats) =
        herd_logs::input::against(&files, result, a.tolerance * 100.0).map_err(Exit::bad_input)?;
    warn_bad(&stats);
    print!("{}", herd_logs::against::render(&c));
    if let Some(p) = &a.json {
        herd_result::write_json_file(&c, p).map_err(Exit::bad_input)?;
    }
    Ok(if c.flags.is_empty() {
        exit::OK
    } else {
        exit::THRESHOLDS_FAILED
    })
}
