//! Thresholds: pass/fail conditions on a result (`p95 < 300ms`, `errors < 1%`, `rps > 100`,
//! `cart: p99 < 500ms`), parsed once before the run and evaluated on the [`RunResult`].

use crate::result::Summary;
use crate::workload::ThresholdResult;
use crate::RunResult;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// A latency statistic (ms), from the intended send time.
    Latency(Stat),
    /// Share of requests that were not ok (failed or errors), in percent.
    Errors,
    /// Completed requests per second.
    Rps,
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

#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    pub expression: String,
    /// A request name, or `None` for the whole run.
    pub name: Option<String>,
    pub metric: Metric,
    pub op: Op,
    /// In the metric's unit: ms, percent, or requests per second.
    pub limit: f64,
}

/// Why an expression is not a threshold, with a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThresholdError {
    pub message: String,
    pub hint: String,
}

impl fmt::Display for ThresholdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.hint)
    }
}

const STATS: [(&str, Stat); 10] = [
    ("p50", Stat::P50),
    ("p75", Stat::P75),
    ("p90", Stat::P90),
    ("p95", Stat::P95),
    ("p99", Stat::P99),
    ("p99.9", Stat::P999),
    ("mean", Stat::Mean),
    ("avg", Stat::Mean),
    ("min", Stat::Min),
    ("max", Stat::Max),
];

impl Threshold {
    pub fn parse(expression: &str) -> Result<Threshold, ThresholdError> {
        let err = |message: String, hint: &str| ThresholdError {
            message,
            hint: hint.to_owned(),
        };
        let general = "e.g. \"p95 < 300ms\", \"errors < 1%\", \"rps > 100\", \"cart: p99 < 500ms\"";
        let (name, cond) = match expression.rsplit_once(':') {
            Some((n, c)) if !n.trim().is_empty() => (Some(n.trim().to_owned()), c.trim()),
            Some(_) => {
                return Err(err(
                    format!("`{expression}` has an empty request name"),
                    general,
                ))
            }
            None => (None, expression.trim()),
        };
        let at = cond
            .find(['<', '>'])
            .ok_or_else(|| err(format!("`{expression}` has no comparison"), general))?;
        let (metric, rest) = (cond[..at].trim(), &cond[at..]);
        let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Op::Lt, v)
        } else {
            (Op::Gt, &rest[1..])
        };
        let value = value.trim();
        let metric = match metric {
            "errors" => Metric::Errors,
            "rps" => Metric::Rps,
            m => match STATS.iter().find(|(k, _)| *k == m) {
                Some((_, s)) => Metric::Latency(*s),
                None => {
                    return Err(err(
                        format!("`{m}` is not a metric in `{expression}`"),
                        "one of p50, p75, p90, p95, p99, p99.9, mean, min, max, errors, rps",
                    ))
                }
            },
        };
        let limit = match metric {
            Metric::Latency(_) => latency_ms(value).ok_or_else(|| {
                err(
                    format!("`{value}` is not a time in `{expression}`"),
                    "write a number with a unit: 300ms, 1.5s, 800us",
                )
            })?,
            Metric::Errors => value
                .strip_suffix('%')
                .and_then(|n| n.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n >= 0.0)
                .ok_or_else(|| {
                    err(
                        format!("`{value}` is not a percentage in `{expression}`"),
                        "errors are a share of requests: write e.g. 1% or 0.5%",
                    )
                })?,
            Metric::Rps => value
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n >= 0.0)
                .ok_or_else(|| {
                    err(
                        format!("`{value}` is not a rate in `{expression}`"),
                        "write requests per second as a number: rps > 100",
                    )
                })?,
        };
        Ok(Threshold {
            expression: expression.to_owned(),
            name,
            metric,
            op,
            limit,
        })
    }

    /// Measures the threshold's metric on `r` and compares it with the limit.
    pub fn evaluate(&self, r: &RunResult) -> ThresholdResult {
        let (totals, rps, latency) = match &self.name {
            None => (&r.totals, r.throughput_rps, &r.latency_ms),
            Some(n) => match r.by_name.iter().find(|b| &b.name == n) {
                Some(b) => (&b.totals, b.throughput_rps, &b.latency_ms),
                None => return self.unmeasured(format!("no request is named `{n}`")),
            },
        };
        let ended = totals.completed + totals.errors;
        if ended == 0 {
            return self.unmeasured("no requests were measured".to_owned());
        }
        let (value, unit) = match self.metric {
            Metric::Latency(s) => (stat(latency, s), "ms"),
            Metric::Errors => (100.0 * (ended - totals.ok) as f64 / ended as f64, "%"),
            Metric::Rps => (rps, "req/s"),
        };
        let pass = match self.op {
            Op::Lt => value < self.limit,
            Op::Le => value <= self.limit,
            Op::Gt => value > self.limit,
            Op::Ge => value >= self.limit,
        };
        ThresholdResult {
            expression: self.expression.clone(),
            value,
            unit: unit.to_owned(),
            pass,
            note: None,
        }
    }

    fn unmeasured(&self, note: String) -> ThresholdResult {
        ThresholdResult {
            expression: self.expression.clone(),
            value: 0.0,
            unit: match self.metric {
                Metric::Latency(_) => "ms",
                Metric::Errors => "%",
                Metric::Rps => "req/s",
            }
            .to_owned(),
            pass: false,
            note: Some(note),
        }
    }
}

fn stat(s: &Summary, stat: Stat) -> f64 {
    match stat {
        Stat::P50 => s.p50,
        Stat::P75 => s.p75,
        Stat::P90 => s.p90,
        Stat::P95 => s.p95,
        Stat::P99 => s.p99,
        Stat::P999 => s.p999,
        Stat::Mean => s.mean,
        Stat::Min => s.min,
        Stat::Max => s.max,
    }
}

/// `300ms`, `1.5s`, `800us` or a bare number of milliseconds.
fn latency_ms(v: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e3)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60e3)
    } else {
        (v, 1.0)
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n * scale)
}
