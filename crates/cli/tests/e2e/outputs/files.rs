//! The files for CI and the HdrHistogram tools, read by those tools.

use crate::common::{mock, one_at_a_time, python, Herd, TempDir};

#[test]
fn hlog_junit_csv_and_markdown_are_read_by_their_own_tools() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("ci-files");
    let (json, hlog, junit, csv, md) = (
        dir.path("r.json"),
        dir.path("r.hlog"),
        dir.path("r.xml"),
        dir.path("r.csv"),
        dir.path("r.md"),
    );
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&["run", &url, "-d", "2s", "-c", "2", "-t", "1"])
        .json(&json)
        .file("--hlog", &hlog)
        .file("--junit", &junit)
        .file("--csv", &csv)
        .file("--summary-md", &md)
        .run();
    let result = ran.json();
    let completed = result["totals"]["completed"].as_u64().unwrap();
    assert!(completed > 0);

    // HdrHistogram's Python package reads one histogram per second, every response in them.
    let read = python(
        "import sys
from hdrh.log import HistogramLogReader
from hdrh.histogram import HdrHistogram
r = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**6, 2))
n = total = 0
while True:
    h = r.get_next_interval_histogram()
    if h is None:
        break
    n += 1
    total += h.get_total_count()
print(n, total)",
        &[&hlog],
    );
    let (n, total) = read.trim().split_once(' ').unwrap();
    assert!(n.parse::<u64>().unwrap() >= 2, "{read}");
    assert_eq!(total.parse::<u64>().unwrap(), completed, "{read}");

    // A JUnit parser reads one passing case for a run without thresholds.
    let cases = python(
        "import sys
from junitparser import JUnitXml
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    for case in suite:
        print(case.name, 'passed' if case.is_passed else 'failed')",
        &[&junit],
    );
    assert_eq!(cases.trim(), format!("GET {url} passed"));

    // The CSV: its header, then a row per second of the result's timeline.
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("t,requests,ok,"), "{text}");
    let timeline = result["timeline"].as_array().unwrap();
    assert_eq!(rows.len() - 1, timeline.len(), "{text}");
    let csv_total: u64 = rows[1..]
        .iter()
        .map(|r| r.split(',').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_total, completed);

    let summary = std::fs::read_to_string(&md).unwrap();
    assert!(summary.starts_with(&format!("## herd: {url}")), "{summary}");
    assert!(summary.contains("| latency |"), "{summary}");
    // Thousands separators, as the text summary has them: `67,767.4 req/s`, not `67767.4`.
    let rps = result["throughput_rps"].as_f64().unwrap();
    let fixed = format!("{rps:.1}");
    let (whole, frac) = fixed.split_once('.').unwrap();
    let grouped: Vec<String> = whole
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let want = format!("| Throughput | {}.{frac} req/s |", grouped.join(","));
    assert!(summary.contains(&want), "{want} in\n{summary}");
}

#[test]
fn a_failed_threshold_is_a_failed_junit_case() {
    let server = mock(&[]);
    let dir = TempDir::new("junit-threshold");
    let file = dir.path("w.yaml");
    std::fs::write(
        &file,
        format!(
            "target: http://{}\nload:\n  model: closed\n  stages: [ {{ duration: 100ms, target: 1 }}, {{ duration: 1s, target: 1 }} ]\nthresholds: [ \"p99 < 1us\", \"errors < 50%\" ]\nscenarios:\n  - name: home\n    steps: [ {{ get: / }} ]\n",
            server.local_addr()
        ),
    )
    .unwrap();
    let junit = dir.path("r.xml");
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1", "-q"])
        .file("--junit", &junit)
        .run();
    assert_ne!(
        ran.out.status.code(),
        Some(0),
        "a failed threshold fails the run"
    );
    let cases = python(
        "import sys
from junitparser import JUnitXml
for suite in JUnitXml.fromfile(sys.argv[1]):
    for case in suite:
        print(case.name, 'passed' if case.is_passed else 'failed')",
        &[&junit],
    );
    assert_eq!(
        cases.trim(),
        "p99 < 1us failed\nerrors < 50% passed",
        "{cases}"
    );
}
