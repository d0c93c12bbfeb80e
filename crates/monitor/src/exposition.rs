//! The Prometheus text exposition format (version 0.0.4), as node_exporter and the client
//! libraries write it:
//!
//! ```text
//! # HELP http_requests_total Requests served.
//! # TYPE http_requests_total counter
//! http_requests_total{method="post",code="200"} 1027 1395066363000
//! process_resident_memory_bytes 2.5e+07
//! ```
//!
//! One sample per line: a metric name, optional labels (values in double quotes, with `\\`,
//! `\"` and `\n` escaped), a float value (`NaN`, `+Inf` and `-Inf` included) and an optional
//! timestamp in milliseconds. `# HELP` and `# TYPE` lines describe a metric family; any other
//! line starting with `#` is a comment. A line that fits none of this fails the whole
//! exposition, as it fails a Prometheus scrape: half a scrape read as a whole one would be a lie.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The `# TYPE` of a metric family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// Only goes up (or resets to zero): herd keeps its per-second rate.
    Counter,
    /// A value that goes up and down: herd keeps the value.
    Gauge,
    /// `_bucket`, `_sum` and `_count` series, all cumulative.
    Histogram,
    /// Quantile series (values) and `_sum`, `_count` (cumulative).
    Summary,
    /// No `# TYPE` line: kept as a value.
    Untyped,
}

impl MetricKind {
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
            MetricKind::Summary => "summary",
            MetricKind::Untyped => "untyped",
        }
    }

    fn parse(s: &str) -> Option<MetricKind> {
        Some(match s {
            "counter" => MetricKind::Counter,
            "gauge" => MetricKind::Gauge,
            "histogram" => MetricKind::Histogram,
            "summary" => MetricKind::Summary,
            "untyped" => MetricKind::Untyped,
            _ => return None,
        })
    }
}

/// One line of samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub name: String,
    /// Sorted by name, so a series has one identity whatever order the exporter wrote.
    pub labels: BTreeMap<String, String>,
    pub value: f64,
    pub timestamp_ms: Option<i64>,
}

/// A parsed exposition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exposition {
    /// `# TYPE` by family name.
    pub kinds: HashMap<String, MetricKind>,
    /// `# HELP` by family name, unescaped.
    pub help: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

/// Why an exposition could not be read: the line (from 1) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

impl Exposition {
    /// The family kind a sample belongs to, and whether its value is cumulative (a counter, or
    /// a histogram's or summary's `_bucket`, `_sum` and `_count`), so that its rate is what
    /// means something.
    pub fn kind_of(&self, sample_name: &str) -> (MetricKind, bool) {
        if let Some(&k) = self.kinds.get(sample_name) {
            return (k, k == MetricKind::Counter);
        }
        for suffix in ["_bucket", "_sum", "_count"] {
            if let Some(base) = sample_name.strip_suffix(suffix) {
                match self.kinds.get(base) {
                    Some(&k @ (MetricKind::Histogram | MetricKind::Summary)) => return (k, true),
                    _ => continue,
                }
            }
        }
        (MetricKind::Untyped, false)
    }
}

/// Parses a whole exposition.
pub fn parse(text: &str) -> Result<Exposition, ParseError> {
    let mut out = Exposition::default();
    for (i, raw) in text.lines().enumerate() {
        let err = |message: String| ParseError {
            line: i + 1,
            message,
        };
        let line = raw.trim_start_matches([' ', '\t']);
        if line.trim_end().is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            descriptor(comment, &mut out).map_err(err)?;
            continue;
        }
        out.samples.push(sample(line).map_err(err)?);
    }
    Ok(out)
}

/// A `#` line: `HELP` and `TYPE` are read, anything else is a comment.
fn descriptor(comment: &str, out: &mut Exposition) -> Result<(), String> {
    let rest = comment.trim_start_matches([' ', '\t']);
    let (keyword, rest) = split_token(rest);
    if keyword != "HELP" && keyword != "TYPE" {
        return Ok(());
    }
    let (name, rest) = split_token(rest);
    if !is_metric_name(name) {
        return Err(format!("`# {keyword}` names no valid metric: {name:?}"));
    }
    if keyword == "HELP" {
        out.help.insert(name.to_owned(), unescape_help(rest));
        return Ok(());
    }
    let kind_word = rest.trim_end_matches([' ', '\t', '\r']);
    let kind = MetricKind::parse(kind_word).ok_or_else(|| {
        format!(
            "unknown type {kind_word:?} for {name} (counter, gauge, histogram, summary or untyped)"
        )
    })?;
    if out.kinds.insert(name.to_owned(), kind).is_some() {
        return Err(format!("a second `# TYPE` line for {name}"));
    }
    Ok(())
}

