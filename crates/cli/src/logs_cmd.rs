//! `herd logs LOG...`: what is in a web server's access log (rate, request types, sizes, time
//! taken, sessions, id popularity), as text, JSON and a self-contained HTML page; and
//! `herd logs --against RESULT SERVER_LOG`: whether the server logged what a run sent.

use crate::exit::{self, Exit};
use herd_args::logs::{LogInput, LogsArgs};
use herd_logs::source::ReadStats;
use herd_logs::summary::LogsReport;
use std::path::Path;

/// Reads and analyses the logs; `warn` tells of bad lines on stderr (`herd logs` shows them in
/// its summary instead).
pub fn analyse(input: &LogInput, warn: bool) -> Result<LogsReport, Exit> {
    let (report, stats) = input.input().analyse().map_err(Exit::bad_input)?;
    if warn {
        warn_bad(&stats);
    }
    Ok(report)
}

/// Bad lines are not fatal, but the user hears of them (stderr, so stdout stays clean).
pub fn warn_bad(s: &ReadStats) {
    if let Some(said) = herd_logs::input::bad_lines(s) {
        eprintln!("herd: {said}");
    }
}

pub fn cmd(a: &LogsArgs) -> Result<i32, Exit> {
    crate::outputs::check_path("--json", a.json.as_deref())?;
    crate::outputs::check_path("-o", a.output.as_deref())?;
    if let Some(result) = &a.against {
        return against_cmd(a, result);
    }
    let report = analyse(&a.input, false)?;
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
    let files = a.input.files.files();
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
