//! The sweep's stop rule and the saturation tracker that applies it step by step.

use super::Row;
use crate::criteria::{Criteria, Metric, Op, Stat};
use crate::GeneratorVerdict;
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

/// Follows the steps of a sweep and says when to stop.
#[derive(Clone, Debug)]
pub struct Saturation {
    rule: StopRule,
    streak: Vec<u32>,
}

impl Saturation {
    pub fn new(rule: StopRule, targets: usize) -> Self {
        Saturation {
            rule,
            streak: vec![0; targets],
        }
    }

    /// Takes one step's rows (one per target) and returns why to stop, if it is time.
    ///
    /// A step where herd itself was the bottleneck says nothing about the server: it neither
    /// extends nor breaks a streak.
    pub fn observe(&mut self, rows: &[Row]) -> Option<String> {
        let mut reasons = Vec::new();
        for (streak, row) in self.streak.iter_mut().zip(rows) {
            let limited = row
                .extra
                .as_ref()
                .is_some_and(|x| x.generator == GeneratorVerdict::GeneratorLimited);
            if limited {
                continue;
            }
            match self.rule.breach(row) {
                Some(why) => {
                    *streak += 1;
                    reasons.push(why);
                }
                None => *streak = 0,
            }
        }
        let n = self.rule.consecutive.max(1);
        let all = !self.streak.is_empty() && self.streak.iter().all(|s| *s >= n);
        all.then(|| {
            format!(
                "every target broke the stop rule for {n} steps in a row ({})",
                reasons.join("; ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Extra;

    fn row(errors: f64, p99: f64, generator: GeneratorVerdict) -> Row {
        Row {
            errors,
            extra: Some(Extra {
                p50: 1.0,
                p95: 1.0,
                p99,
                p999: p99,
                ok: 1,
                failed: 0,
                generator,
            }),
            ..Row::default()
        }
    }

    #[test]
    fn sweep_stops_after_two_bad_steps_in_a_row_for_every_target() {
        use GeneratorVerdict::{GeneratorLimited as Lim, Ok};
        let rule = StopRule {
            max_error_percent: Some(5.0),
            max_p99_ms: Some(100.0),
            consecutive: 2,
            ..StopRule::default()
        };
        // (rows of a step per target, stop after this step?)
        type Step<'a> = (&'a [(f64, f64, GeneratorVerdict)], bool);
        let table: &[Step] = &[
            (&[(0.0, 10.0, Ok), (0.0, 10.0, Ok)], false),
            (&[(6.0, 10.0, Ok), (0.0, 10.0, Ok)], false),
            (&[(0.0, 10.0, Ok), (0.0, 200.0, Ok)], false), // a hiccup breaks A's streak
            (&[(9.0, 10.0, Ok), (0.0, 300.0, Ok)], false), // B: 2 in a row, A: 1
            (&[(9.0, 10.0, Lim), (0.0, 300.0, Ok)], false), // A's limited step does not count
            (&[(9.0, 10.0, Ok), (1.0, 10.0, Ok)], false),  // A: 2, B recovered
            (&[(9.0, 10.0, Ok), (50.0, 10.0, Ok)], false), // B: 1
            (&[(9.0, 10.0, Ok), (50.0, 10.0, Ok)], true),
        ];
        let mut s = Saturation::new(rule, 2);
        for (i, (rows, stop)) in table.iter().enumerate() {
            let rows: Vec<Row> = rows.iter().map(|&(e, p, g)| row(e, p, g)).collect();
            let got = s.observe(&rows);
            assert_eq!(got.is_some(), *stop, "step {i}: {got:?}");
        }
    }
}
