//! Pass/fail criteria: one grammar and one meaning for workload thresholds, `herd capacity
//! --slo` and `herd sweep --stop`.
//!
//! ```text
//! criteria  = term { ("," | " and ") term }
//! term      = [ name ":" ] metric op value       e.g. "item page: p99 < 500ms"
//! metric    = stat | ttft stat | itl stat | errors (error, error-rate) | rps
//! stat      = p50 | p75 | p90 | p95 | p99 | p99.9 (p999) | mean (avg) | min | max
//! op        = "<" | "<=" | ">" | ">="
//! ```
//!
//! A latency needs a time with a unit, errors a percentage with `%`, rps a number (see
//! [`crate::units`]). What each metric measures is in `eval`.

mod eval;
#[cfg(test)]
mod tests;

pub use eval::error_percent;

use crate::units;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// A latency statistic (ms) of responses, from the intended send time.
    Latency(Stat),
    /// Percent of scheduled requests without an OK answer (see [`error_percent`]).
    Errors,
    /// Completed requests per second.
    Rps,
    /// A statistic (ms) of the time to first event (first token) of event streams, from the
    /// intended send time (`ttft p99`).
    Ttft(Stat),
    /// A statistic (ms) of the gaps between events of event streams: inter-token latency
    /// (`itl p99`).
    Itl(Stat),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    P50,
    P75,
    P90,
    P95,
    P99,
    P999,
    Mean,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// Whether `value op limit` holds.
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Op::Lt => value < limit,
            Op::Le => value <= limit,
            Op::Gt => value > limit,
            Op::Ge => value >= limit,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// One condition: `metric op value`, on a request name or the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct Criterion {
    /// The term as written, e.g. `cart: p99 < 500ms`.
    pub text: String,
    /// A request name, or `None` for the whole run.
    pub name: Option<String>,
    pub metric: Metric,
    pub op: Op,
    /// In the metric's unit: ms, percent, or requests per second.
    pub value: f64,
    /// Where the term starts in the text it was read from (1-based), for messages.
    pub column: usize,
}

/// Every criterion must hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Criteria {
    pub items: Vec<Criterion>,
}

/// A problem in the text, at a column (1-based, counted in bytes) of the whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub column: usize,
    pub message: String,
    pub hint: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)?;
        if !self.hint.is_empty() {
            write!(f, " ({})", self.hint)?;
        }
        Ok(())
    }
}

const EXAMPLE: &str = "e.g. \"p99 < 100ms, errors < 1%\", \"rps > 100\", \"cart: p95 < 300ms\"";

const METRICS: [(&str, Metric); 15] = [
    ("p50", Metric::Latency(Stat::P50)),
    ("p75", Metric::Latency(Stat::P75)),
    ("p90", Metric::Latency(Stat::P90)),
    ("p95", Metric::Latency(Stat::P95)),
    ("p99", Metric::Latency(Stat::P99)),
    ("p99.9", Metric::Latency(Stat::P999)),
    ("p999", Metric::Latency(Stat::P999)),
    ("mean", Metric::Latency(Stat::Mean)),
    ("avg", Metric::Latency(Stat::Mean)),
    ("min", Metric::Latency(Stat::Min)),
    ("max", Metric::Latency(Stat::Max)),
    ("errors", Metric::Errors),
    ("error", Metric::Errors),
    ("error-rate", Metric::Errors),
    ("rps", Metric::Rps),
];

impl Criteria {
    /// Parses every term, reporting every problem with its column.
    pub fn parse(text: &str) -> Result<Criteria, Vec<Diagnostic>> {
        let (items, diags) = Criteria::parse_all(text);
        if diags.is_empty() {
            Ok(Criteria { items })
        } else {
            Err(diags)
        }
    }

    /// The terms that parse and the problems of those that do not, so a command that takes
    /// only some criteria (--slo, --stop) can report its own objections with the rest.
    pub fn parse_all(text: &str) -> (Vec<Criterion>, Vec<Diagnostic>) {
        let mut items = Vec::new();
        let mut diags = Vec::new();
        for (at, term) in terms(text) {
            match Criterion::parse_at(term, at) {
                Ok(c) => items.push(c),
                Err(d) => diags.push(d),
            }
        }
        if items.is_empty() && diags.is_empty() {
            diags.push(Diagnostic {
                column: 1,
                message: "no criteria given".to_owned(),
                hint: EXAMPLE.to_owned(),
            });
        }
        (items, diags)
    }
}

