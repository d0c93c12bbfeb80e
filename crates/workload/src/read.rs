//! Typed reading of YAML nodes that keeps going after a problem: every reader records a
//! [`Diag`] and returns `None`, so one pass over the file finds everything that is wrong.

use crate::diag::{did_you_mean, Diag, Pos};
use crate::yaml::{Node, Value};
use std::time::Duration;

#[derive(Default)]
pub struct Reader {
    pub diags: Vec<Diag>,
    /// The workload file's folder: files it names (data, uploads) are relative to it.
    pub base: std::path::PathBuf,
}

/// The entries of a mapping whose keys were checked against the known ones.
pub struct Fields<'n> {
    entries: &'n [(Node, Node)],
}

impl<'n> Fields<'n> {
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.scalar() == Some(key))
            .map(|(_, v)| v)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn entries(&self) -> &'n [(Node, Node)] {
        self.entries
    }
}

impl Reader {
    pub fn report(&mut self, d: Diag) {
        self.diags.push(d);
    }

    pub fn error(&mut self, at: Pos, msg: impl Into<String>) {
        self.diags.push(Diag::new(at, msg));
    }

    /// A mapping whose keys must be among `known`; unknown keys are reported with a suggestion.
    pub fn fields<'n>(&mut self, node: &'n Node, what: &str, known: &[&str]) -> Option<Fields<'n>> {
        let Value::Map(entries) = &node.value else {
            self.report(Diag::new(
                node.at,
                format!("{what} must be a mapping of keys, not {}", node.kind()),
            ));
            return None;
        };
        let mut seen: Vec<&str> = Vec::new();
        for (k, _) in entries {
            let Some(key) = k.scalar() else {
                self.error(k.at, format!("keys of {what} must be plain words"));
                continue;
            };
            if seen.contains(&key) {
                self.error(k.at, format!("`{key}` is given twice in {what}"));
            }
            seen.push(key);
            if !known.is_empty() && !known.contains(&key) {
                let hint = did_you_mean(key, known.iter().copied())
                    .unwrap_or_else(|| format!("expected one of: {}", known.join(", ")));
                self.report(Diag::new(k.at, format!("unknown key `{key}` in {what}")).hint(hint));
            }
        }
        Some(Fields { entries })
    }

    /// A mapping with any keys (headers, form fields, data sources).
    pub fn map<'n>(&mut self, node: &'n Node, what: &str) -> Option<Fields<'n>> {
        self.fields(node, what, &[])
    }

    pub fn seq<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Node]> {
        match &node.value {
            Value::Seq(items) => Some(items),
            _ => {
                self.error(
                    node.at,
                    format!("{what} must be a list, not {}", node.kind()),
                );
                None
            }
        }
    }

    pub fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.value {
            Value::Scalar { text, .. } if !node.is_null() => Some(text.clone()),
            _ => {
                self.error(
                    node.at,
                    format!("{what} must be a text value, not {}", node.kind()),
                );
                None
            }
        }
    }

    pub fn number(&mut self, node: &Node, what: &str) -> Option<f64> {
        let n = node
            .scalar()
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|f| f.is_finite());
        if n.is_none() {
            self.report(Diag::new(
                node.at,
                format!("{what} must be a number, not `{}`", shown(node)),
            ));
        }
        n
    }

    pub fn count(&mut self, node: &Node, what: &str) -> Option<u64> {
        let n = node.scalar().and_then(|t| t.trim().parse::<u64>().ok());
        if n.is_none() {
            self.report(Diag::new(
                node.at,
                format!("{what} must be a whole number, not `{}`", shown(node)),
            ));
        }
        n
    }

    pub fn boolean(&mut self, node: &Node, what: &str) -> Option<bool> {
        match node.scalar() {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => {
                self.report(
                    Diag::new(
                        node.at,
                        format!("{what} must be true or false, not `{}`", shown(node)),
                    )
                    .hint("write true or false"),
                );
                None
            }
        }
    }

    pub fn duration(&mut self, node: &Node, what: &str) -> Option<Duration> {
        let text = node.scalar().unwrap_or_default();
        match parse_duration(text) {
            Ok(d) => Some(d),
            Err(_) => {
                self.report(
                    Diag::new(
                        node.at,
                        format!("{what}: `{}` is not a duration", shown(node)),
                    )
                    .hint(herd_result::units::DURATION_HINT),
                );
                None
            }
        }
    }
}

/// A short rendering of a node for messages.
pub fn shown(node: &Node) -> String {
    match &node.value {
        Value::Scalar { text, .. } => text.clone(),
        Value::Seq(_) => "[...]".into(),
        Value::Map(_) => "{...}".into(),
    }
}

/// `500ms`, `30s`, `5m`, `1h30m`: a duration in a workload file needs its unit (docs/units.md).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    herd_result::units::duration(s, herd_result::units::Bare::Refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        for (s, ms) in [
            ("30s", 30_000),
            ("5m", 300_000),
            ("250ms", 250),
            ("1.5s", 1_500),
        ] {
            assert_eq!(parse_duration(s), Ok(Duration::from_millis(ms)), "{s}");
        }
        for bad in ["10 parsecs", "", "-3s", "fast", "1.5"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
