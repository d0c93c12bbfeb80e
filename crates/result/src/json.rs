//! Writing a result as JSON, and reading one back with an error that says what is wrong.

use crate::histogram::check_histograms;
use crate::{ReportError, RunResult, HERD_VERSION};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// Writes a result (a run, a sweep, a capacity search) as pretty JSON followed by a newline.
pub fn write_json(r: &impl Serialize, mut w: impl Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut w, r)?;
    w.write_all(b"\n")
}

/// Writes a result as [`write_json`] does into the file at `path`; the message names it.
pub fn write_json_file(r: &impl Serialize, path: &Path) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(fail)?;
    let mut w = std::io::BufWriter::new(file);
    write_json(r, &mut w).and_then(|()| w.flush()).map_err(fail)
}

/// Reads a result written by [`write_json`].
pub fn read_json(path: impl AsRef<Path>) -> Result<RunResult, ReportError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_json(&text, &path.display().to_string())
}

/// Parses a result; `origin` names the text's source in errors (a path, `"stdin"`).
///
/// The checks go from coarse to fine so the error names the first thing that is wrong: not
/// JSON, not a herd result, a herd version this one cannot read, not a run, and only then a
/// field that does not fit.
pub fn parse_json(text: &str, origin: &str) -> Result<RunResult, ReportError> {
    parse_json_kind(text, origin, "run")
}

/// Parses a result of the given `kind`, with the same checks as [`parse_json`].
pub fn parse_json_kind<T: DeserializeOwned>(
    text: &str,
    origin: &str,
    expected: &str,
) -> Result<T, ReportError> {
    let text = &*crate::stream::complete(text, origin)?;
    let header = check(text, origin)?;
    if header.kind != expected {
        return Err(ReportError::WrongKind {
            origin: origin.to_owned(),
            kind: header.kind,
            expected: format!("a `{expected}` result"),
        });
    }
    parse_run(text, origin, header.version)
}

/// The kinds of file herd writes; any other `kind` is from a herd newer than this one.
const KINDS: [&str; 4] = ["run", "sweep", "capacity", "compare"];

/// Every check that does not depend on the type read, in the order that names the first thing
/// wrong: empty, cut short, not JSON, not herd's, a version or kind this herd does not know, a
/// damaged histogram. Every command reads files through here, so each says the same thing.
pub(crate) fn check(text: &str, origin: &str) -> Result<Header, ReportError> {
    let value = parse_value(text, origin)?;
    let header = check_header(&value, origin)?;
    if !KINDS.contains(&header.kind.as_str()) {
        return Err(ReportError::UnknownKind {
            origin: origin.to_owned(),
            kind: header.kind,
            ours: HERD_VERSION,
        });
    }
    check_histograms(&value, origin)?;
    Ok(header)
}

/// What every herd result starts with.
pub(crate) struct Header {
    pub version: String,
    pub kind: String,
}

pub(crate) fn parse_value(text: &str, origin: &str) -> Result<Value, ReportError> {
    let origin = origin.to_owned();
    if text.trim().is_empty() {
        return Err(ReportError::Empty { origin });
    }
    serde_json::from_str(text).map_err(|source| {
        // A result cut short (a full disk, a copy interrupted) ends inside a value: say so
        // rather than quoting serde's "EOF while parsing an object".
        if source.classify() == serde_json::error::Category::Eof {
            ReportError::Truncated {
                origin,
                line: source.line(),
            }
        } else {
            ReportError::NotJson { origin, source }
        }
    })
}

/// Checks that `value` is a herd result of a version this herd reads, and says what kind it is.
pub(crate) fn check_header(value: &Value, origin: &str) -> Result<Header, ReportError> {
    let not_herd = |reason: String| ReportError::NotHerd {
        origin: origin.to_owned(),
        reason,
    };
    let Some(object) = value.as_object() else {
        return Err(not_herd(format!(
            "the top level is {}, not an object",
            kind_of(value)
        )));
    };
    let version = match object.get("herd_version") {
        Some(Value::String(v)) => v.clone(),
        Some(other) => {
            return Err(not_herd(format!(
                "`herd_version` is {}, not a string",
                kind_of(other)
            )))
        }
        None => return Err(not_herd("it has no `herd_version` key".to_owned())),
    };
    let Some(Value::String(kind)) = object.get("kind") else {
        return Err(not_herd("it has no string `kind` key".to_owned()));
    };
    if !readable(&version) {
        return Err(ReportError::UnknownVersion {
            origin: origin.to_owned(),
            found: version,
            ours: HERD_VERSION,
            supported: supported_versions(),
        });
    }
    Ok(Header {
        version,
        kind: kind.clone(),
    })
}

