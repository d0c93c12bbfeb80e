//! Optional sections of a result, read by key from its JSON: per-request-name statistics,
//! thresholds and checks. Results that lack them (plain runs, older herds) simply have none.
//! (The server's resources are typed: [`crate::Server`].)
//!
//! Reports read these from the JSON rather than from typed fields so that they show whatever a
//! result carries, however it was built; the readers accept the shapes listed in
//! docs/report.md and ignore what they do not recognise. This file is the one place to change
//! when those shapes settle.

use crate::RunResult;
use serde_json::Value;
use std::collections::BTreeMap;

/// A result as JSON, the form the section readers take.
pub fn to_value(r: &RunResult) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// Statistics of one request name (or scenario), as much as the result gives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NameStats {
    pub name: String,
    pub requests: Option<u64>,
    /// Times in milliseconds.
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
    /// Share of requests that were not ok, 0..=1.
    pub error_rate: Option<f64>,
    /// Mean response body size (page weight) in bytes.
    pub bytes_mean: Option<f64>,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// The name's latency HdrHistogram, base64, when the result carries it.
    pub histogram: Option<String>,
    /// A scenario's share of the mix (`weight`), when the result gives it.
    pub weight: Option<u64>,
}

/// Per-name statistics under `key` (`by_name`, `by_scenario`): an object keyed by name, or an
/// array of objects with a `name`.
pub fn names(doc: &Value, key: &str) -> Vec<NameStats> {
    entries(doc.get(key))
        .into_iter()
        .map(|(name, v)| name_stats(name, v))
        .collect()
}

