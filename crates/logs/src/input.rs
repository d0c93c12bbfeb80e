//! The logs a command reads, as the user named them (`herd logs`, `herd model`, `herd
//! replay`): the files, their format and JSON fields, how to analyse them; read into a report
//! or held against a run's result; and what to say of the lines that could not be read.

use crate::against::{Against, Comparison, RunSide};
use crate::analysis::Analyzer;
use crate::source::{read_logs, FormatSpec, ReadStats};
use crate::summary::LogsReport;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which logs and how they are written.
#[derive(Debug, Clone, Default)]
pub struct Files {
    /// Merged in time order; gzip read as is.
    pub logs: Vec<PathBuf>,
    /// `auto`, `common`, `combined`, `json`, an Apache LogFormat or an nginx log_format line.
    pub format: String,
    /// JSON lines: which key holds what (`time=ts,uri=url`).
    pub fields: Option<String>,
}

impl Files {
    pub fn spec(&self) -> Result<FormatSpec, String> {
        FormatSpec::parse(&self.format).map_err(|e| e.to_string())
    }

    /// Every record to `each`, in time order; what was read and skipped.
    pub fn read(&self, each: impl FnMut(&crate::record::Record)) -> Result<ReadStats, String> {
        read_logs(&self.logs, &self.spec()?, self.fields.as_deref(), each)
            .map_err(|e| e.to_string())
    }
}

/// The logs and how to name their request types and sessions (`logs` and `model`).
#[derive(Debug, Clone, Default)]
pub struct Input {
    pub files: Files,
    /// Request types named by the user, first match wins.
    pub patterns: Vec<String>,
    /// A client's session ends after this long without a page request.
    pub session_idle: Duration,
}

impl Input {
    /// Reads and analyses the logs; the report holds what was read and skipped.
    pub fn analyse(&self) -> Result<(LogsReport, ReadStats), String> {
        let mut a = Analyzer::new(&self.patterns, self.session_idle.as_secs().max(1));
        let stats = self.files.read(|r| a.add(r))?;
        Ok((a.finish(&stats), stats))
    }
}

/// Bad lines are not fatal, but the user hears of them: how many, and the first ones with
/// where they are. `None` when every line was read.
pub fn bad_lines(s: &ReadStats) -> Option<String> {
    if s.bad == 0 {
        return None;
    }
    let mut out = format!(
        "{} of {} lines could not be read ({:.2}%) and were skipped; the first:",
        herd_result::format::count(s.bad),
        herd_result::format::count(s.lines),
        100.0 * s.bad as f64 / s.lines.max(1) as f64
    );
    for b in &s.bad_samples {
        out.push_str(&format!(
            "\n  {}:{}: {}: {}",
            b.file, b.line, b.reason, b.text
        ));
    }
    Some(out)
}

/// A `herd logs --json` file, when `path` holds one (`kind: "logs"`): `herd report` shows it.
pub fn read_report_json(path: &Path) -> Option<Result<LogsReport, String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    if value.get("kind").and_then(|k| k.as_str()) != Some("logs") {
        return None;
    }
    Some(serde_json::from_value(value).map_err(|e| {
        format!(
            "{}: not a `herd logs --json` file this herd can read: {e}",
            path.display()
        )
    }))
}

/// `herd logs --against RESULT`: the run's result against the server's logs, counts apart by
/// more than `tolerance_percent` flagged.
pub fn against(
    files: &Files,
    result: &Path,
    tolerance_percent: f64,
) -> Result<(Comparison, ReadStats), String> {
    use herd_result::{read_document, Document};
    let doc = read_document(result).map_err(|e| e.to_string())?;
    let Document::Run(run) = doc else {
        return Err(format!(
            "{}: --against takes a run's result, not a {}",
            result.display(),
            doc.kind()
        ));
    };
    let side = RunSide::of(&run)?;
    let mut cmp = Against::new(side, tolerance_percent);
    let stats = files.read(|r| cmp.add(r))?;
    Ok((cmp.finish(), stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_lines_are_counted_and_shown_and_a_clean_read_says_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("access.log");
        let good =
            "1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"c\"\n";
        std::fs::write(&log, format!("{good}not a log line\n")).unwrap();
        let input = Input {
            files: Files {
                logs: vec![log.clone()],
                format: "combined".into(),
                fields: None,
            },
            session_idle: Duration::from_secs(1800),
            ..Input::default()
        };
        let (report, stats) = input.analyse().unwrap();
        assert_eq!(report.input.records, 1);
        let said = bad_lines(&stats).unwrap();
        assert!(
            said.starts_with("1 of 2 lines could not be read (50.00%)"),
            "{said}"
        );
        assert!(said.contains("not a log line"), "{said}");
        std::fs::write(&log, good).unwrap();
        assert!(bad_lines(&input.analyse().unwrap().1).is_none());
        assert!(read_report_json(&log).is_none());
    }
}