/// `name{labels} value [timestamp]`.
fn sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if !is_metric_name(name) {
        return Err(format!(
            "a sample line must start with a metric name: {line:?}"
        ));
    }
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after) = rest.strip_prefix('{') {
        let (parsed, after) = parse_labels(after)?;
        labels = parsed;
        rest = after;
    }
    let mut fields = rest.split_ascii_whitespace();
    if !rest.starts_with([' ', '\t']) {
        return Err(format!("expected a blank and a value after {name}"));
    }
    let value_text = fields
        .next()
        .ok_or_else(|| format!("{name} has no value"))?;
    let value =
        parse_value(value_text).ok_or_else(|| format!("{name}: {value_text:?} is not a number"))?;
    let timestamp_ms = match fields.next() {
        None => None,
        Some(t) => Some(
            t.parse::<i64>()
                .map_err(|_| format!("{name}: timestamp {t:?} is not whole milliseconds"))?,
        ),
    };
    if let Some(extra) = fields.next() {
        return Err(format!("{name}: unexpected {extra:?} after the timestamp"));
    }
    Ok(Sample {
        name: name.to_owned(),
        labels,
        value,
        timestamp_ms,
    })
}

/// Labels after the `{`, up to and including the `}`; returns them and the rest of the line.
/// Shared with [`crate::Selector`], whose label matchers are written the same way.
pub(crate) fn parse_labels(mut s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    loop {
        s = s.trim_start_matches([' ', '\t']);
        if let Some(rest) = s.strip_prefix('}') {
            return Ok((labels, rest));
        }
        let (name, _, value, rest) = parse_label(s, &["="])?;
        if labels.insert(name.clone(), value).is_some() {
            return Err(format!("label {name} appears twice"));
        }
        s = rest.trim_start_matches([' ', '\t']);
        if let Some(rest) = s.strip_prefix(',') {
            s = rest;
        } else if !s.starts_with('}') {
            return Err("labels must be separated by ',' and closed by '}'".to_owned());
        }
    }
}

/// `name<op>"value"` with one of `ops` (tried in order); returns the name, which operator, the
/// unescaped value and the rest of the text.
pub(crate) fn parse_label<'a>(
    s: &'a str,
    ops: &[&str],
) -> Result<(String, usize, String, &'a str), String> {
    let name_end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let name = &s[..name_end];
    if !is_label_name(name) {
        return Err(format!("expected a label name at {:?}", shorten(s)));
    }
    let rest = s[name_end..].trim_start_matches([' ', '\t']);
    let op = ops
        .iter()
        .position(|op| rest.starts_with(op))
        .ok_or_else(|| format!("expected {} after label {name}", ops.join(" or ")))?;
    let rest = rest[ops[op].len()..].trim_start_matches([' ', '\t']);
    let rest = rest
        .strip_prefix('"')
        .ok_or_else(|| format!("the value of label {name} must be in double quotes"))?;
    let mut value = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((name.to_owned(), op, value, &rest[i + 1..])),
            '\\' => match chars.next() {
                Some((_, '\\')) => value.push('\\'),
                Some((_, '"')) => value.push('"'),
                Some((_, 'n')) => value.push('\n'),
                Some((_, other)) => {
                    return Err(format!(
                        "label {name}: invalid escape \\{other} (only \\\\, \\\" and \\n)"
                    ))
                }
                None => break,
            },
            '\n' => break,
            c => value.push(c),
        }
    }
    Err(format!("the value of label {name} has no closing quote"))
}

/// Go's `strconv.ParseFloat`, which writers use: decimal floats and `NaN`, `+Inf`, `-Inf`
/// (any case).
fn parse_value(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "nan" => Some(f64::NAN),
        "+inf" | "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        lower if lower.contains("inf") || lower.contains("nan") => None,
        _ => s.parse().ok(),
    }
}

fn unescape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.trim_end_matches('\r').chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The first blank-separated token and what follows it (blanks after the token skipped).
fn split_token(s: &str) -> (&str, &str) {
    match s.find([' ', '\t']) {
        Some(i) => (&s[..i], s[i..].trim_start_matches([' ', '\t'])),
        None => (s, ""),
    }
}