fn name_stats(name: String, v: &Value) -> NameStats {
    // A scenario's times are its iterations' durations (`duration_ms`), think times included.
    let lat = v
        .get("latency_ms")
        .or_else(|| v.get("latency"))
        .or_else(|| v.get("duration_ms"))
        .filter(|l| l.is_object());
    let time = |field: &str| {
        lat.and_then(|l| num(l.get(field)))
            .or_else(|| num(v.get(format!("{field}_ms").as_str())))
    };
    let requests = uint(v.get("requests"))
        .or_else(|| uint(v.get("iterations")))
        .or_else(|| uint(v.get("count")))
        .or_else(|| v.get("totals").and_then(|t| uint(t.get("scheduled"))))
        .or_else(|| lat.and_then(|l| uint(l.get("count"))));
    let ok = uint(v.get("ok")).or_else(|| v.get("totals").and_then(|t| uint(t.get("ok"))));
    let error_rate = num(v.get("error_rate")).or_else(|| match (requests, ok) {
        (Some(n), Some(ok)) if n > 0 => Some(n.saturating_sub(ok) as f64 / n as f64),
        _ => None,
    });
    let bytes_mean = v
        .get("response_bytes")
        .and_then(|b| num(b.get("mean")))
        .or_else(|| num(v.get("bytes_mean")));
    let status = v
        .get("status")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, n)| Some((k.clone(), n.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    let histogram = v
        .get("histograms")
        .and_then(|h| h.get("latency"))
        .or_else(|| v.get("histogram"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    NameStats {
        name,
        requests,
        min: time("min"),
        mean: time("mean"),
        p50: time("p50"),
        p95: time("p95"),
        p99: time("p99"),
        max: time("max"),
        error_rate,
        bytes_mean,
        status,
        histogram,
        weight: uint(v.get("weight")),
    }
}

/// One threshold and whether it held.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdOutcome {
    /// What was asserted, e.g. `p99 < 200ms`.
    pub what: String,
    pub passed: bool,
    /// The measured value, as the result wrote it.
    pub actual: Option<String>,
}

/// `thresholds`: an array of objects (`name`/`metric`/`expr`, `passed`/`ok`, `value`/`actual`),
/// an object keyed by expression whose values are such objects or plain booleans.
pub fn thresholds(doc: &Value) -> Vec<ThresholdOutcome> {
    let list = match doc.get("thresholds") {
        Some(Value::Object(m)) if m.values().all(Value::is_boolean) => {
            return m
                .iter()
                .map(|(k, v)| ThresholdOutcome {
                    what: k.clone(),
                    passed: v.as_bool() == Some(true),
                    actual: None,
                })
                .collect()
        }
        other => entries(other),
    };
    list.into_iter()
        .filter_map(|(what, v)| {
            // herd writes the whole expression (`cart: p99 < 500ms`), name included.
            let what = match first_str(v, &["expression"]) {
                Some(e) => e,
                None => what,
            };
            let what = first_str(v, &["expr", "threshold", "condition"])
                .map(|e| {
                    if what.is_empty() || what == e {
                        e
                    } else {
                        format!("{what}: {e}")
                    }
                })
                .unwrap_or(what);
            let passed = ["passed", "ok", "pass"]
                .iter()
                .find_map(|k| v.get(*k).and_then(Value::as_bool))?;
            // herd's own shape: a number in `value` with its `unit`.
            let measured = match (num(v.get("value")), v.get("unit").and_then(Value::as_str)) {
                (Some(value), Some(unit)) => Some(crate::format::threshold_value(value, unit)),
                _ => None,
            };
            let actual = measured.or_else(|| {
                ["actual", "value", "observed"]
                    .iter()
                    .find_map(|k| v.get(*k))
                    .map(scalar_text)
            });
            Some(ThresholdOutcome {
                what,
                passed,
                actual,
            })
        })
        .collect()
}

/// One check (a response assertion) with how often it passed and failed.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckOutcome {
    pub name: String,
    pub passes: u64,
    pub fails: u64,
}

/// `checks`: an object keyed by name or an array with `name`; counts in `passes`/`passed`/`ok`
/// and `fails`/`failed`.
pub fn checks(doc: &Value) -> Vec<CheckOutcome> {
    entries(doc.get("checks"))
        .into_iter()
        .filter_map(|(name, v)| {
            let count = |keys: &[&str]| keys.iter().find_map(|k| uint(v.get(*k)));
            let passes = count(&["passes", "passed", "ok"]);
            let fails = count(&["fails", "failed"]);
            (passes.is_some() || fails.is_some()).then(|| CheckOutcome {
                name,
                passes: passes.unwrap_or(0),
                fails: fails.unwrap_or(0),
            })
        })
        .collect()
}

/// Named entries of an object, or of an array of objects carrying `name` (or `scenario`).
fn entries(v: Option<&Value>) -> Vec<(String, &Value)> {
    match v {
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_object())
            .map(|(i, v)| {
                let name = first_str(v, &["name", "scenario", "metric"])
                    .unwrap_or_else(|| format!("#{}", i + 1));
                (name, v)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn first_str(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn uint(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64)
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_from_an_object_or_an_array() {
        let doc = json!({
            "by_name": {
                "home": {"requests": 10, "ok": 9, "latency_ms": {"p50": 1.5, "p99": 4.0, "max": 5.0},
                         "response_bytes": {"mean": 2048.0}, "status": {"200": 9, "500": 1}},
            },
            "by_scenario": [{"name": "browse", "count": 4, "p95_ms": 7.0, "error_rate": 0.25}, {"x": 1}],
        });
        let home = &names(&doc, "by_name")[0];
        assert_eq!(home.name, "home");
        assert_eq!(home.requests, Some(10));
        assert_eq!(home.error_rate, Some(0.1));
        assert_eq!(
            (home.p50, home.p99, home.max),
            (Some(1.5), Some(4.0), Some(5.0))
        );
        assert_eq!(home.bytes_mean, Some(2048.0));
        assert_eq!(home.status["500"], 1);
        let s = names(&doc, "by_scenario");
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].name.as_str(), s[0].p95, s[0].error_rate),
            ("browse", Some(7.0), Some(0.25))
        );
        assert_eq!(s[1].name, "#2");
        assert!(names(&json!({}), "by_name").is_empty());
    }

    #[test]
    fn scenarios_read_their_iterations_and_durations() {
        // herd's own shape (crate::ScenarioResult): the HTML table was all dashes without it.
        let doc = json!({"by_scenario": [{"name": "buy", "weight": 40, "iterations": 84,
            "duration_ms": {"count": 84, "min": 7.2, "mean": 7.9, "p50": 7.5, "p95": 10.1,
                            "p99": 11.5, "max": 11.5}}]});
        let s = &names(&doc, "by_scenario")[0];
        assert_eq!((s.weight, s.requests), (Some(40), Some(84)));
        assert_eq!(
            (s.min, s.mean, s.p50, s.p95, s.p99, s.max),
            (
                Some(7.2),
                Some(7.9),
                Some(7.5),
                Some(10.1),
                Some(11.5),
                Some(11.5)
            )
        );
    }

    #[test]
    fn thresholds_and_checks_in_the_shapes_accepted() {
        let listed = json!({"thresholds": [
            {"metric": "latency", "expr": "p99 < 200ms", "passed": false, "actual": "250 ms"},
            {"name": "errors < 1%", "ok": true},
            {"name": "no verdict"},
        ]});
        let t = thresholds(&listed);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].what, "latency: p99 < 200ms");
        assert!(!t[0].passed);
        assert_eq!(t[0].actual.as_deref(), Some("250 ms"));
        assert!(t[1].passed);
        let flat = thresholds(&json!({"thresholds": {"p95 < 1s": true}}));
        assert_eq!(flat[0].what, "p95 < 1s");
        let c = checks(&json!({"checks": {"status is 200": {"passes": 9, "fails": 1}}}));
        assert_eq!(
            c,
            vec![CheckOutcome {
                name: "status is 200".into(),
                passes: 9,
                fails: 1
            }]
        );
    }
}
