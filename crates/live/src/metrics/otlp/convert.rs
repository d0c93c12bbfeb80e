//! The endpoint's series as OTLP metrics: the same families under OpenTelemetry's names (dots,
//! units apart: `herd_request_duration_seconds` is `herd.latency` in `s`), counters as monotonic
//! cumulative sums, the latency ladder as an explicit-bucket histogram, the run and the shard
//! on the resource rather than on every point.

use super::proto::{
    Data, ExportMetricsServiceRequest, Gauge, Histogram, HistogramDataPoint, InstrumentationScope,
    KeyValue, Metric, NumberDataPoint, Resource, ResourceMetrics, ScopeMetrics, Sum, Value,
    CUMULATIVE,
};
use crate::metrics::exposition::Exposition;
use crate::metrics::family::{Family, Point};

/// Each family's OpenTelemetry name and unit (UCUM; `{...}` annotations count things).
const NAMES: &[(&str, &str, &str)] = &[
    ("herd_requests_total", "herd.requests", "{request}"),
    ("herd_responses_total", "herd.responses", "{response}"),
    ("herd_errors_total", "herd.errors", "{request}"),
    ("herd_received_bytes_total", "herd.received", "By"),
    ("herd_stream_events_total", "herd.stream.events", "{event}"),
    ("herd_stream_tokens_total", "herd.stream.tokens", "{token}"),
    ("herd_request_duration_seconds", "herd.latency", "s"),
    ("herd_stream_ttft_seconds", "herd.stream.ttft", "s"),
    ("herd_stream_itl_seconds", "herd.stream.itl", "s"),
    ("herd_measured_seconds", "herd.measured", "s"),
    ("herd_target", "herd.target", "1"),
    ("herd_generator_cpu_percent", "herd.generator.cpu", "%"),
    ("herd_send_lag_p99_seconds", "herd.send_lag.p99", "s"),
    ("herd_loop_delay_max_seconds", "herd.loop_delay.max", "s"),
    ("herd_connections", "herd.connections", "{connection}"),
    ("herd_scheduled_total", "herd.scheduled", "{request}"),
    ("herd_dropped_total", "herd.dropped", "{request}"),
    ("herd_in_flight", "herd.in_flight", "{request}"),
    ("herd_ws_ping_rtt_seconds", "herd.ws.ping_rtt", "s"),
    ("herd_ws_closes_total", "herd.ws.closes", "{close}"),
    (
        "herd_ws_handshakes_failed_total",
        "herd.ws.handshakes_failed",
        "{handshake}",
    ),
    (
        "herd_ws_backlog_messages",
        "herd.ws.backlog.messages",
        "{message}",
    ),
    ("herd_ws_backlog_bytes", "herd.ws.backlog.bytes", "By"),
    (
        "herd_name_requests_total",
        "herd.name.requests",
        "{request}",
    ),
    (
        "herd_name_request_duration_seconds",
        "herd.name.latency",
        "s",
    ),
    (
        "herd_scenario_iterations_total",
        "herd.scenario.iterations",
        "{iteration}",
    ),
    ("herd_checks_total", "herd.checks", "{check}"),
    ("herd_run_finished", "herd.run.finished", "1"),
];

/// The OpenTelemetry name and unit of the family `prometheus`.
pub fn name_of(prometheus: &str) -> (String, &'static str) {
    match NAMES.iter().find(|(p, _, _)| *p == prometheus) {
        Some((_, name, unit)) => ((*name).to_owned(), unit),
        // A family added to the endpoint later still goes out, under a name made the same way.
        None => (
            prometheus
                .trim_end_matches("_total")
                .replacen("herd_", "herd.", 1),
            "1",
        ),
    }
}

/// When the series started counting and when they were read, in Unix nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Times {
    pub start: u64,
    pub now: u64,
}

/// Everything in `e` as one export request.
pub fn request(e: &Exposition, t: Times) -> ExportMetricsServiceRequest {
    let version = herd_result::HERD_VERSION;
    let mut attributes = vec![
        KeyValue::new("service.name", "herd"),
        KeyValue::new("service.version", version),
    ];
    let mut instance = String::new();
    for (k, v) in e.base_labels() {
        if v.is_empty() {
            continue;
        }
        attributes.push(KeyValue::new(&format!("herd.{k}"), v));
        instance = if instance.is_empty() {
            v.clone()
        } else {
            format!("{instance}/{v}")
        };
    }
    if !instance.is_empty() {
        // Tells the pushes of two runs, or two shards of one, apart in a collector that keys
        // series by service instance (its Prometheus exporter's `instance`).
        attributes.push(KeyValue::new("service.instance.id", &instance));
    }
    let metrics = e.families().iter().filter_map(|f| metric(f, t)).collect();
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource { attributes }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "herd".to_owned(),
                    version: version.to_owned(),
                }),
                metrics,
            }],
        }],
    }
}

fn attributes(p: &Point) -> Vec<KeyValue> {
    p.labels
        .iter()
        .filter(|(k, _)| k != "le")
        .map(|(k, v)| KeyValue::new(k, v))
        .collect()
}

