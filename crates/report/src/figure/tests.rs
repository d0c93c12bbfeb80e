//! The figures of every report page as data: ids the page and its hover script use, kinds,
//! axes, series and marks, from the fixtures (no drawing).

use super::*;
use crate::capacity::CapacityResult;
use crate::{parse_document, parse_json, Document, RunResult, TimelineEntry};

fn run(text: &str) -> RunResult {
    parse_json(text, "fixture").unwrap()
}

const WATCHED: &str = include_str!("../../../result/tests/fixtures/run-watched.json");
const ERRORS: &str = include_str!("../../../result/tests/fixtures/run-closed-errors.json");
const OPEN: &str = include_str!("../../../result/tests/fixtures/run-open.json");
const WORKLOAD: &str = include_str!("../../../result/tests/fixtures/run-workload.json");

fn capacity() -> CapacityResult {
    let text = include_str!("../../../result/tests/fixtures/capacity-users.json");
    match parse_document(text, "capacity-users.json").unwrap() {
        Document::Capacity(c) => *c,
        _ => panic!("not a capacity search"),
    }
}

fn ids(f: &Figure) -> Vec<&str> {
    f.panels.iter().map(|p| p.id.as_str()).collect()
}

fn labels(p: &Panel) -> Vec<&str> {
    p.series.iter().map(|s| s.label.as_str()).collect()
}

#[test]
fn a_runs_panels_are_named_and_read_as_the_page_shows_them() {
    let r = run(OPEN);
    let f = run_figure(&r);
    assert_eq!(
        ids(&f),
        ["chart-throughput", "chart-latency", "chart-distribution"]
    );
    let table = [
        (TIME_AXIS, Reading::Second, Reading::Rate(" req/s".into())),
        (TIME_AXIS, Reading::Second, Reading::Duration),
        (PERCENTILE_AXIS, Reading::Percentile, Reading::Duration),
    ];
    for (p, (x_label, x_reads, y_reads)) in f.panels.iter().zip(table) {
        assert_eq!(
            (p.x_label.as_str(), &p.x_reads, &p.y_reads),
            (x_label, &x_reads, &y_reads)
        );
        assert_eq!(p.kind, Kind::Lines);
    }
    // The time axis covers the whole run; the throughput axis the target rate too.
    assert_eq!(f.panels[0].x_range, (0.0, run_end(&r).max(1.0)));
    let top = r
        .config
        .rate
        .unwrap()
        .max(r.timeline.iter().map(|e| e.rps).fold(0.0, f64::max));
    assert!((f.panels[0].y_range.1 - top * 1.05).abs() < 1e-9);
    assert_eq!(f.panels[2].x_axis, XAxis::Percentile);
}

#[test]
fn statuses_are_stacked_bars_a_layer_per_class_then_per_error() {
    let r = run(WATCHED);
    let f = statuses_figure(&r);
    let p = &f.panels[0];
    assert_eq!(p.id, "chart-statuses");
    let n = r.timeline.len();
    assert_eq!(
        p.kind,
        Kind::StackedBars {
            starts: (0..n).map(|i| i as f64).collect(),
            width: 1.0
        }
    );
    assert_eq!(labels(p), ["2xx", "5xx"]);
    assert_eq!(p.series[1].color, palette::status("5xx"));
    assert_eq!(p.x_reads, Reading::Second);
    let errors = statuses_figure(&run(ERRORS));
    assert_eq!(labels(&errors.panels[0]), ["2xx", "error: reset"]);
    assert_eq!(errors.panels[0].series[1].color, palette::error(0));
}

#[test]
fn a_long_run_is_summed_into_buckets_of_whole_seconds() {
    let mut r = run(WATCHED);
    let first = r.timeline[0].clone();
    r.timeline = (0..500u64)
        .map(|t| TimelineEntry { t, ..first.clone() })
        .collect();
    let p = statuses_figure(&r).panels.remove(0);
    // 500 s in bars of 3 s: at most 240 bars, each the mean per second of its seconds.
    let Kind::StackedBars { starts, width } = &p.kind else {
        panic!("{:?}", p.kind)
    };
    assert_eq!((starts.len(), *width), (167, 3.0));
    assert_eq!(p.x_reads, Reading::Seconds(3));
    assert!(p.caption.ends_with("(3 s buckets)"));
    let per_s = *first.status_class.get("2xx").unwrap() as f64;
    assert_eq!(p.series[0].points[0], (0.0, per_s));
    // The axis reaches the tallest bar, all layers stacked, with room above.
    let tallest: f64 = p.series.iter().map(|s| s.points[0].1).sum();
    assert!((p.y_range.1 - tallest * 1.05).abs() < 1e-9);
}

