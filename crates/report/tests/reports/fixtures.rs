use herd_report::{parse_json, RunResult};
use serde_json::Value;

/// An open-model run: 300 req/s for 5 s against a route with 1 ms latency; all ok.
pub const OPEN: &str = include_str!("../fixtures/run-open.json");
/// A closed-model run: 10 connections for 4 s against a route resetting 5% of requests.
pub const CLOSED_ERRORS: &str = include_str!("../fixtures/run-closed-errors.json");
/// The open run again against a route with 20 ms latency.
pub const SLOW: &str = include_str!("../fixtures/run-open-slow.json");

pub fn run(text: &str) -> RunResult {
    parse_json(text, "fixture").expect("fixtures are herd results")
}

pub fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// `r` with every latency (summary and per second) multiplied by `factor`, as if the server
/// had become that much slower and nothing else changed.
pub fn slowed(r: &RunResult, factor: f64) -> RunResult {
    let mut r = r.clone();
    let l = &mut r.latency_ms;
    for x in [
        &mut l.min,
        &mut l.mean,
        &mut l.p50,
        &mut l.p75,
        &mut l.p90,
        &mut l.p95,
        &mut l.p99,
        &mut l.p999,
        &mut l.max,
    ] {
        *x *= factor;
    }
    for e in &mut r.timeline {
        for x in [&mut e.p50_ms, &mut e.p90_ms, &mut e.p99_ms, &mut e.max_ms] {
            *x *= factor;
        }
    }
    r
}

/// One `by_name` entry in herd's shape, made from the top level of the fixture `doc` with the
/// given requests, oks and latency percentiles (ms).
pub fn name_entry(
    doc: &Value,
    name: &str,
    requests: u64,
    ok: u64,
    p50: f64,
    p95: f64,
    p99: f64,
) -> Value {
    let mut e = serde_json::json!({
        "name": name,
        "totals": doc["totals"].clone(),
        "throughput_rps": doc["throughput_rps"].clone(),
        "status": {"200": ok, "500": requests - ok},
        "errors": {},
        "latency_ms": doc["latency_ms"].clone(),
        "service_time_ms": doc["service_time_ms"].clone(),
        "response_bytes": doc["response_bytes"].clone(),
    });
    let t = &mut e["totals"];
    for k in ["scheduled", "sent", "completed"] {
        t[k] = requests.into();
    }
    t["ok"] = ok.into();
    t["failed"] = (requests - ok).into();
    t["errors"] = 0.into();
    t["dropped"] = 0.into();
    e["latency_ms"]["p50"] = p50.into();
    e["latency_ms"]["p95"] = p95.into();
    e["latency_ms"]["p99"] = p99.into();
    e
}
