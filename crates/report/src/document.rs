//! Any result `herd report` can show: a run, or a series of runs (a sweep or a capacity search).
//!
//! Runs are read into [`RunResult`]. Sweeps and capacity searches are kept as JSON values and
//! read by key when rendered, so a report shows whatever sections a result carries.

use crate::json::{check_header, parse_run, parse_value};
use crate::{ReportError, RunResult};
use serde_json::Value;
use std::path::Path;

/// A result file, read and checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    Run(Box<RunResult>),
    /// A `sweep` or `capacity` result: `kind` says which.
    Series {
        kind: String,
        value: Value,
    },
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
    let value = parse_value(text, origin)?;
    let header = check_header(&value, origin)?;
    match header.kind.as_str() {
        "run" => Ok(Document::Run(Box::new(parse_run(
            text,
            origin,
            header.version,
        )?))),
        "sweep" | "capacity" => Ok(Document::Series {
            kind: header.kind,
            value,
        }),
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
        let sweep =
            format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "sweep", "steps": []}}"#);
        assert!(matches!(
            parse_document(&sweep, "s.json"),
            Ok(Document::Series { ref kind, .. }) if kind == "sweep"
        ));
        let odd = format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "banana"}}"#);
        let err = parse_document(&odd, "b.json").unwrap_err().to_string();
        assert_eq!(
            err,
            "b.json is a herd `banana` result; expected a `run`, `sweep` or `capacity` result"
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
