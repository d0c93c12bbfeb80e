//! The sweep's stop rule: criteria of a healthy step, and what in a step breaks them. herd-series
//! applies it step by step.

use super::Row;
use crate::capacity::{objective, Figure, Measured, Objective};
use crate::criteria::{Criteria, Op};
use serde::{Deserialize, Serialize};

/// When a sweep stops early: a target is past saturation at a step when its errors or its p99
/// break a limit, and the sweep stops once every target has been past it for `consecutive`
/// steps in a row. One bad step can be a hiccup; two in a row are a trend.
///
/// The limits are criteria of a healthy step in the one grammar ([`crate::criteria`]), read
/// into objectives as `--slo` reads them: `--stop "p99 < 100ms, errors <= 10%"`;
/// `--stop-errors 10%` is `errors <= 10%`; `--stop "ttft p99 < 500ms"` limits event streams'
/// time to first token (and `itl` the gaps between tokens).
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
    /// Limits on event streams' time to first token and gaps between tokens (`ttft p99 <
    /// 500ms`, `itl p99 < 50ms`), as `--slo` holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<Objective>,
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
            streams: Vec::new(),
        }
    }
}

impl StopRule {
    /// A rule from criteria of a healthy step, e.g. `p99 < 100ms, errors < 5%`: upper limits
    /// (`<`, `<=`) on the whole run's p99 and errors, and on event streams' `ttft` and `itl`
    /// percentiles; each read by the one reader of `--slo`'s objectives. Every problem is
    /// reported at once.
    pub fn parse(text: &str) -> Result<StopRule, String> {
        let (items, diags) = Criteria::parse_all(text);
        let mut problems: Vec<(usize, String)> =
            diags.iter().map(|d| (d.column, d.to_string())).collect();
        let mut rule = StopRule {
            max_error_percent: None,
            ..StopRule::default()
        };
        for c in &items {
            let unfit = || {
                format!(
                    "column {}: `{}`: the stop rule takes the whole run's p99 and errors, and \
                     event streams' ttft and itl, e.g. \"p99 < 100ms, errors < 10%\" or \
                     \"ttft p99 < 500ms\"",
                    c.column, c.text
                )
            };
            if c.name.is_some() {
                problems.push((c.column, unfit()));
                continue;
            }
            match objective(c) {
                Ok(Objective::Errors {
                    max_percent,
                    inclusive,
                }) => {
                    rule.max_error_percent = Some(max_percent);
                    rule.errors_strict = !inclusive;
                }
                Ok(Objective::Latency {
                    percentile: 99.0,
                    max_ms,
                    inclusive,
                    of: Figure::Latency,
                }) => {
                    rule.max_p99_ms = Some(max_ms);
                    rule.p99_strict = !inclusive;
                }
                Ok(o @ Objective::Latency { of, .. }) if of != Figure::Latency => {
                    rule.streams.push(o)
                }
                Ok(_) => problems.push((c.column, unfit())),
                Err(e) => problems.push((c.column, e)),
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

    /// What in `row` (and, for the event streams' limits, `run`: what an SLO reads of the
    /// step's run) is past the limits, or `None` when nothing is.
    pub fn breach(&self, row: &Row, run: &Measured) -> Option<String> {
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
        why.extend(self.streams.iter().filter_map(|o| o.broken(run)));
        (!why.is_empty()).then(|| why.join(", "))
    }
}
