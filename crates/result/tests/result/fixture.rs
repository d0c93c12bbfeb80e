//! A small run with known numbers, recorded through the real metrics types, and the same run
//! with a watched server. Shared by the test binaries of herd-result and herd-report (included
//! by path): each uses part of it.
#![allow(dead_code)]

use herd_metrics::{ErrorKind, Outcome, Recorder, Second, Stats, Timeline, Verdict};
use herd_result::{
    build_run, Exporter, Gap, Generator, Model, Note, ProcessSample, ProcessState, PromSeries,
    RunConfig, RunInput, RunResult, SeriesKind, Server, WatchedProcess,
};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

pub const URL: &str = "http://127.0.0.1:8080/";
pub const DURATION: Duration = Duration::from_millis(2_500);
pub const DROPPED: u64 = 5;

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 90 ok responses at 1..=90 ms, 10 failed (503) at 100 ms, 3 resets at 1 ms and 2 timeouts at
/// 5 s; the first 4 requests opened a connection (200 us each). The 100 responses' latencies are
/// 1..=90 ms and ten of 100 ms: p50 = 50 ms, p90 = 90 ms, p99 = 100 ms; the 5 failures' times to
/// error are three of 1 ms and two of 5 s.
pub fn outcomes() -> Vec<Outcome> {
    let mut v = Vec::new();
    for i in 1..=90 {
        v.push(Outcome::completed(0, ms(i), ms(i) / 2, 200, Verdict::Ok));
    }
    for _ in 0..10 {
        v.push(Outcome::completed(0, ms(100), ms(50), 503, Verdict::Failed));
    }
    for _ in 0..3 {
        let mut o = Outcome::error(0, ms(1), ErrorKind::Reset);
        o.message = Some("Connection reset by peer (os error 104)".to_owned());
        v.push(o);
    }
    for _ in 0..2 {
        v.push(Outcome::error(0, ms(5_000), ErrorKind::Timeout));
    }
    for (i, o) in v.iter_mut().enumerate() {
        o.at = ms(i as u64 * 20);
        if i < 4 {
            o.connect = Some(Duration::from_micros(200));
        }
        if o.result.is_ok() {
            o.bytes_sent = 100;
            o.bytes_received = 700;
            o.body_bytes = 612;
        }
    }
    v
}

pub fn recorded() -> (Stats, Vec<Second>) {
    let mut rec = Recorder::new(1);
    for o in outcomes() {
        rec.record(&o);
    }
    let (stats, _, seconds) = rec.finish();
    let mut timeline = Timeline::default();
    for s in seconds {
        timeline.add(s);
    }
    (
        stats,
        timeline
            .finish(DURATION.as_secs_f64().ceil() as u64)
            .unwrap(),
    )
}

pub fn config(model: Model) -> RunConfig {
    RunConfig {
        url: URL.to_owned(),
        method: "GET".to_owned(),
        model,
        connections: 4,
        rate: (model == Model::Open).then_some(50.0),
        duration_s: Some(2.5),
        requests: None,
        warmup_s: 1.0,
        threads: 1,
        timeout_s: 5.0,
        calls_per_conn: None,
        pipeline: None,
        streams: None,
        proxy: None,
        headers: vec!["Accept: */*".to_owned()],
        body_bytes: 0,
        secrets_shown: false,
        labels: Default::default(),
        arrivals: None,
    }
}

pub fn input<'a>(stats: &'a Stats, timeline: &'a [Second]) -> RunInput<'a> {
    RunInput {
        target: URL.to_owned(),
        config: config(Model::Open),
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        duration: DURATION,
        offered: None,
        interrupted: false,
        stats,
        timeline,
        dropped: DROPPED,
        warmup_requests: 42,
        warmup_duration: Duration::from_secs(1),
        generator: Generator {
            cpu_user_s: 0.5,
            cpu_sys_s: 0.25,
            cpu_percent: 30.0,
            send_lag_p99_ms: 0.21,
            ..Generator::default()
        },
    }
}

pub fn result() -> RunResult {
    let (stats, timeline) = recorded();
    build_run(input(&stats, &timeline))
}

/// A run in which nothing at all happened.
pub fn empty_result() -> RunResult {
    let stats = Stats::default();
    let timeline = [Second::new(0)];
    let mut input = input(&stats, &timeline);
    input.dropped = 0;
    input.warmup_requests = 0;
    input.warmup_duration = Duration::ZERO;
    build_run(input)
}

fn sample(t: f64, cpu: f64, rss_mb: u64, fds: u64) -> ProcessSample {
    ProcessSample {
        t,
        processes: 2,
        cpu_percent: cpu,
        rss_bytes: rss_mb << 20,
        threads: 2,
        fds: Some(fds),
        ctx_switches_voluntary: 1_000,
        ctx_switches_involuntary: 20,
    }
}

/// nginx (master + worker) over a 3 s run, its worker growing by 24 MiB, and node_exporter.
pub fn watched() -> RunResult {
    let mut r = result();
    let nginx = WatchedProcess {
        pid: 100,
        name: Some("nginx".into()),
        pids: vec![100, 101],
        trees: vec![100],
        parent: None,
        start: Some(ProcessState {
            t: -0.002,
            processes: 2,
            rss_bytes: 8 << 20,
            threads: 2,
            fds: Some(12),
        }),
        samples: vec![
            sample(1.0, 40.0, 16, 60),
            sample(2.0, 80.0, 24, 70),
            sample(3.0, 60.0, 32, 20),
        ],
        notes: vec![Note {
            t: 3.0,
            text: "pid 101 exited".into(),
        }],
    };
    let idle = PromSeries {
        name: "node_cpu_seconds_total".into(),
        labels: BTreeMap::from([
            ("cpu".to_owned(), "0".to_owned()),
            ("mode".to_owned(), "idle".to_owned()),
        ]),
        kind: SeriesKind::Counter,
        rate: true,
        samples: vec![(1.0, Some(0.25)), (2.0, Some(0.5)), (3.0, Some(0.75))],
    };
    let mem = PromSeries {
        name: "node_memory_MemAvailable_bytes".into(),
        labels: BTreeMap::new(),
        kind: SeriesKind::Gauge,
        rate: false,
        samples: vec![(0.0, Some(2.0e10)), (1.0, Some(2.1e10)), (3.0, None)],
    };
    r.server = Some(Server {
        processes: vec![nginx],
        prometheus: vec![Exporter {
            url: "http://127.0.0.1:9100/metrics".into(),
            metrics: vec![
                "node_cpu_seconds_total{mode=\"idle\"}".into(),
                "node_memory_MemAvailable_bytes".into(),
            ],
            scrapes: 4,
            gaps: vec![Gap {
                t: 2.0,
                error: "cannot connect: Connection refused (os error 111)".into(),
            }],
            series: vec![idle, mem],
            series_dropped: 0,
        }],
    });
    r
}
