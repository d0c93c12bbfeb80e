//! Any result `herd report` can show: a run, a sweep or a capacity search, each read into its
//! own type (the same types `herd run`, `herd sweep` and `herd capacity` write).

use crate::capacity::CapacityResult;
use crate::json::{check, parse_run};
use crate::sweep::SweepResult;
use crate::{ReportError, RunResult};
use std::path::Path;

/// A result file, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    Run(Box<RunResult>),
    Sweep(Box<SweepResult>),
    Capacity(Box<CapacityResult>),
}

impl Document {
    /// `run`, `sweep` or `capacity`: the result's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Document::Run(_) => "run",
            Document::Sweep(_) => "sweep",
            Document::Capacity(_) => "capacity",
        }
    }
}

/// The kinds [`parse_document`] accepts.
const EXPECTED: &str = "a `run`, `sweep` or `capacity` result";

/// Reads any result `herd report` can show, with the errors of [`crate::read_json`].
pub fn read_document(path: impl AsRef<Path>) -> Result<Document, ReportError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_document(&text, &path.display().to_string())
}

/// Parses any result `herd report` can show; `origin` names the text's source in errors.
pub fn parse_document(text: &str, origin: &str) -> Result<Document, ReportError> {
    let text = &*crate::stream::complete(text, origin)?;
    let header = check(text, origin)?;
    match header.kind.as_str() {
        "run" => Ok(Document::Run(Box::new(parse_run(
            text,
            origin,
            header.version,
        )?))),
        "sweep" => Ok(Document::Sweep(Box::new(parse_run(
            text,
            origin,
            header.version,
        )?))),
        "capacity" => Ok(Document::Capacity(Box::new(parse_run(
            text,
            origin,
            header.version,
        )?))),
        _ => Err(ReportError::WrongKind {
            origin: origin.to_owned(),
            kind: header.kind,
            expected: EXPECTED.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HERD_VERSION;

    #[test]
    fn kinds_are_told_apart_and_unknown_ones_named() {
        // A sweep cut short before its first step: the smallest one there is.
        let sweep = format!(
            r#"{{"herd_version": "{HERD_VERSION}", "kind": "sweep", "model": "open", "targets": [],
                "config": {{"levels": [10.0], "step_duration_s": 1.0, "requests_per_step": null,
                            "calls_per_conn": null, "timeout_s": 10.0, "cooldown_s": 0.0,
                            "stop": {{"max_error_percent": 10.0, "max_p99_ms": null, "consecutive": 2}}}},
                "steps": [], "stopped_early": null, "interrupted": true}}"#
        );
        let doc = parse_document(&sweep, "s.json").unwrap();
        assert!(matches!(doc, Document::Sweep(_)));
        assert_eq!(doc.kind(), "sweep");
        // A shape that is not a sweep's is refused with where it went wrong.
        let guessed =
            format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "sweep", "points": []}}"#);
        let err = parse_document(&guessed, "g.json").unwrap_err().to_string();
        assert!(err.starts_with("g.json"), "{err}");
        let odd = format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "compare"}}"#);
        let err = parse_document(&odd, "c.json").unwrap_err().to_string();
        assert_eq!(
            err,
            "c.json is a herd `compare` result; expected a `run`, `sweep` or `capacity` result"
        );
    }

    #[test]
    fn version_is_checked_before_kind() {
        let old = r#"{"herd_version": "0.0.3", "kind": "sweep"}"#;
        let err = parse_document(old, "old.json").unwrap_err().to_string();
        assert!(
            err.starts_with("old.json was written by herd 0.0.3, which this herd"),
            "{err}"
        );
    }
}
