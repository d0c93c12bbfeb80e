//! Results real runs wrote (`tests/fixtures`, see its README.md), and validators of the
//! schemas they follow. Shared by the test binaries of herd-result, herd-compare and
//! herd-report (included by path): each uses part of it.
#![allow(dead_code)]

use herd_result::capacity::CapacityResult;
use herd_result::sweep::SweepResult;
use herd_result::{parse_json, parse_json_kind, RunResult};
use serde_json::Value;

/// An open-model run: 300 req/s for 5 s against a route with 1 ms latency; all ok.
pub const OPEN: &str = include_str!("../fixtures/run-open.json");
/// A closed-model run: 10 connections for 4 s against a route resetting 5% of requests.
pub const CLOSED_ERRORS: &str = include_str!("../fixtures/run-closed-errors.json");
/// The open run again against a route with 20 ms latency.
pub const SLOW: &str = include_str!("../fixtures/run-open-slow.json");

/// `herd sweep --target small=.../small/ --target big=.../big/ --rates 100:800:100
/// --step-duration 2s` against nginx admitting 200 and 400 req/s: it stopped after 600.
pub const SWEEP_OPEN: &str = include_str!("../fixtures/sweep-open.json");
/// `herd sweep --connections 1,5,10,50,100` against the 200 req/s route.
pub const SWEEP_CLOSED: &str = include_str!("../fixtures/sweep-closed.json");
/// `herd capacity --slo "p99<100ms, errors<1%"` against the 400 req/s route: 400 req/s.
pub const CAPACITY_OPEN: &str = include_str!("../fixtures/capacity-open.json");
/// `herd capacity --users --slo "p99<30ms, errors<1%"` against the 200 req/s route: 4 users.
pub const CAPACITY_USERS: &str = include_str!("../fixtures/capacity-users.json");

/// `herd run --rate 500 -d 8s --warmup 1s` against nginx admitting 400 req/s (503 beyond),
/// watching nginx's two processes and a node_exporter: a run with `server` and the
/// generator's per-second record.
pub const WATCHED: &str = include_str!("../fixtures/run-watched.json");

pub fn sweep(text: &str) -> SweepResult {
    parse_json_kind(text, "fixture", "sweep").expect("a herd sweep")
}

pub fn capacity(text: &str) -> CapacityResult {
    parse_json_kind(text, "fixture", "capacity").expect("a herd capacity search")
}

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

pub fn load(name: &str) -> Value {
    let path = format!("{}/../../schema/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A validator of `name`, with `result.schema.json` where a relative reference to it resolves.
pub fn validator(name: &str) -> jsonschema::Validator {
    let run = jsonschema::Resource::from_contents(load("result.schema.json")).unwrap();
    // Building checks the schema itself against the 2020-12 meta-schema.
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .with_resource("json-schema:///result.schema.json", run)
        .build(&load(name))
        .expect("the schema is valid")
}