#[test]
fn runs_compared_keep_one_colour_each_and_show_errors_only_when_any() {
    let (a, b) = (run(OPEN), run(ERRORS));
    let f = compare_figure(&["base", "new"], &[&a, &b]);
    assert_eq!(
        ids(&f),
        [
            "chart-throughput",
            "chart-latency",
            "chart-distribution",
            "chart-errors"
        ]
    );
    assert_eq!(
        labels(&f.panels[1]),
        ["base p99", "base p50", "new p99", "new p50"]
    );
    for p in &f.panels {
        assert_eq!(p.series[0].color, palette::cycle(0), "{}", p.id);
        assert_eq!(
            p.series.last().unwrap().color,
            palette::cycle(1),
            "{}",
            p.id
        );
    }
    assert!(f.panels[1].series[1].dashed);
    let quiet = compare_figure(&["a", "b"], &[&a, &a]);
    assert_eq!(quiet.panels.len(), 3);
    // One time axis for all: the longest run's.
    assert_eq!(quiet.panels[0].x_range.1, run_end(&a).max(1.0));
}

#[test]
fn the_server_figure_has_its_processes_then_a_panel_per_metric() {
    let r = run(WATCHED);
    let f = server_figure(&r).unwrap();
    assert_eq!(
        ids(&f)[..4],
        [
            "chart-server-cpu",
            "chart-server-memory",
            "chart-server-counts",
            "chart-server-ctx"
        ]
    );
    assert_eq!(ids(&f)[4], "chart-server-metric-1");
    let reads: Vec<&Reading> = f.panels[..4].iter().map(|p| &p.y_reads).collect();
    assert_eq!(
        reads,
        [
            &Reading::Percent,
            &Reading::Bytes,
            &Reading::Count,
            &Reading::Rate(String::new())
        ]
    );
    // Intervals are headed by the second they cover, instants by when they were read.
    assert_eq!(f.panels[0].x_reads, Reading::Second);
    assert_eq!(f.panels[1].x_reads, Reading::Instant);
    // Two processes: each line names its process.
    assert!(f.panels[0].series.len() == 2 && f.panels[0].series[0].label.ends_with(" CPU"));
    assert_eq!(metrics_not_drawn(&r), 0);
    assert!(server_figure(&run(OPEN)).is_none());
}

#[test]
fn the_generator_figure_draws_threads_lateness_connections_and_ports() {
    let r = run(WORKLOAD);
    let f = generator_figure(&r);
    assert_eq!(
        ids(&f),
        [
            "chart-generator-cpu",
            "chart-generator-lag",
            "chart-generator-connections",
            "chart-generator-ports"
        ]
    );
    assert_eq!(labels(&f.panels[0]), ["thread 1", "thread 2"]);
    // One core is a limit across, and the axis reaches it.
    assert_eq!(f.panels[0].marks[0].at, 100.0);
    assert!(f.panels[0].y_range.1 >= 105.0);
    // A closed run has no schedule to be late against: no send lag line.
    assert_eq!(labels(&f.panels[1]).len(), 1);
    assert!(generator_figure(&run(OPEN)).panels.is_empty());

    // Nine threads: the busiest, the mean and the idlest instead of a line each.
    let mut many = run(WORKLOAD);
    for s in &mut many.generator.timeline {
        s.cpu_percent = (0..9).map(|k| k as f64 * 10.0).collect();
    }
    let cpu = generator_figure(&many).panels.remove(0);
    assert_eq!(
        labels(&cpu),
        ["busiest thread", "mean of threads", "idlest thread"]
    );
    assert_eq!(cpu.series[0].points[0].1, 80.0);
    assert_eq!(cpu.series[2].points[0].1, 0.0);
}