/// Parses a result whose header was checked. Parses the text again rather than the Value:
/// serde_json then reports line and column.
pub(crate) fn parse_run<T: DeserializeOwned>(
    text: &str,
    origin: &str,
    version: String,
) -> Result<T, ReportError> {
    serde_json::from_str(text).map_err(|source| ReportError::Malformed {
        origin: origin.to_owned(),
        version,
        source,
    })
}

/// The part of a version that must match for the format to be the same: the major version, or
/// for 0.x releases the minor one too (Cargo's rule for compatible versions).
fn compat_key(version: &str) -> Option<(u64, u64)> {
    let core = version.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    let (major, minor, _patch) = (parts.next()??, parts.next()??, parts.next()??);
    Some(if major == 0 { (0, minor) } else { (major, 0) })
}

fn readable(version: &str) -> bool {
    compat_key(version).is_some() && compat_key(version) == compat_key(HERD_VERSION)
}

fn supported_versions() -> String {
    match compat_key(HERD_VERSION) {
        Some((0, minor)) => format!("0.{minor}.x"),
        Some((major, _)) => format!("{major}.x"),
        None => HERD_VERSION.to_owned(),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatible_versions_follow_cargo_rules() {
        let table = [
            ("0.1.0", Some((0, 1))),
            ("0.1.7-beta.2", Some((0, 1))),
            ("0.2.0", Some((0, 2))),
            ("1.4.2+build", Some((1, 0))),
            ("1.4", None),
            ("banana", None),
        ];
        for (v, want) in table {
            assert_eq!(compat_key(v), want, "{v}");
        }
    }

    #[test]
    fn reading_says_what_is_wrong() {
        let not_json = parse_json("{oops", "a.json").unwrap_err();
        assert!(
            matches!(not_json, ReportError::NotJson { .. }),
            "{not_json}"
        );
        let cut = parse_json("{\n\"herd_version\": \"0.1.0\",\n\"kind\": \"ru", "c.json");
        assert_eq!(
            cut.unwrap_err().to_string(),
            "c.json is cut short: its JSON ends at line 3 before it is complete \
             (was it still being written, or copied in part?)"
        );
        let empty = parse_json(" \n", "e.json").unwrap_err().to_string();
        assert_eq!(empty, "e.json is empty: expected a herd result (JSON)");

        let array = parse_json("[1, 2]", "a.json").unwrap_err().to_string();
        assert_eq!(
            array,
            "a.json is not a herd result: the top level is an array, not an object"
        );

        let other_tool = parse_json(r#"{"requests": 10}"#, "k6.json")
            .unwrap_err()
            .to_string();
        assert_eq!(
            other_tool,
            "k6.json is not a herd result: it has no `herd_version` key"
        );

        let compare = parse_json(
            &format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "compare"}}"#),
            "c.json",
        );
        assert!(
            matches!(compare, Err(ReportError::WrongKind { ref kind, .. }) if kind == "compare")
        );
        let banana = parse_json(
            &format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "banana"}}"#),
            "b.json",
        );
        assert!(
            matches!(banana, Err(ReportError::UnknownKind { ref kind, .. }) if kind == "banana")
        );

        let future = parse_json(r#"{"herd_version": "99.0.0", "kind": "run"}"#, "new.json")
            .unwrap_err()
            .to_string();
        assert!(future.contains("written by herd 99.0.0"), "{future}");
        assert!(future.contains(&supported_versions()), "{future}");

        let broken = parse_json(
            &format!(r#"{{"herd_version": "{HERD_VERSION}", "kind": "run"}}"#),
            "b.json",
        );
        let broken = broken.unwrap_err().to_string();
        assert!(
            broken.contains("does not match its format") && broken.contains("missing field"),
            "{broken}"
        );
    }

    #[test]
    fn unreadable_file_names_the_path() {
        let err = read_json("/nonexistent/herd-result.json")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot read /nonexistent/herd-result.json"),
            "{err}"
        );
    }
}
