//! `herd run --otlp`: a receiver built on the official OTLP protobuf definitions (PyPI's
//! opentelemetry-proto; Debian packages no OpenTelemetry Collector) decodes what herd pushes,
//! and the numbers are the run's own.

use crate::common::{
    free_port, mock, name_ok, one_at_a_time, python_server, refused, shop_workload, Herd, TempDir,
};
use serde_json::Value;
use std::io::Read;
use std::process::{Child, Command};

/// The Python receiver on a free loopback port; what it got is read once it is stopped.
pub(crate) struct Receiver {
    child: Child,
    port: u16,
}

impl Receiver {
    pub(crate) fn start() -> Receiver {
        Receiver::answering(false)
    }

    /// `reject`: every answer is a partial success that rejected a point.
    fn answering(reject: bool) -> Receiver {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/e2e/outputs/otlp_receiver.py"
        );
        let (child, port) = python_server(
            Command::new("python3")
                .arg(script)
                .env_remove("OTLP_RECEIVER_REJECT")
                .envs(reject.then_some(("OTLP_RECEIVER_REJECT", "1"))),
            "the receiver",
            "opentelemetry-proto",
            "opentelemetry-proto",
        );
        Receiver { child, port }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request it got, in order (it prints each before answering, so every push herd
    /// saw answered is here).
    pub(crate) fn stop(mut self) -> Vec<Value> {
        let _ = self.child.kill();
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let _ = self.child.wait();
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The metric `name` of a decoded request.
pub(crate) fn metric<'a>(request: &'a Value, name: &str) -> &'a Value {
    request["request"]["resource_metrics"][0]["scope_metrics"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {request}"))
}

/// The data point of `m` (a sum or a histogram) whose attributes include every pair given.
pub(crate) fn point<'a>(m: &'a Value, kind: &str, attributes: &[(&str, &str)]) -> &'a Value {
    m[kind]["data_points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            attributes.iter().all(|(k, v)| {
                p["attributes"].as_array().is_some_and(|a| {
                    a.iter()
                        .any(|kv| kv["key"] == *k && kv["value"]["string_value"] == *v)
                })
            })
        })
        .unwrap_or_else(|| panic!("no {attributes:?} point in {m}"))
}

/// OTLP's JSON mapping writes 64-bit integers as strings.
pub(crate) fn int(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .or(v.as_u64())
        .unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn resource(request: &Value, key: &str) -> Option<String> {
    request["request"]["resource_metrics"][0]["resource"]["attributes"]
        .as_array()?
        .iter()
        .find(|kv| kv["key"] == key)
        .and_then(|kv| kv["value"]["string_value"].as_str().map(str::to_owned))
}

#[test]
fn an_otlp_receiver_gets_the_runs_counts_and_latency_histogram() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let receiver = Receiver::start();
    let dir = TempDir::new("otlp");
    let json = dir.path("r.json");
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["run", &url, "-d", "3s", "-c", "2", "-t", "1", "-q"])
        .args(&["--otlp", &receiver.url()])
        // The flag beats the variable: nothing goes to this port, where nothing listens.
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            &format!("http://127.0.0.1:{}", free_port()),
        )
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-team=load%20test")
        .json(&json)
        .run();
    ran.measured();
    assert!(!ran.stderr().contains("push failed"), "{}", ran.stderr());
    let result = ran.json();
    let pushes = receiver.stop();
    assert!(!pushes.is_empty());
    for p in &pushes {
        assert_eq!(p["path"], "/v1/metrics", "{p}");
        assert_eq!(p["headers"]["content-type"], "application/x-protobuf");
        assert_eq!(p["headers"]["x-team"], "load test");
        assert!(p.get("error").is_none(), "{p}");
    }
    let last = pushes.last().unwrap();
    assert_eq!(resource(last, "service.name").as_deref(), Some("herd"));
    assert!(resource(last, "herd.run_id").is_some_and(|id| !id.is_empty()));

    let requests = metric(last, "herd.requests");
    assert_eq!(requests["sum"]["is_monotonic"], true);
    assert_eq!(
        requests["sum"]["aggregation_temporality"],
        "AGGREGATION_TEMPORALITY_CUMULATIVE"
    );
    let ok = result["totals"]["ok"].as_u64().unwrap();
    assert!(ok > 0);
    assert_eq!(
        int(&point(requests, "sum", &[("outcome", "ok")])["as_int"]),
        ok
    );
    let scheduled = metric(last, "herd.scheduled");
    assert_eq!(
        int(&point(scheduled, "sum", &[])["as_int"]),
        result["totals"]["scheduled"].as_u64().unwrap()
    );

    let latency = metric(last, "herd.latency");
    assert_eq!(latency["unit"], "s");
    assert_eq!(
        latency["histogram"]["aggregation_temporality"],
        "AGGREGATION_TEMPORALITY_CUMULATIVE"
    );
    let h = point(latency, "histogram", &[]);
    let count = int(&h["count"]);
    let summary = &result["latency_ms"];
    assert_eq!(count, summary["count"].as_u64().unwrap());
    let buckets: u64 = h["bucket_counts"].as_array().unwrap().iter().map(int).sum();
    assert_eq!(buckets, count, "every request in one bucket: {h}");
    let bounds = h["explicit_bounds"].as_array().unwrap();
    assert_eq!(
        bounds.len() + 1,
        h["bucket_counts"].as_array().unwrap().len()
    );
    let sum = h["sum"].as_f64().unwrap();
    let want = summary["mean"].as_f64().unwrap() * count as f64 / 1e3;
    assert!(
        (sum - want).abs() <= want * 0.01 + 1e-6,
        "histogram sum {sum} s against the result's {want} s"
    );
    // The generator's own health rides along.
    for gauge in ["herd.in_flight", "herd.generator.cpu", "herd.send_lag.p99"] {
        assert!(metric(last, gauge).get("gauge").is_some(), "{gauge}");
    }
    assert_eq!(
        metric(last, "herd.run.finished")["gauge"]["data_points"][0]["as_double"],
        1.0
    );
}

