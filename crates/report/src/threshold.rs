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
        if matches!(self.metric, Metric::Latency(_)) && latency.count == 0 {
            // Latency is of responses: with none, a 0 would pass any limit.
            return self.unmeasured(format!(
                "no responses to measure latency on: all {ended} requests failed without one"
            ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Totals;
    use crate::workload::NameResult;

    #[test]
    fn expressions_people_write() {
        let table = [
            (
                "p95 < 300ms",
                None,
                Metric::Latency(Stat::P95),
                Op::Lt,
                300.0,
            ),
            (
                "p99.9 <= 1.5s",
                None,
                Metric::Latency(Stat::P999),
                Op::Le,
                1500.0,
            ),
            ("mean<800us", None, Metric::Latency(Stat::Mean), Op::Lt, 0.8),
            ("max < 2", None, Metric::Latency(Stat::Max), Op::Lt, 2.0),
            ("errors < 1%", None, Metric::Errors, Op::Lt, 1.0),
            ("rps >= 100", None, Metric::Rps, Op::Ge, 100.0),
            (
                "cart: p99 < 500ms",
                Some("cart"),
                Metric::Latency(Stat::P99),
                Op::Lt,
                500.0,
            ),
            (
                "GET /a:b: min > 1ms",
                Some("GET /a:b"),
                Metric::Latency(Stat::Min),
                Op::Gt,
                1.0,
            ),
        ];
        for (text, name, metric, op, limit) in table {
            let t = Threshold::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                (t.name.as_deref(), t.metric, t.op, t.limit),
                (name, metric, op, limit),
                "{text}"
            );
        }
    }

    #[test]
    fn mistakes_are_explained() {
        let table = [
            ("p95 300ms", "has no comparison"),
            ("p96 < 1s", "`p96` is not a metric"),
            ("p95 < fast", "`fast` is not a time"),
            ("errors < 1", "`1` is not a percentage"),
            ("rps > lots", "`lots` is not a rate"),
            (": p95 < 1s", "empty request name"),
        ];
        for (text, want) in table {
            let e = Threshold::parse(text).unwrap_err();
            assert!(e.message.contains(want), "{text}: {e}");
        }
    }

    fn result(ok: u64, failed: u64, errors: u64, p95: f64) -> RunResult {
        let config = crate::RunConfig {
            url: "http://h/".into(),
            method: "GET".into(),
            model: crate::Model::Closed,
            connections: 1,
            rate: None,
            duration_s: Some(1.0),
            requests: None,
            warmup_s: 0.0,
            threads: 1,
            timeout_s: 1.0,
            calls_per_conn: None,
            headers: vec![],
            body_bytes: 0,
        };
        let mut r = crate::build_run(crate::RunInput {
            target: config.url.clone(),
            config,
            started_at: std::time::SystemTime::now(),
            duration: std::time::Duration::from_secs(1),
            interrupted: false,
            stats: &herd_metrics::Stats::default(),
            timeline: &[],
            dropped: 0,
            warmup_requests: 0,
            warmup_duration: std::time::Duration::ZERO,
            generator: crate::Generator::default(),
        });
        r.totals = Totals {
            completed: ok + failed,
            ok,
            failed,
            errors,
            ..Totals::default()
        };
        r.latency_ms.p95 = p95;
        r.latency_ms.count = ok + failed;
        r.throughput_rps = 50.0;
        r
    }

    #[test]
    fn evaluated_on_the_result_and_per_name() {
        let mut r = result(990, 5, 5, 250.0);
        r.by_name.push(NameResult {
            name: "cart".into(),
            totals: r.totals.clone(),
            throughput_rps: 10.0,
            status: Default::default(),
            errors: Default::default(),
            latency_ms: Summary {
                count: 10,
                p99: 700.0,
                ..Summary::default()
            },
            service_time_ms: Summary::default(),
            time_to_error_ms: Summary::default(),
            response_bytes: Default::default(),
            histograms: None,
        });
        let eval = |s: &str| Threshold::parse(s).unwrap().evaluate(&r);
        assert!(eval("p95 < 300ms").pass);
        assert!(!eval("p95 < 200ms").pass);
        let e = eval("errors < 1%");
        assert!(
            (e.value - 1.0).abs() < 1e-9 && !e.pass,
            "1% is not below 1%: {e:?}"
        );
        assert!(eval("errors <= 1%").pass);
        assert!(eval("rps > 40").pass);
        let cart = eval("cart: p99 < 500ms");
        assert_eq!(
            (cart.value, cart.pass, cart.unit.as_str()),
            (700.0, false, "ms")
        );
        let none = eval("nope: p99 < 500ms");
        assert!(!none.pass && none.note.is_some());
        let empty = result(0, 0, 0, 0.0);
        let t = Threshold::parse("p95 < 1s").unwrap().evaluate(&empty);
        assert!(!t.pass, "nothing measured cannot pass");
    }

    #[test]
    fn a_latency_threshold_fails_when_nothing_answered() {
        // every request timed out: latency (of responses) has no samples, which is no pass
        let r = result(0, 0, 20, 0.0);
        let t = Threshold::parse("p95 < 1s").unwrap().evaluate(&r);
        assert!(!t.pass, "{t:?}");
        assert!(t.note.as_deref().unwrap().contains("no responses"), "{t:?}");
    }
}
