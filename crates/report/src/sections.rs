//! Optional sections of a result, read by key from its JSON: per-request-name statistics,
//! thresholds, checks and the server's resources. Results that lack them (plain runs, older
//! herds) simply have none.
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
    let lat = v
        .get("latency_ms")
        .or_else(|| v.get("latency"))
        .filter(|l| l.is_object());
    let time = |field: &str| {
        lat.and_then(|l| num(l.get(field)))
            .or_else(|| num(v.get(format!("{field}_ms").as_str())))
    };
    let requests = uint(v.get("requests"))
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
            let actual = ["actual", "value", "observed"]
                .iter()
                .find_map(|k| v.get(*k))
                .map(scalar_text);
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

/// Samples of the server's resources on the run's time axis. `server` holds the watched
/// processes (`processes[].samples`, from `--watch-pid` / `--watch-name`) and the scraped
/// Prometheus series (`prometheus[].series[].samples` as `[t, value]`); each sample's `t` is in
/// seconds since the measurement started. A bare array of samples, or an object with `samples`,
/// is read too. Field names say the unit (`_percent`, `_bytes`, ...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerSeries {
    /// Field name -> (t, value) points, fields in the order first seen.
    pub fields: Vec<(String, Vec<(f64, f64)>)>,
}

impl ServerSeries {
    fn push(&mut self, field: String, t: f64, v: f64) {
        match self.fields.iter_mut().find(|(name, _)| *name == field) {
            Some((_, pts)) => pts.push((t, v)),
            None => self.fields.push((field, vec![(t, v)])),
        }
    }
}

/// Process fields worth a chart: the rest (pids, counts of processes) are bookkeeping.
const PROCESS_FIELDS: [&str; 4] = ["cpu_percent", "rss_bytes", "threads", "fds"];

pub fn server(doc: &Value) -> ServerSeries {
    let mut out = ServerSeries::default();
    let Some(server) = doc.get("server") else {
        return out;
    };
    let processes = server
        .get("processes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let many = processes.len() > 1;
    for p in processes {
        let label = first_str(p, &["name"]).or_else(|| p.get("pid").map(|v| format!("pid {v}")));
        let samples = p
            .get("samples")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for s in samples {
            let Some(t) = num(s.get("t")) else { continue };
            for field in PROCESS_FIELDS {
                if let Some(v) = num(s.get(field)) {
                    let name = match (&label, many) {
                        (Some(l), true) => format!("{l} {field}"),
                        _ => field.to_owned(),
                    };
                    out.push(name, t, v);
                }
            }
        }
    }
    for exporter in server
        .get("prometheus")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for series in exporter
            .get("series")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = series.get("name").and_then(Value::as_str) else {
                continue;
            };
            let labels = series
                .get("labels")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}=\"{}\"", v.as_str().unwrap_or_default()))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default();
            let rate = series.get("rate").and_then(Value::as_bool).unwrap_or(false);
            let field = match (labels.is_empty(), rate) {
                (true, false) => name.to_owned(),
                (true, true) => format!("{name} (rate/s)"),
                (false, false) => format!("{name}{{{labels}}}"),
                (false, true) => format!("{name}{{{labels}}} (rate/s)"),
            };
            for point in series
                .get("samples")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(t), Some(v)) = (num(point.get(0)), num(point.get(1))) {
                    out.push(field.clone(), t, v);
                }
            }
        }
    }
    // Older or hand-made shapes: an array of samples, or an object with `samples`.
    let loose = match server {
        Value::Array(a) => a.as_slice(),
        Value::Object(m) => m
            .get("samples")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice),
        _ => &[],
    };
    for s in loose {
        let Some(obj) = s.as_object() else { continue };
        let Some(t) = ["t", "t_s", "time_s", "elapsed_s"]
            .iter()
            .find_map(|k| num(obj.get(*k)))
        else {
            continue;
        };
        for (k, v) in obj {
            if ["t", "t_s", "time_s", "elapsed_s"].contains(&k.as_str()) {
                continue;
            }
            if let Some(v) = num(Some(v)) {
                out.push(k.clone(), t, v);
            }
        }
    }
    out
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

    #[test]
    fn watched_processes_and_prometheus_series_become_series() {
        let doc = json!({"server": {
            "processes": [{"pid": 7, "name": "nginx", "pids": [7, 8], "samples": [
                {"t": 1.0, "processes": 2, "cpu_percent": 20.0, "rss_bytes": 1000, "threads": 2, "fds": 9,
                 "ctx_switches_voluntary": 5, "ctx_switches_involuntary": 1},
                {"t": 2.0, "processes": 2, "cpu_percent": 30.0, "rss_bytes": 1100, "threads": 2, "fds": 9,
                 "ctx_switches_voluntary": 5, "ctx_switches_involuntary": 1}]}],
            "prometheus": [{"url": "http://x/metrics", "metrics": [], "scrapes": 2, "gaps": [], "series": [
                {"name": "node_load1", "labels": {}, "kind": "gauge", "rate": false, "samples": [[1.0, 0.5], [2.0, null]]},
                {"name": "node_cpu_seconds_total", "labels": {"mode": "idle"}, "kind": "counter", "rate": true,
                 "samples": [[1.0, 0.9]]}]}]}});
        let s = server(&doc);
        let names: Vec<&str> = s.fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpu_percent",
                "rss_bytes",
                "threads",
                "fds",
                "node_load1",
                "node_cpu_seconds_total{mode=\"idle\"} (rate/s)"
            ]
        );
        assert_eq!(s.fields[0].1, vec![(1.0, 20.0), (2.0, 30.0)]);
        assert_eq!(
            s.fields[4].1,
            vec![(1.0, 0.5)],
            "a NaN sample is a gap, not a zero"
        );
    }

    #[test]
    fn server_samples_become_series_on_the_run_clock() {
        let doc = json!({"server": {"samples": [
            {"t": 0, "cpu_percent": 10.0, "rss_bytes": 1000, "host": "db"},
            {"t": 1, "cpu_percent": 30.0, "rss_bytes": 1200},
            {"cpu_percent": 99.0},
        ]}});
        let s = server(&doc);
        assert_eq!(s.fields.len(), 2);
        assert_eq!(
            s.fields[0],
            ("cpu_percent".to_owned(), vec![(0.0, 10.0), (1.0, 30.0)])
        );
        assert_eq!(
            server(&json!({"server": [{"t": 2, "load1": 0.5}]})).fields[0].1,
            vec![(2.0, 0.5)]
        );
        assert!(server(&json!({})).fields.is_empty());
    }
}