pub(crate) fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn shorten(s: &str) -> &str {
    match s.char_indices().nth(30) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A line, and the name, labels, value and timestamp it holds.
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], f64, Option<i64>);

    #[test]
    fn sample_lines() {
        let table: &[Case] = &[
            ("up 1", "up", &[], 1.0, None),
            ("node_load1 0.52", "node_load1", &[], 0.52, None),
            ("x 2.5e+07", "x", &[], 2.5e7, None),
            ("x -3", "x", &[], -3.0, None),
            ("x +Inf", "x", &[], f64::INFINITY, None),
            ("x -Inf", "x", &[], f64::NEG_INFINITY, None),
            ("x 1 1395066363000", "x", &[], 1.0, Some(1_395_066_363_000)),
            ("x 1 -5", "x", &[], 1.0, Some(-5)),
            ("x{} 7", "x", &[], 7.0, None),
            ("  x\t\t7  ", "x", &[], 7.0, None),
            (
                "ns:sub_metric:rate5m 3",
                "ns:sub_metric:rate5m",
                &[],
                3.0,
                None,
            ),
            (
                r#"http_requests_total{method="post",code="200"} 1027 1395066363000"#,
                "http_requests_total",
                &[("code", "200"), ("method", "post")],
                1027.0,
                Some(1_395_066_363_000),
            ),
            (
                r#"node_cpu_seconds_total{cpu="0",mode="idle",} 707.33"#,
                "node_cpu_seconds_total",
                &[("cpu", "0"), ("mode", "idle")],
                707.33,
                None,
            ),
            (
                r#"msdos_file_access_time_seconds{path="C:\\DIR\\FILE.TXT",error="Cannot find file:\n\"FILE.TXT\""} 1.458255915e9"#,
                "msdos_file_access_time_seconds",
                &[
                    ("error", "Cannot find file:\n\"FILE.TXT\""),
                    ("path", r"C:\DIR\FILE.TXT"),
                ],
                1.458255915e9,
                None,
            ),
            (
                r#"x{a = "1" , b="}{,="} 2"#,
                "x",
                &[("a", "1"), ("b", "}{,=")],
                2.0,
                None,
            ),
            (r#"x{a="ünïcödé"} 2"#, "x", &[("a", "ünïcödé")], 2.0, None),
        ];
        for (line, name, want_labels, value, ts) in table {
            let e = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let s = &e.samples[0];
            assert_eq!(s.name, *name, "{line}");
            assert_eq!(s.labels, labels(want_labels), "{line}");
            assert_eq!(s.value, *value, "{line}");
            assert_eq!(s.timestamp_ms, *ts, "{line}");
        }
        let nan = parse("x NaN").unwrap();
        assert!(nan.samples[0].value.is_nan());
    }

    #[test]
    fn malformed_lines_fail_with_their_line_number() {
        let table = [
            ("1x 2", "metric name"),
            ("x", "blank and a value"),
            ("x{a=\"1\"}", "blank and a value"),
            ("x{a=\"1\"} ", "no value"),
            ("x abc", "not a number"),
            ("x infinity", "not a number"),
            ("x 1 1.5", "whole milliseconds"),
            ("x 1 2 3", "unexpected"),
            ("x{a=1} 2", "double quotes"),
            ("x{a=\"1} 2", "closing quote"),
            ("x{a=\"1\" b=\"2\"} 3", "separated"),
            ("x{a=\"1\",a=\"2\"} 3", "twice"),
            ("x{1a=\"1\"} 3", "label name"),
            ("x{a=\"\\t\"} 3", "invalid escape"),
            ("x{a:b=\"1\"} 3", "expected = after label a"),
            ("# TYPE x countre", "unknown type"),
            ("# TYPE 9x counter", "valid metric"),
        ];
        for (line, want) in table {
            let text = format!("# HELP ok fine\nok 1\n{line}\n");
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, 3, "{line}: {e}");
            assert!(e.message.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn help_type_and_comments() {
        let text =
            "# A comment\n#no space comment\n# HELP a_total Requests \\\\ served.\\nSecond line\n\
                    # TYPE a_total counter\na_total 3\n\n# TYPE g gauge\ng 1\n# EOF\n";
        let e = parse(text).unwrap();
        assert_eq!(e.samples.len(), 2);
        assert_eq!(e.kinds["a_total"], MetricKind::Counter);
        assert_eq!(e.kinds["g"], MetricKind::Gauge);
        assert_eq!(e.help["a_total"], "Requests \\ served.\nSecond line");
        let twice = parse("# TYPE x gauge\n# TYPE x counter\n").unwrap_err();
        assert!(twice.message.contains("second"), "{twice}");
    }

    #[test]
    fn windows_line_endings_are_read() {
        let e = parse("# TYPE x counter\r\nx{a=\"b\"} 1\r\n").unwrap();
        assert_eq!(e.kinds["x"], MetricKind::Counter);
        assert_eq!(e.samples[0].value, 1.0);
    }

    #[test]
    fn which_samples_are_cumulative() {
        let text = "# TYPE c_total counter\n# TYPE g gauge\n# TYPE h histogram\n# TYPE s summary\n\
                    # TYPE bare_sum gauge\n";
        let e = parse(text).unwrap();
        let table = [
            ("c_total", MetricKind::Counter, true),
            ("g", MetricKind::Gauge, false),
            ("h_bucket", MetricKind::Histogram, true),
            ("h_sum", MetricKind::Histogram, true),
            ("h_count", MetricKind::Histogram, true),
            ("s", MetricKind::Summary, false),
            ("s_sum", MetricKind::Summary, true),
            ("s_count", MetricKind::Summary, true),
            ("g_sum", MetricKind::Untyped, false),
            ("bare_sum", MetricKind::Gauge, false),
            ("unknown", MetricKind::Untyped, false),
        ];
        for (name, kind, cumulative) in table {
            assert_eq!(e.kind_of(name), (kind, cumulative), "{name}");
        }
    }
}
