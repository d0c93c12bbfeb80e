//! `herd logs LOG...`: what is in a web server's access log (rate, request types, sizes, time
//! taken, sessions, id popularity), as text, JSON and a self-contained HTML page; and
//! `herd logs --against RESULT SERVER_LOG`: whether the server logged what a run sent.

use crate::exit::{self, Exit};
use clap::Args;
use herd_logs::against::{self, Against, RunSide};
use herd_logs::analysis::Analyzer;
use herd_logs::source::{read_logs, FormatSpec, ReadStats};
use herd_logs::summary::LogsReport;
use herd_result::{read_document, Document};
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
        FormatSpec::parse(&self.format).map_err(|e| Exit::bad_input(e.to_string()))
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
        let f = &self.files;
        let spec = f.spec()?;
        let mut a = Analyzer::new(&self.patterns, self.session_idle.as_secs().max(1));
        let stats = read_logs(&f.logs, &spec, f.fields.as_deref(), |r| a.add(r))
            .map_err(|e| Exit::bad_input(e.to_string()))?;
        if warn {
            warn_bad(&stats);
        }
        Ok(a.finish(&stats))
    }
}

/// Bad lines are not fatal, but the user hears of them (stderr, so stdout stays clean).
pub fn warn_bad(s: &ReadStats) {
    if s.bad > 0 {
        eprintln!(
            "herd: {} of {} lines could not be read ({:.2}%) and were skipped; the first:",
            herd_result::format::count(s.bad),
            herd_result::format::count(s.lines),
            100.0 * s.bad as f64 / s.lines.max(1) as f64
        );
        for b in &s.bad_samples {
            eprintln!("  {}:{}: {}: {}", b.file, b.line, b.reason, b.text);
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

/// Fails before the long read when an output file could not be written.
pub fn check_writable(p: &Path) -> Result<(), Exit> {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(Exit::bad_input(format!(
            "cannot write {}: the directory {} does not exist",
            p.display(),
            dir.display()
        )));
    }
    Ok(())
}

fn write(p: &Path, text: &str) -> Result<(), Exit> {
    std::fs::write(p, text)
        .map_err(|e| Exit::bad_input(format!("cannot write {}: {e}", p.display())))
}

pub fn cmd(a: &LogsArgs) -> Result<i32, Exit> {
    for p in a.json.iter().chain(&a.output) {
        check_writable(p)?;
    }
    if let Some(result) = &a.against {
        return against_cmd(a, result);
    }
    let report = a.input.analyse(false)?;
    print!("{}", herd_logs::text::render(&report, a.top));
    if let Some(p) = &a.json {
        write(
            p,
            &(serde_json::to_string_pretty(&report).expect("the report serializes") + "\n"),
        )?;
    }
    if let Some(p) = &a.output {
        write(p, &herd_logs::html::render(&report))?;
    }
    Ok(exit::OK)
}

/// A `herd logs --json` file, when `path` holds one (`kind: "logs"`): `herd report` shows it.
pub fn read_logs_json(path: &Path) -> Option<Result<LogsReport, Exit>> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    if value.get("kind").and_then(|k| k.as_str()) != Some("logs") {
        return None;
    }
    Some(serde_json::from_value(value).map_err(|e| {
        Exit::bad_input(format!(
            "{}: not a `herd logs --json` file this herd can read: {e}",
            path.display()
        ))
    }))
}

fn against_cmd(a: &LogsArgs, result: &Path) -> Result<i32, Exit> {
    let doc = read_document(result).map_err(|e| Exit::bad_input(e.to_string()))?;
    let Document::Run(run) = doc else {
        return Err(Exit::bad_input(format!(
            "{}: --against takes a run's result, not a {}",
            result.display(),
            doc.kind()
        )));
    };
    let side = RunSide::of(&run).map_err(Exit::bad_input)?;
    let mut cmp = Against::new(side, a.tolerance * 100.0);
    let spec = a.input.files.spec()?;
    let stats = read_logs(
        &a.input.files.logs,
        &spec,
        a.input.files.fields.as_deref(),
        |r| cmp.add(r),
    )
    .map_err(|e| Exit::bad_input(e.to_string()))?;
    warn_bad(&stats);
    let c = cmp.finish();
    print!("{}", against::render(&c));
    if let Some(p) = &a.json {
        write(
            p,
            &(serde_json::to_string_pretty(&c).expect("the comparison serializes") + "\n"),
        )?;
    }
    Ok(if c.flags.is_empty() {
        exit::OK
    } else {
        exit::THRESHOLDS_FAILED
    })
}