/// Without the flag the standard variable chooses the collector; credentials in it reach the
/// receiver as a header and nowhere else; a workload's request names label their series.
#[test]
fn the_otel_variable_sends_a_workloads_named_series_and_keeps_its_password() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let receiver = Receiver::start();
    let dir = TempDir::new("otlp-env");
    let file = shop_workload(
        &dir,
        server.local_addr(),
        "model: open, rate: 20, max_connections: 2, duration: 2s",
    );
    let json = dir.path("r.json");
    let with_password = format!("http://ann:s3cret@127.0.0.1:{}", receiver.port);
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1", "-q"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &with_password)
        .json(&json)
        .run();
    ran.measured();
    let shown = format!(
        "OTLP metrics to http://***@127.0.0.1:{}/v1/metrics (OTEL_EXPORTER_OTLP_ENDPOINT)",
        receiver.port
    );
    assert!(ran.stderr().contains(&shown), "{}", ran.stderr());
    assert!(!ran.stderr().contains("s3cret") && !ran.stdout().contains("s3cret"));
    assert!(!std::fs::read_to_string(&json).unwrap().contains("s3cret"));
    let result = ran.json();
    let pushes = receiver.stop();
    let last = pushes.last().expect("a push");
    // "ann:s3cret" in base64.
    assert_eq!(last["headers"]["authorization"], "Basic YW5uOnMzY3JldA==");
    let home = name_ok(&result, "home");
    assert!(home > 0);
    let named = metric(last, "herd.name.requests");
    assert_eq!(
        int(&point(named, "sum", &[("name", "home"), ("outcome", "ok")])["as_int"]),
        home
    );
    let item = point(
        metric(last, "herd.name.latency"),
        "histogram",
        &[("name", "item")],
    );
    assert!(int(&item["count"]) > 0);
    let iterations = metric(last, "herd.scenario.iterations");
    assert_eq!(
        int(&point(iterations, "sum", &[("scenario", "browse")])["as_int"]),
        result["by_scenario"][0]["iterations"].as_u64().unwrap()
    );
}

/// A collector that is down costs a warning and a count at the end, never the run.
#[test]
fn a_receiver_that_is_down_is_warned_about_once_and_the_run_goes_on() {
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let down = format!("http://127.0.0.1:{}", free_port());
    let ran = Herd::new(&["run", &url, "-d", "1s", "-c", "1", "-t", "1", "-q"])
        .args(&["--otlp", &down])
        .run();
    ran.measured();
    let err = ran.stderr();
    assert_eq!(err.matches("a push failed").count(), 1, "{err}");
    assert!(
        err.contains("pushes failed") && err.contains("the final counts did not arrive"),
        "{err}"
    );
    assert!(ran.stdout().contains("requests"), "the summary is there");
}

/// A shard's pushes say which shard they are, so a collector keeps the shards of a run apart.
#[test]
fn a_shards_pushes_carry_its_shard_on_the_resource() {
    let server = mock(&[]);
    let receiver = Receiver::start();
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["run", &url, "-d", "1s", "-c", "1", "-t", "1", "-q"])
        .args(&["--shard", "1/2", "--otlp", &receiver.url()])
        .run();
    ran.measured();
    let pushes = receiver.stop();
    let last = pushes.last().expect("a push");
    assert_eq!(resource(last, "herd.shard").as_deref(), Some("1/2"));
    let run_id = resource(last, "herd.run_id").expect("a run id");
    assert_eq!(
        resource(last, "service.instance.id"),
        Some(format!("{run_id}/1/2"))
    );
}

/// A collector that takes a push but rejects points in it (OTLP's partial success) is a failed
/// push, told with the collector's reason, and not sent again: it would be rejected again.
#[test]
fn a_partial_success_is_told_with_the_receivers_reason() {
    let server = mock(&[]);
    let receiver = Receiver::answering(true);
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["run", &url, "-d", "1s", "-c", "1", "-t", "1", "-q"])
        .args(&["--otlp", &receiver.url()])
        .run();
    ran.measured();
    let err = ran.stderr();
    assert!(
        err.contains("the receiver rejected 1 data points: the test receiver rejects a point"),
        "{err}"
    );
    assert!(err.contains("1 of 1 pushes failed"), "{err}");
    assert_eq!(receiver.stop().len(), 1);
}

#[test]
fn a_bad_otlp_url_is_refused_before_anything_is_sent() {
    refused(
        &["run", "http://127.0.0.1:1/", "--otlp", "collector:4318"],
        "--otlp collector:4318: give an http URL, e.g. http://127.0.0.1:4318/v1/metrics",
    );
    let out = refused(
        &["run", "http://127.0.0.1:1/", "--otlp", "https://ann:pw@c/"],
        "https is not supported",
    );
    assert!(!crate::common::stderr(&out).contains("pw@"));
}
