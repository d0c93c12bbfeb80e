//! The sweep's stop rule: criteria of a healthy step, and what in a step breaks them. herd-series
//! applies it step by step.

use super::Row;
use crate::criteria::{Criteria, Metric, Op, Stat};
use serde::{Deserialize, Serialize};

/// When a sweep stops early: a target is past saturation at a step when its errors or its p99
/// break a limit, and the sweep stops once every target has been past it for `consecutive`
/// steps in a row. One bad step can be a hiccup; two in a row are a trend.
///
/// The limits are criteria of a healthy step in the one grammar ([`crate::criteria`]):
/// `--stop "p99 < 100ms, errors <= 10%"`; `--stop-errors 10%` is `errors <= 10%`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Percent of scheduled requests without an OK answer.
    pub max_error_percent: Option<f64>,
    pub max_p99_ms: Option<f64>,
    pub consecutive: u32,
    /// Written with `<`: reaching `max_error_percent` already breaks the rule.
    #[serde(default, skip_serializing_if = "is_false")]
    pub errors_strict: bool,
    /// Written with `<`: reaching `max_p99_ms` already breaks the rule.
    #[serde(default, skip_serializing_if = "is_false")]
    pub p99_strict: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for StopRule {
    fn default() -> Self {
        StopRule {
            max_error_percent: Some(10.0),
            max_p99_ms: None,
            consecutive: 2,
            errors_strict: false,
            p99_strict: false,
        }
    }
}

impl StopRule {
    /// A rule from criteria of a healthy step, e.g. `p99 < 100ms, errors < 5%`: upper limits
    /// (`<`, `<=`) on the whole run's p99 and errors. Every problem is reported at once.
    pub fn parse(text: &str) -> Result<StopRule, String> {
        let (items, diags) = Criteria::parse_all(text);
        let mut problems: Vec<(usize, String)> =
            diags.iter().map(|d| (d.column, d.to_string())).collect();
        let mut rule = StopRule {
            max_error_percent: None,
            ..StopRule::default()
        };
        for c in &items {
            let strict = match c.op {
                Op::Lt => true,
                Op::Le => false,
                Op::Gt | Op::Ge => {
                    problems.push((
                        c.column,
                        format!(
                            "column {}: `{}` is not an upper limit (< or <=)",
                            c.column, c.text
                        ),
                    ));
                    continue;
                }
            };
            match (&c.name, c.metric) {
                (None, Metric::Errors) => {
                    rule.max_error_percent = Some(c.value);
                    rule.errors_strict = strict;
                }
                (None, Metric::Latency(Stat::P99)) => {
                    rule.max_p99_ms = Some(c.value);
                    rule.p99_strict = strict;
                }
                _ => problems.push((
                    c.column,
                    format!(
                        "column {}: `{}`: the stop rule takes the whole run's p99 and errors, \
                         e.g. \"p99 < 100ms, errors < 10%\"",
                        c.column, c.text
                    ),
                )),
            }
        }
        // In the order of the text, whichever step found them.
        problems.sort_by_key(|(column, _)| *column);
        if problems.is_empty() {
            Ok(rule)
        } else {
            let lines: Vec<String> = problems.into_iter().map(|(_, p)| p).collect();
            Err(lines.join("; "))
        }
    }

    /// What in `row` is past the limits, or `None` when nothing is.
    pub fn breach(&self, row: &Row) -> Option<String> {
        let op = |strict| if strict { Op::Lt } else { Op::Le };
        let shown = |strict| if strict { ">=" } else { ">" };
        let mut why = Vec::new();
        if let Some(max) = self.max_error_percent {
            if !op(self.errors_strict).holds(row.errors, max) {
                let s = shown(self.errors_strict);
                why.push(format!("errors {:.1}% {s} {max}%", row.errors));
            }
        }
        if let (Some(max), Some(x)) = (self.max_p99_ms, &row.extra) {
            if !op(self.p99_strict).holds(x.p99, max) {
                why.push(format!(
                    "p99 {:.1} ms {} {max} ms",
                    x.p99,
                    shown(self.p99_strict)
                ));
            }
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}
