use crate::fixture::{self, DROPPED};
use herd_result::{decode_histogram, Kind, HERD_VERSION};
use std::collections::BTreeMap;

fn close(got: f64, want: f64) -> bool {
    // HdrHistogram at 3 significant digits: within 0.1 %, and values report a bucket's top.
    (got - want).abs() <= want * 0.001 + 1e-9
}

#[test]
fn totals_split_outcomes_and_scheduled_is_their_sum() {
    let r = fixture::result();
    let t = &r.totals;
    assert_eq!(
        (t.completed, t.ok, t.failed, t.errors, t.dropped),
        (100, 90, 10, 5, DROPPED)
    );
    assert_eq!(t.scheduled, t.completed + t.errors + t.dropped);
    assert_eq!(t.scheduled, 110);
    assert_eq!(t.sent, 100, "errors before the write are not sent");
    assert_eq!((t.bytes_sent, t.bytes_received), (100 * 100, 100 * 700));
    assert_eq!(r.throughput_rps, 100.0 / 2.5);
}

#[test]
fn status_and_error_classes_are_keyed_as_the_contract_says() {
    let r = fixture::result();
    let status: BTreeMap<_, _> = [("200".to_owned(), 90), ("503".to_owned(), 10)].into();
    assert_eq!(r.status, status);
    let errors: BTreeMap<_, _> = [("reset".to_owned(), 3), ("timeout".to_owned(), 2)].into();
    assert_eq!(r.errors, errors);
    assert_eq!(r.error_samples.len(), 1, "timeouts carried no message");
    assert_eq!(
        r.error_samples["reset"],
        "Connection reset by peer (os error 104)"
    );
}

#[test]
fn latency_counts_responses_and_time_to_error_counts_failures() {
    let r = fixture::result();
    assert_eq!(r.latency_ms.count, r.totals.completed);
    assert_eq!(r.service_time_ms.count, r.totals.completed);
    let e = &r.time_to_error_ms;
    assert_eq!(e.count, r.totals.errors);
    assert_eq!(e.count, 5);
    assert!(close(e.min, 1.0) && close(e.p50, 1.0), "{e:?}");
    assert!(close(e.max, 5_000.0), "max {}", e.max);
    // and the JSON says the same, under the names the schema gives
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["latency_ms"]["count"], 100);
    assert_eq!(v["time_to_error_ms"]["count"], 5);
    let h = decode_histogram(v["histograms"]["time_to_error"].as_str().unwrap()).unwrap();
    assert_eq!(h.len(), 5);
}

#[test]
fn percentiles_come_from_the_histograms_in_milliseconds() {
    let r = fixture::result();
    let l = &r.latency_ms;
    assert_eq!(l.count, 100, "latency is of responses only");
    assert!(close(l.min, 1.0), "min {}", l.min);
    assert!(close(l.p50, 50.0), "p50 {}", l.p50);
    assert!(close(l.p90, 90.0), "p90 {}", l.p90);
    assert!(close(l.p99, 100.0), "p99 {}", l.p99);
    assert!(close(l.max, 100.0), "max {}", l.max);
    assert!(
        l.p50 <= l.p75 && l.p75 <= l.p90 && l.p90 <= l.p95 && l.p95 <= l.p99 && l.p99 <= l.p999
    );
    let s = &r.service_time_ms;
    assert_eq!(s.count, 100);
    assert!(close(s.max, 50.0), "service max {}", s.max);
    assert_eq!(r.connect_ms.count, 4);
    assert!(
        close(r.connect_ms.p50, 0.2),
        "connect p50 {}",
        r.connect_ms.p50
    );
    assert_eq!(
        (
            r.response_bytes.min,
            r.response_bytes.mean,
            r.response_bytes.max
        ),
        (612, 612.0, 612)
    );
}

#[test]
fn timeline_has_every_second_and_adds_up() {
    let r = fixture::result();
    assert_eq!(
        r.timeline.iter().map(|s| s.t).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(r.timeline.iter().map(|s| s.requests).sum::<u64>(), 105);
    assert_eq!(r.timeline.iter().map(|s| s.ok).sum::<u64>(), 90);
    let first = &r.timeline[0];
    assert_eq!(first.requests, 50, "one outcome every 20 ms");
    assert_eq!(first.rps, 50.0);
    assert_eq!(first.status_class["2xx"], 50);
    assert!(first.error_kinds.is_empty());
    let last = &r.timeline[2];
    assert_eq!(last.requests, 5);
    assert_eq!(
        last.rps, 10.0,
        "5 requests in the half second the run had left"
    );
    assert_eq!(last.error_kinds["timeout"], 2);
}

#[test]
fn identity_and_provenance() {
    let r = fixture::result();
    assert_eq!(r.herd_version, HERD_VERSION);
    assert_eq!(r.kind, Kind::Run);
    assert_eq!(r.target, fixture::URL);
    assert_eq!(r.started_at, "2023-11-14T22:13:20.000Z");
    assert_eq!((r.warmup.requests, r.warmup.duration_s), (42, 1.0));
    assert_eq!(r.duration_s, 2.5);
}

#[test]
fn histograms_in_the_result_decode_to_the_recorded_ones() {
    let (stats, timeline) = fixture::recorded();
    let r = herd_result::build_run(fixture::input(&stats, &timeline));
    assert_eq!(
        decode_histogram(&r.histograms.latency).unwrap(),
        stats.latency.to_histogram()
    );
    assert_eq!(
        decode_histogram(&r.histograms.service_time).unwrap(),
        stats.service.to_histogram()
    );
    assert_eq!(
        decode_histogram(&r.histograms.connect).unwrap(),
        stats.connect.to_histogram()
    );
    assert_eq!(
        decode_histogram(&r.histograms.time_to_error).unwrap(),
        stats.time_to_error.to_histogram()
    );
}

#[test]
fn an_empty_run_reports_zeros_not_sentinels() {
    let r = fixture::empty_result();
    assert_eq!(r.totals, Default::default());
    assert_eq!(r.latency_ms, Default::default());
    assert_eq!(
        r.response_bytes,
        Default::default(),
        "body_min starts at u64::MAX in Stats"
    );
    assert_eq!(r.throughput_rps, 0.0);
    assert_eq!(r.timeline.len(), 1);
    assert_eq!(r.timeline[0].p99_ms, 0.0);
}

#[test]
fn unmeasurable_generator_numbers_become_zero() {
    let (stats, timeline) = fixture::recorded();
    let mut input = fixture::input(&stats, &timeline);
    input.generator.cpu_percent = f64::NAN;
    let r = herd_result::build_run(input);
    assert_eq!(r.generator.cpu_percent, 0.0);
}
