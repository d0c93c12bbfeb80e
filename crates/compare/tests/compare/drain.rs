//! The drain after a run's schedule is not a second of load: a few stragglers in its first
//! millisecond once read as a rate of hundreds per second and hid a halved throughput.

use herd_compare::{compare, Judgement};
use herd_metrics::{Outcome, Recorder, Timeline, Verdict};
use herd_result::{build_run, Generator, Model, RunConfig, RunInput, RunResult};
use std::time::{Duration, SystemTime};

/// An open run at about `rate` req/s for 4 s, one answer in the drain 0.5 ms after the end.
pub fn run_at(rate: u64) -> RunResult {
    let mut rec = Recorder::new(1);
    let answer = |at: Duration| {
        let mut o = Outcome::completed(
            0,
            Duration::from_millis(1),
            Duration::from_millis(1),
            200,
            Verdict::Ok,
        );
        o.at = at;
        o
    };
    for second in 0..4u64 {
        // A little variation, as real seconds have.
        let n = rate + second % 2 * rate / 50;
        for i in 0..n {
            rec.record(&answer(
                Duration::from_secs(second) + Duration::from_secs(1) * i as u32 / n as u32,
            ));
        }
    }
    rec.record(&answer(Duration::from_micros(4_000_500)));
    let (stats, _, seconds) = rec.finish();
    let mut timeline = Timeline::default();
    seconds.into_iter().for_each(|s| timeline.add(s));
    build_run(RunInput {
        target: "http://127.0.0.1:8080/".into(),
        config: RunConfig {
            url: "http://127.0.0.1:8080/".into(),
            method: "GET".into(),
            model: Model::Open,
            connections: 1000,
            rate: Some(rate as f64),
            duration_s: Some(4.0),
            requests: None,
            warmup_s: 0.0,
            threads: 2,
            timeout_s: 10.0,
            calls_per_conn: None,
            pipeline: None,
            streams: None,
            proxy: None,
            headers: vec![],
            body_bytes: 0,
            secrets_shown: false,
            labels: Default::default(),
            arrivals: None,
        },
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        duration: Duration::from_micros(4_001_130),
        offered: Some(Duration::from_secs(4)),
        interrupted: false,
        stats: &stats,
        timeline: &timeline.finish(5).unwrap(),
        dropped: 0,
        warmup_requests: 0,
        warmup_duration: Duration::ZERO,
        generator: Generator::default(),
    })
}

#[test]
fn a_drain_second_is_not_a_sample_of_throughput() {
    let (fast, slow) = (run_at(200), run_at(100));
    let drain = fast.timeline.last().unwrap();
    assert_eq!((drain.t, drain.requests), (4, 1));
    assert!(drain.partial, "the drain is not a whole second");
    assert!(
        drain.rps < 2.0,
        "one straggler is not a rate: {}",
        drain.rps
    );
    assert_eq!(fast.samples().count(), 4);

    let c = compare(&[("fast".into(), &fast), ("slow".into(), &slow)], 0.1);
    let throughput = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "throughput")
        .unwrap();
    assert_eq!(
        throughput.changes[0].unwrap().judgement,
        Judgement::Regressed,
        "half the throughput is a regression, not noise"
    );
    assert!(!c.passed());
}
