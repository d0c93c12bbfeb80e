//! Which series to keep from a scrape: a metric name, optionally with label matchers written as
//! in PromQL, `node_cpu_seconds_total{mode="idle"}` or `http_requests_total{code!="200"}`.

use crate::exposition::{is_metric_name, parse_label, Sample};
use std::fmt;

/// A metric name and label matchers (`=` and `!=`); every matcher must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub name: String,
    /// `(label, value, equal)`: `equal` for `=`, not for `!=`. A missing label has the value "",
    /// as in PromQL.
    pub matchers: Vec<(String, String, bool)>,
}

impl Selector {
    pub fn parse(s: &str) -> Result<Selector, String> {
        let s = s.trim();
        let (name, rest) = match s.find('{') {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let name = name.trim_end();
        if !is_metric_name(name) {
            return Err(format!(
                "`{s}` does not start with a metric name, e.g. process_cpu_seconds_total or node_cpu_seconds_total{{mode=\"idle\"}}"
            ));
        }
        let mut matchers = Vec::new();
        if let Some(mut rest) = rest {
            loop {
                rest = rest.trim_start();
                if let Some(after) = rest.strip_prefix('}') {
                    if !after.trim().is_empty() {
                        return Err(format!("`{s}`: unexpected text after '}}'"));
                    }
                    break;
                }
                if rest.contains("=~") || rest.contains("!~") {
                    return Err(format!(
                        "`{s}`: regular-expression matchers (=~, !~) are not supported; use = or !="
                    ));
                }
                let (label, op, value, after) =
                    parse_label(rest, &["!=", "="]).map_err(|e| format!("`{s}`: {e}"))?;
                matchers.push((label, value, op == 1));
                rest = after.trim_start();
                if let Some(after) = rest.strip_prefix(',') {
                    rest = after;
                } else if !rest.starts_with('}') {
                    return Err(format!(
                        "`{s}`: matchers must be separated by ',' and closed by '}}'"
                    ));
                }
            }
        }
        Ok(Selector {
            name: name.to_owned(),
            matchers,
        })
    }

    pub fn matches(&self, sample: &Sample) -> bool {
        sample.name == self.name
            && self.matchers.iter().all(|(label, value, equal)| {
                let actual = sample.labels.get(label).map_or("", String::as_str);
                (actual == value) == *equal
            })
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if self.matchers.is_empty() {
            return Ok(());
        }
        f.write_str("{")?;
        for (i, (label, value, equal)) in self.matchers.iter().enumerate() {
            let op = if *equal { "=" } else { "!=" };
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{label}{op}{value:?}")?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn sample(name: &str, labels: &[(&str, &str)]) -> Sample {
        Sample {
            name: name.to_owned(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            value: 1.0,
            timestamp_ms: None,
        }
    }

    #[test]
    fn selectors_people_write() {
        let idle = sample("node_cpu_seconds_total", &[("cpu", "0"), ("mode", "idle")]);
        let user = sample("node_cpu_seconds_total", &[("cpu", "0"), ("mode", "user")]);
        let table: &[(&str, bool, bool)] = &[
            ("node_cpu_seconds_total", true, true),
            ("node_cpu_seconds_total{mode=\"idle\"}", true, false),
            ("node_cpu_seconds_total{ mode = \"idle\" , }", true, false),
            ("node_cpu_seconds_total{mode!=\"idle\"}", false, true),
            (
                "node_cpu_seconds_total{mode=\"idle\",cpu=\"1\"}",
                false,
                false,
            ),
            ("node_cpu_seconds_total{missing=\"\"}", true, true),
            ("node_cpu_seconds_total{}", true, true),
            ("node_cpu", false, false),
        ];
        for (text, want_idle, want_user) in table {
            let sel = Selector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(sel.matches(&idle), *want_idle, "{text} vs idle");
            assert_eq!(sel.matches(&user), *want_user, "{text} vs user");
            // Written back, it reads the same.
            assert_eq!(Selector::parse(&sel.to_string()).unwrap(), sel, "{text}");
        }
    }

    #[test]
    fn bad_selectors_say_what_is_wrong() {
        let table = [
            ("", "metric name"),
            ("9lives", "metric name"),
            ("x{mode=idle}", "double quotes"),
            ("x{mode=~\"i.*\"}", "regular-expression"),
            ("x{mode=\"idle\"", "closed"),
            ("x{mode=\"idle\"} y", "after"),
            ("x{a=\"1\" b=\"2\"}", "separated"),
        ];
        for (text, want) in table {
            let e = Selector::parse(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
