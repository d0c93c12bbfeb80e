//! `herd report` and `herd compare` as a user and a CI job meet them: stored results shown as
//! text and HTML, files herd cannot read refused clearly, and real runs compared.

use crate::common::*;
use herd_mock::{Config, Route, Server};
use std::path::PathBuf;

#[test]
fn a_stored_run_reads_back_as_its_summary() {
    let out = run_herd(&["report", &fixture("run-closed-errors.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("herd run http://127.0.0.1:18555/flaky"),
        "{text}"
    );
    assert!(text.contains("reset 291"), "{text}");
}

#[test]
fn a_stored_run_becomes_one_html_file() {
    let dir = TempDir::new("report-html");
    let html = dir.path("report.html");
    let out = run_herd(&[
        "report",
        &fixture("run-open.json"),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        page.matches("<svg class=\"chart\"").count() >= 4,
        "four charts at least"
    );
    // --format wins over the extension.
    let out = run_herd(&["report", &fixture("run-open.json"), "--format", "html"]);
    assert!(stdout(&out).starts_with("<!DOCTYPE html>"));
}

#[test]
fn files_herd_cannot_show_are_refused_clearly() {
    let dir = TempDir::new("report-bad");
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run-open.json")).unwrap()).unwrap();
    old["herd_version"] = "0.0.3".into();
    let cases = [
        (
            "old.json",
            old.to_string(),
            "was written by herd 0.0.3, which this herd",
        ),
        (
            "k6.json",
            r#"{"metrics": {}}"#.to_owned(),
            "is not a herd result: it has no `herd_version` key",
        ),
        ("page.html", "<html></html>".to_owned(), "is not JSON"),
        (
            "compare.json",
            format!(
                r#"{{"herd_version": "{}", "kind": "compare"}}"#,
                env!("CARGO_PKG_VERSION")
            ),
            "is a herd `compare` result; expected a `run`, `sweep` or `capacity` result",
        ),
    ];
    for (name, content, want) in cases {
        let path = dir.path(name);
        std::fs::write(&path, content).unwrap();
        for args in [
            vec!["report", path.to_str().unwrap()],
            vec!["compare", path.to_str().unwrap(), &fixture("run-open.json")],
        ] {
            let out = run_herd(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(name), "{args:?} names the file: {err}");
            // compare reads runs only, so it words the kind mismatch its own way.
            let want = if args[0] == "compare" && name == "compare.json" {
                "expected a `run` result"
            } else {
                want
            };
            assert!(err.contains(want), "{args:?}: {err}");
            assert!(!err.contains("panicked"));
        }
    }
    let missing = run_herd(&["report", "/nonexistent/r.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("cannot read /nonexistent/r.json"));
    let pdf = run_herd(&["report", &fixture("run-open.json"), "--format", "pdf"]);
    assert_eq!(pdf.status.code(), Some(2));
    assert!(stderr(&pdf).contains("-o report.pdf"), "{}", stderr(&pdf));
    let bad = run_herd(&[
        "compare",
        "--threshold",
        "ten",
        &fixture("run-open.json"),
        &fixture("run-open.json"),
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not a threshold"));
}

/// Runs herd against each route of one mock server at once (100 req/s for 4 s each) and returns
/// the JSON results in the same order.
fn runs(dir: &TempDir, routes: &[(&str, &str)]) -> Vec<PathBuf> {
    let server = Server::start(Config {
        routes: routes
            .iter()
            .map(|(_, spec)| Route::parse(spec).unwrap())
            .collect(),
        ..Config::default()
    })
    .unwrap();
    let addr = server.local_addr();
    let handles: Vec<_> = routes
        .iter()
        .map(|(name, spec)| {
            let path = spec.split(' ').next().unwrap().to_owned();
            let json = dir.path(&format!("{name}.json"));
            let url = format!("http://{addr}{path}");
            let json2 = json.clone();
            let t = std::thread::spawn(move || {
                run_herd(&[
                    "run",
                    "-q",
                    "-t",
                    "1",
                    "--rate",
                    "100",
                    "-d",
                    "4s",
                    &url,
                    "--json",
                    json2.to_str().unwrap(),
                ])
            });
            (json, t)
        })
        .collect();
    let mut paths = Vec::new();
    for (json, t) in handles {
        let out = t.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        paths.push(json);
    }
    server.shutdown();
    paths
}

#[test]
fn compare_gates_on_real_runs() {
    let dir = TempDir::new("compare");
    let files = runs(
        &dir,
        &[
            ("fast", "/fast latency=fixed:1ms"),
            ("slow", "/slow latency=fixed:20ms"),
            ("ten", "/ten latency=fixed:10ms"),
            ("twenty", "/twenty latency=fixed:20ms"),
        ],
    );
    let [fast, slow, ten, twenty] = [0, 1, 2, 3].map(|i| files[i].to_str().unwrap().to_owned());

    // A run against itself: zero change, exit 0.
    let same = run_herd(&["compare", &fast, &fast]);
    let text = stdout(&same);
    assert_eq!(same.status.code(), Some(0), "{text}");
    assert!(text.contains("PASSED"), "{text}");
    assert_eq!(
        text.matches("unchanged").count(),
        11,
        "every metric: {text}"
    );

    // 1 ms -> 20 ms: exit 3, and the regressed metrics are named; the overlay is written too.
    let html = dir.path("compare.html");
    let json = dir.path("compare.json");
    let worse = run_herd(&[
        "compare",
        &fast,
        &slow,
        "-o",
        html.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&worse);
    assert_eq!(worse.status.code(), Some(3), "{text}");
    let verdict = text
        .lines()
        .find(|l| l.starts_with("REGRESSED: "))
        .unwrap_or_else(|| panic!("{text}"));
    // p50 moves the most and most steadily; p90 and p99 usually follow, but a single stalled
    // second on a busy machine can make their per-second series too noisy to call in 4 s.
    assert!(verdict.contains("latency p50 +"), "{verdict}");
    assert!(
        !verdict.contains("throughput") && !verdict.contains("error rate"),
        "{verdict}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(">REGRESSED<") && page.contains("slow.json"));
    // --json: the same verdict for a CI job to read, in the documented shape.
    let doc = read_json(&json);
    assert_matches_schema("compare.schema.json", &doc);
    assert_eq!(doc["kind"], "compare");
    assert_eq!(doc["passed"], false);
    let regressed: Vec<&str> = doc["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert!(regressed.contains(&"latency p50"), "{regressed:?}");
    assert_eq!(doc["runs"][1]["label"], "slow.json");

    // 10 ms -> 20 ms doubles the median: a 200% threshold lets it pass. (The mock's timer and a
    // busy CI machine add a millisecond or two to each route, so the figure is checked loosely;
    // the point is that the change is measured and then forgiven, not its decimals.)
    let lenient = run_herd(&["compare", "--threshold", "200%", &ten, &twenty]);
    let text = stdout(&lenient);
    assert_eq!(lenient.status.code(), Some(0), "{text}");
    let p50 = text
        .lines()
        .find(|l| l.trim_start().starts_with("latency p50"))
        .unwrap();
    let change: f64 = p50
        .split_whitespace()
        .find(|w| w.starts_with('+'))
        .unwrap()
        .trim_matches(['+', '%'])
        .parse()
        .unwrap();
    assert!(
        (40.0..160.0).contains(&change),
        "a change of about 100%: {p50}"
    );
}
