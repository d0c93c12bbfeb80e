//! The watched server in the result: optional, schema-checked, read back, summarised.

use crate::{fixture, schema::validator};
use herd_report::render_text;
use herd_result::{
    parse_json, write_json, Exporter, Gap, Note, ProcessSample, ProcessState, PromSeries,
    RunResult, SeriesKind, Server, WatchedProcess,
};
use std::collections::BTreeMap;

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
    let mut r = fixture::result();
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

#[test]
fn a_watched_result_matches_the_schema_and_reads_back_equal() {
    let r = watched();
    let doc = serde_json::to_value(&r).unwrap();
    let v = validator();
    let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{errs:#?}");
    assert_eq!(
        doc["server"]["processes"][0]["samples"][1]["cpu_percent"],
        80.0
    );
    assert_eq!(
        doc["server"]["prometheus"][0]["series"][1]["samples"][2],
        serde_json::json!([3.0, null])
    );
    let mut out = Vec::new();
    write_json(&r, &mut out).unwrap();
    let back = parse_json(std::str::from_utf8(&out).unwrap(), "watched.json").unwrap();
    assert_eq!(back, r);
}

#[test]
fn the_schema_rejects_a_malformed_server() {
    let v = validator();
    let breakages: [(&str, serde_json::Value); 4] = [
        ("/server/processes/0/samples/0/cpu_percent", (-1).into()),
        ("/server/prometheus/0/series/0/kind", "meter".into()),
        (
            "/server/prometheus/0/series/0/samples/0",
            serde_json::json!([1.0]),
        ),
        ("/server/processes/0/pid", "nginx".into()),
    ];
    for (pointer, bad) in breakages {
        let mut doc = serde_json::to_value(watched()).unwrap();
        *doc.pointer_mut(pointer).unwrap() = bad;
        assert!(!v.is_valid(&doc), "{pointer} should be rejected");
    }
}

#[test]
fn results_without_a_server_have_no_key_and_still_read() {
    let r = fixture::result();
    assert_eq!(r.server, None);
    let doc = serde_json::to_value(&r).unwrap();
    assert!(
        doc.get("server").is_none(),
        "no key when nothing was watched"
    );
    let back = parse_json(&doc.to_string(), "old.json").unwrap();
    assert_eq!(back.server, None);
}

#[test]
fn the_summary_shows_cpu_memory_growth_and_series() {
    let mut text = String::new();
    render_text(&watched(), &mut text).unwrap();
    println!("{text}");
    for want in [
        "server     nginx (pids 100, 101), 3 samples",
        // (40 + 80 + 60) / 3; RSS from the start reading to the last sample
        "cpu mean 60.0%  peak 80.0%   rss 8.39 MB -> 33.6 MB (+25.2 MB)   threads 2   fds 12 -> 20 (peak 70)",
        "context switches 1,000/s voluntary, 20.0/s involuntary",
        "at 3.00 s: pid 101 exited",
        "prometheus http://127.0.0.1:9100/metrics  4 scrapes, 1 failed (first at 2.00 s: cannot connect",
        "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"}  rate/s  min 0.250  mean 0.500  max 0.750",
        "node_memory_MemAvailable_bytes               value   min 20.0G  mean 20.5G  max 21.0G",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}