#[test]
fn the_port_range_is_marked_only_when_the_run_came_near_it() {
    let mut r = run(WORKLOAD);
    let used = |r: &RunResult| generator_figure(r).panels.remove(3);
    assert!(used(&r).marks.is_empty());
    let peak = r
        .generator
        .timeline
        .iter()
        .filter_map(|s| s.ephemeral_ports)
        .max()
        .unwrap();
    r.generator.ephemeral_port_range = Some(peak * 2);
    let p = used(&r);
    assert_eq!(p.marks[0].at, (peak * 2) as f64);
    assert!(p.y_range.1 >= (peak * 2) as f64);
}

#[test]
fn the_search_is_probes_in_order_with_verdicts_as_points() {
    let c = capacity();
    let f = search_figure(&c);
    let p = &f.panels[0];
    assert_eq!(p.id, "chart-capacity-search");
    assert_eq!(
        labels(p),
        ["level probed", "held", "broke the SLO", "limited by herd"]
    );
    assert!(p.series[0].joined && !p.series[1].joined && p.series[1].markers);
    let Reading::Ordinal(heads) = &p.x_reads else {
        panic!("{:?}", p.x_reads)
    };
    assert_eq!(heads.len(), c.probes.len());
    let first = crate::format::duration_s(c.probes[0].duration_s);
    assert_eq!(heads[0], format!("probe 1: ramp, {first}"));
    // Held and broke together are every probe herd did not limit.
    assert_eq!(
        p.series[1].points.len() + p.series[2].points.len(),
        c.probes.len()
    );
    assert_eq!(p.y_reads, Reading::Users);
    let marks: Vec<&str> = p.marks.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(marks, ["capacity: 4 users", "breaks: ~5 users"]);
    // The capacity figure of the same search: ids the page uses, levels read as users.
    let curves = capacity_figure(&c);
    assert_eq!(
        ids(&curves),
        [
            "chart-capacity-throughput",
            "chart-capacity-latency",
            "chart-capacity-errors"
        ]
    );
    assert!(curves.panels.iter().all(|p| p.x_reads == Reading::Users));
}

#[test]
fn phases_are_a_bar_per_request_name_stacked_by_phase_and_plain_runs_have_none() {
    use crate::figure::phases_figure;
    let mut r = run(OPEN);
    r.by_name.clear();
    assert!(phases_figure(&r).is_none(), "no names, no breakdown");
    let ms = |count, mean| crate::Summary {
        count,
        mean,
        ..Default::default()
    };
    for (name, waiting) in [("login", 4.0), ("cart", 2.0)] {
        let mut n = crate::name_result(
            name,
            &herd_metrics::Stats::default(),
            std::time::Duration::from_secs(1),
        );
        n.totals.completed = 10;
        n.connect_ms = Some(ms(2, 5.0));
        n.phases = Some(crate::Phases {
            dns_ms: None,
            tls_ms: ms(2, 3.0),
            blocked_ms: ms(0, 0.0),
            waiting_ms: ms(10, waiting),
            receiving_ms: ms(10, 0.5),
        });
        r.by_name.push(n);
    }
    let fig = phases_figure(&r).unwrap();
    let p = &fig.panels[0];
    assert_eq!(
        p.kind,
        Kind::Breakdown {
            names: vec!["login".into(), "cart".into()]
        }
    );
    let layers: Vec<&str> = p.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        layers,
        ["connect", "TLS", "waiting", "receiving"],
        "no one was blocked"
    );
    // Per request: 2 connections of 5 ms (3 of them TLS) over 10 requests.
    let at = |layer: usize, bar: usize| p.series[layer].points[bar].1;
    assert!((at(0, 0) - 0.4).abs() < 1e-9, "{}", at(0, 0));
    assert!((at(1, 0) - 0.6).abs() < 1e-9, "{}", at(1, 0));
    assert_eq!((at(2, 0), at(2, 1)), (4.0, 2.0));
    let html = crate::html::figure_svg(&fig);
    assert!(
        html.contains(">login</text>") && html.contains(">cart</text>"),
        "{html}"
    );
}