/// The terms of `text` with the byte offset where each starts, split at `,` and ` and `.
fn terms(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i <= text.len() {
        let sep = if i == text.len() {
            Some(0)
        } else if text[i..].starts_with(',') {
            Some(1)
        } else if text[i..].starts_with(" and ") {
            Some(5)
        } else {
            None
        };
        match sep {
            Some(len) => {
                let raw = &text[start..i];
                let lead = raw.len() - raw.trim_start().len();
                if !raw.trim().is_empty() {
                    out.push((start + lead, raw.trim()));
                }
                i += len.max(1);
                start = i;
            }
            None => i += text[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

impl Criterion {
    /// One term on its own, e.g. a workload file's threshold entry.
    pub fn parse(term: &str) -> Result<Criterion, Diagnostic> {
        let lead = term.len() - term.trim_start().len();
        Criterion::parse_at(term.trim(), lead)
    }

    /// `term` (trimmed) starts at byte `at` of the text given by the user.
    fn parse_at(term: &str, at: usize) -> Result<Criterion, Diagnostic> {
        let diag = |offset: usize, message: String, hint: &str| Diagnostic {
            column: at + offset + 1,
            message,
            hint: hint.to_owned(),
        };
        let (name, cond, cond_at) = match term.rsplit_once(':') {
            Some((n, _)) if n.trim().is_empty() => {
                return Err(diag(
                    0,
                    format!("`{term}` has an empty request name"),
                    EXAMPLE,
                ))
            }
            Some((n, c)) => (Some(n.trim().to_owned()), c, n.len() + 1),
            None => (None, term, 0),
        };
        let Some(op_at) = cond.find(['<', '>']) else {
            let hint = "compare with <, <=, > or >=";
            return Err(diag(cond_at, format!("`{term}` has no comparison"), hint));
        };
        let rest = &cond[op_at..];
        let (op, len) = match (rest.as_bytes()[0], rest.as_bytes().get(1)) {
            (b'<', Some(b'=')) => (Op::Le, 2),
            (b'>', Some(b'=')) => (Op::Ge, 2),
            (b'<', _) => (Op::Lt, 1),
            _ => (Op::Gt, 1),
        };
        let metric_text = cond[..op_at].trim();
        let metric_at = cond_at + cond.len() - cond.trim_start().len();
        let lower = metric_text.to_ascii_lowercase();
        let (stream, stat_text) = match lower.split_once(char::is_whitespace) {
            Some((figure @ ("ttft" | "itl"), stat)) => (Some(figure), stat.trim()),
            _ => (None, lower.as_str()),
        };
        let found = METRICS.iter().find(|(k, _)| *k == stat_text).map(|m| m.1);
        let metric = match (stream, found) {
            (None, Some(m)) => m,
            (Some("ttft"), Some(Metric::Latency(s))) => Metric::Ttft(s),
            (Some(_), Some(Metric::Latency(s))) => Metric::Itl(s),
            _ if lower == "ttft" || lower == "itl" => {
                let hint = "e.g. \"ttft p99 < 500ms\", \"itl p50 < 50ms\"";
                let msg = format!("`{metric_text}` needs a statistic in `{term}`");
                return Err(diag(metric_at, msg, hint));
            }
            _ => {
                let hint = "one of p50, p75, p90, p95, p99, p99.9, mean, min, max, errors, rps, \
                            or ttft or itl and a statistic (ttft p99)";
                let msg = format!("`{metric_text}` is not a metric in `{term}`");
                return Err(diag(metric_at, msg, hint));
            }
        };
        let value_text = rest[len..].trim();
        let value_at = cond_at + op_at + len + (rest[len..].len() - rest[len..].trim_start().len());
        let value = match metric {
            Metric::Latency(_) | Metric::Ttft(_) | Metric::Itl(_) => units::duration_ms(value_text),
            Metric::Errors => units::percent(value_text, units::Bare::Refused),
            Metric::Rps => units::rate(value_text),
        }
        // The units module's message already says what to write.
        .map_err(|why| diag(value_at, format!("in `{term}`: {why}"), ""))?;
        Ok(Criterion {
            text: term.to_owned(),
            name,
            metric,
            op,
            value,
            column: at + 1,
        })
    }

    /// The unit the metric is measured in, as results show it.
    pub fn unit(&self) -> &'static str {
        match self.metric {
            Metric::Latency(_) | Metric::Ttft(_) | Metric::Itl(_) => "ms",
            Metric::Errors => "%",
            Metric::Rps => "req/s",
        }
    }
}