fn metric(f: &Family, t: Times) -> Option<Metric> {
    let (name, unit) = name_of(f.name);
    let number = |p: &Point, int: bool| NumberDataPoint {
        attributes: attributes(p),
        start_time_unix_nano: t.start,
        time_unix_nano: t.now,
        value: Some(if int {
            Value::AsInt(p.value as i64)
        } else {
            Value::AsDouble(p.value)
        }),
    };
    let data = match f.kind {
        "counter" => Data::Sum(Sum {
            data_points: f.points.iter().map(|p| number(p, true)).collect(),
            aggregation_temporality: CUMULATIVE,
            is_monotonic: true,
        }),
        "gauge" => Data::Gauge(Gauge {
            data_points: f.points.iter().map(|p| number(p, false)).collect(),
        }),
        "histogram" => Data::Histogram(Histogram {
            data_points: histogram_points(f, t),
            aggregation_temporality: CUMULATIVE,
        }),
        _ => return None,
    };
    Some(Metric {
        name,
        description: f.help.to_owned(),
        unit: unit.to_owned(),
        data: Some(data),
    })
}

/// A histogram family's points (`_bucket` with `le`, `_sum`, `_count`, per label set) as one
/// OTLP point per label set: Prometheus counts each bucket with those below it, OTLP apart.
fn histogram_points(f: &Family, t: Times) -> Vec<HistogramDataPoint> {
    // Per label set: its cumulative (bound, count) pairs, and the point being built.
    let mut out: Vec<(Vec<(f64, u64)>, HistogramDataPoint)> = Vec::new();
    for p in &f.points {
        let key = attributes(p);
        let i = match out.iter().position(|(_, h)| h.attributes == key) {
            Some(i) => i,
            None => {
                let point = HistogramDataPoint {
                    attributes: key,
                    start_time_unix_nano: t.start,
                    time_unix_nano: t.now,
                    ..Default::default()
                };
                out.push((Vec::new(), point));
                out.len() - 1
            }
        };
        let (cumulative, point) = &mut out[i];
        let le = p.labels.iter().find(|(k, _)| k == "le").map(|(_, v)| v);
        if p.name.ends_with("_sum") {
            point.sum = Some(p.value);
        } else if p.name.ends_with("_count") {
            point.count = p.value as u64;
        } else if let Some(bound) = le.and_then(|v| v.parse::<f64>().ok()) {
            if bound.is_finite() {
                cumulative.push((bound, p.value as u64));
            }
        }
    }
    out.into_iter()
        .map(|(cumulative, mut point)| {
            let mut below = 0;
            for (bound, n) in cumulative {
                point.explicit_bounds.push(bound);
                point.bucket_counts.push(n.saturating_sub(below));
                below = below.max(n);
            }
            point.bucket_counts.push(point.count.saturating_sub(below));
            point
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_an_opentelemetry_name() {
        let families = Exposition::default().families();
        for f in &families {
            assert!(
                NAMES.iter().any(|(p, _, _)| *p == f.name),
                "{} has no OpenTelemetry name in NAMES",
                f.name
            );
        }
        assert_eq!(name_of("herd_new_things_total").0, "herd.new_things");
        // A WebSocket run's families, which the default exposition lacks.
        for f in [
            "herd_ws_ping_rtt_seconds",
            "herd_ws_closes_total",
            "herd_ws_handshakes_failed_total",
            "herd_ws_backlog_messages",
            "herd_ws_backlog_bytes",
        ] {
            assert!(NAMES.iter().any(|(p, _, _)| *p == f), "{f}");
        }
        assert_eq!(
            name_of("herd_ws_ping_rtt_seconds"),
            ("herd.ws.ping_rtt".into(), "s")
        );
    }

    #[test]
    fn cumulative_buckets_become_counts_per_bucket() {
        let point = |name: &str, le: Option<&str>, value: f64| Point {
            name: name.to_owned(),
            labels: le
                .map(|le| ("le".to_owned(), le.to_owned()))
                .into_iter()
                .chain([("name".to_owned(), "home".to_owned())])
                .collect(),
            value,
        };
        let f = Family {
            name: "herd_name_request_duration_seconds",
            kind: "histogram",
            help: "",
            points: vec![
                point("x_bucket", Some("0.001"), 2.0),
                point("x_bucket", Some("0.01"), 5.0),
                point("x_bucket", Some("+Inf"), 6.0),
                point("x_sum", None, 0.5),
                point("x_count", None, 6.0),
            ],
        };
        let m = metric(&f, Times { start: 1, now: 2 }).unwrap();
        assert_eq!(m.name, "herd.name.latency");
        let Some(Data::Histogram(h)) = m.data else {
            panic!("a histogram")
        };
        assert_eq!(h.aggregation_temporality, CUMULATIVE);
        let p = &h.data_points[0];
        assert_eq!(p.explicit_bounds, [0.001, 0.01]);
        assert_eq!(p.bucket_counts, [2, 3, 1]);
        assert_eq!((p.count, p.sum), (6, Some(0.5)));
        assert_eq!(p.attributes, [KeyValue::new("name", "home")]);
    }
}
