use super::*;

const P99: Metric = METRICS[6];
const RPS: Metric = METRICS[0];

#[test]
fn judgement_table() {
    let beyond = Noise::PerSecond { p: 0.001 };
    let within = Noise::PerSecond { p: 0.5 };
    let t = 0.10;
    let table = [
        (P99, 10.0, 10.0, beyond, Judgement::Unchanged),
        (P99, 10.0, 10.5, beyond, Judgement::WithinThreshold),
        (P99, 10.0, 12.0, within, Judgement::WithinNoise),
        (P99, 10.0, 12.0, beyond, Judgement::Regressed),
        (P99, 10.0, 12.0, Noise::Unknown, Judgement::Regressed),
        (P99, 10.0, 8.0, beyond, Judgement::Improved),
        (RPS, 1000.0, 800.0, beyond, Judgement::Regressed),
        (RPS, 1000.0, 1200.0, beyond, Judgement::Improved),
        (METRICS[1], 0.0, 0.02, beyond, Judgement::Regressed),
        (METRICS[1], 0.0, 0.0, beyond, Judgement::Unchanged),
    ];
    for (m, base, new, noise, want) in table {
        let c = change(&m, base, new, noise, t);
        assert_eq!(c.judgement, want, "{} {base} -> {new} {noise:?}", m.label);
    }
    assert_eq!(
        change(&P99, 10.0, 12.0, beyond, 0.5).judgement,
        Judgement::WithinThreshold
    );
    assert!((change(&P99, 10.0, 12.0, beyond, t).fraction - 0.2).abs() < 1e-12);
    assert!(change(&METRICS[1], 0.0, 0.02, beyond, t)
        .fraction
        .is_infinite());
}

#[test]
fn only_key_metrics_gate() {
    let gating: Vec<_> = METRICS.iter().filter(|m| m.gates).map(|m| m.key).collect();
    assert_eq!(
        gating,
        [
            "throughput",
            "error_rate",
            "p50",
            "p90",
            "p99",
            "ttft_p50",
            "ttft_p99",
            "itl_p50",
            "itl_p99"
        ]
    );
    for key in gating {
        assert!(
            per_second(key, &empty()).is_some(),
            "{key} needs a per-second series"
        );
    }
}

fn empty() -> RunResult {
    serde_json::from_value(serde_json::json!({
        "herd_version": "0.1.0", "kind": "run", "target": "t",
        "config": {"url": "t", "method": "GET", "model": "closed", "connections": 1, "rate": null,
                   "duration_s": 1.0, "requests": null, "warmup_s": 0.0, "threads": 1,
                   "timeout_s": 1.0, "calls_per_conn": null, "headers": [], "body_bytes": 0},
        "started_at": "2026-01-01T00:00:00Z", "duration_s": 0.0, "interrupted": false,
        "warmup": {"requests": 0, "duration_s": 0.0},
        "totals": {"scheduled": 0, "sent": 0, "completed": 0, "ok": 0, "failed": 0, "errors": 0,
                   "dropped": 0, "bytes_sent": 0, "bytes_received": 0},
        "throughput_rps": 0.0, "status": {}, "errors": {}, "error_samples": {},
        "latency_ms": zero(), "service_time_ms": zero(), "connect_ms": zero(),
        "response_bytes": {"min": 0, "mean": 0.0, "max": 0},
        "generator": {"cpu_user_s": 0.0, "cpu_sys_s": 0.0, "cpu_percent": 0.0,
                      "send_lag_p99_ms": 0.0, "verdict": "ok", "reasons": []},
        "timeline": [], "histograms": {"latency": "", "service_time": "", "connect": ""}
    }))
    .unwrap()
}

fn zero() -> serde_json::Value {
    serde_json::json!({"count": 0, "min": 0.0, "mean": 0.0, "stddev": 0.0, "p50": 0.0, "p75": 0.0,
                       "p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0})
}

#[test]
fn an_empty_run_compared_with_itself_passes() {
    let r = empty();
    let c = compare(&[("a".into(), &r), ("b".into(), &r)], 0.1);
    assert!(c.passed());
    for row in &c.metrics {
        assert_eq!(
            row.changes[0].unwrap().judgement,
            Judgement::Unchanged,
            "{}",
            row.metric.label
        );
    }
    // Runs without event streams have no rows of their figures.
    assert!(c.metrics.iter().all(|m| !is_stream(m.metric.key)));
}

/// A run whose streams' first token came after `ttft_ms` (the same each second), gaps 20 ms.
fn streamed(ttft_ms: f64) -> RunResult {
    let mut r = empty();
    let summary = |v: f64| {
        serde_json::json!({"count": 100, "min": v, "mean": v, "stddev": 0.0, "p50": v,
                           "p75": v, "p90": v, "p95": v, "p99": v, "p999": v, "max": v})
    };
    r.streams = Some(
        serde_json::from_value(serde_json::json!({
            "streams": 100, "events": 1000, "tokens": 1000, "events_per_second": 100.0,
            "tokens_per_second": 100.0, "ttft_ms": summary(ttft_ms),
            "ttft_sent_ms": summary(ttft_ms), "itl_ms": summary(20.0),
            "duration_ms": summary(200.0),
            "events_per_stream": {"min": 10, "mean": 10.0, "p50": 10, "p99": 10, "max": 10},
            "histograms": {"ttft": "", "ttft_sent": "", "itl": "", "duration": "",
                           "events_per_stream": ""}
        }))
        .unwrap(),
    );
    r.duration_s = 5.0;
    r.timeline = (0..5)
        .map(|t| {
            let mut e: herd_result::TimelineEntry = serde_json::from_value(serde_json::json!({
                "t": t, "requests": 20, "ok": 20, "failed": 0, "errors": 0, "rps": 20.0,
                "p50_ms": 300.0, "p90_ms": 300.0, "p99_ms": 300.0, "max_ms": 300.0,
                "bytes_received": 0, "status_class": {"2xx": 20}, "error_kinds": {}
            }))
            .unwrap();
            // A little noise, so the per-second test has a variance to weigh.
            let wobble = [0.0, 2.0, -1.0, 1.0, -2.0][t as usize];
            e.streams = Some(herd_result::TimelineStreams {
                streams: 20,
                ttft_p50_ms: ttft_ms + wobble,
                ttft_p99_ms: ttft_ms + wobble,
                itl_p50_ms: 20.0 + wobble / 10.0,
                itl_p99_ms: 20.0 + wobble / 10.0,
                ..Default::default()
            });
            e
        })
        .collect();
    r
}

#[test]
fn ttft_that_doubles_is_a_regression_judged_on_its_seconds() {
    let (base, slow) = (streamed(200.0), streamed(400.0));
    let c = compare(&[("base".into(), &base), ("slow".into(), &slow)], 0.1);
    assert!(!c.passed());
    let regressed: Vec<String> = c.regressions().iter().map(|r| r.metric.clone()).collect();
    assert_eq!(regressed, ["ttft p50", "ttft p99"]);
    let row = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "ttft_p99")
        .unwrap();
    let change = row.changes[0].unwrap();
    assert!(
        matches!(change.noise, Noise::PerSecond { p } if p < 0.001),
        "{change:?}"
    );
    let itl = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "itl_p99")
        .unwrap();
    assert_eq!(itl.changes[0].unwrap().judgement, Judgement::Unchanged);
}
