//! A real node_exporter watched during a run: its series kept on the run's time axis.

use super::{HerdServe, NodeExporter};
use crate::common::*;
use serde_json::Value;

#[test]
fn watch_prometheus_keeps_series_on_the_run_time_axis() {
    let ne = NodeExporter::start();
    let server = HerdServe::start();
    let dir = TempDir::new("watch-prom");
    let json = dir.path("r.json");
    let url = format!("http://{}/", server.addr);
    let out = run_herd(&[
        "run",
        "-q",
        "--rate",
        "200",
        "-t",
        "1",
        "-d",
        "3s",
        "--watch-prometheus",
        &ne.url,
        "--watch-metric",
        "process_cpu_seconds_total",
        "--watch-metric",
        "node_load1",
        "--watch-metric",
        "node_cpu_seconds_total{mode=\"idle\"}",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    assert!(
        matches!(out.status.code(), Some(0) | Some(4)),
        "{}",
        stderr(&out)
    );
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let e = &r["server"]["prometheus"][0];
    assert_eq!(e["url"], ne.url.as_str());
    assert_eq!(e["gaps"], Value::Array(vec![]), "{e}");
    let series = e["series"].as_array().unwrap();
    let find = |name: &str| {
        series
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {e}"))
    };
    let cpu = find("process_cpu_seconds_total");
    assert_eq!(
        (&cpu["kind"], &cpu["rate"]),
        (&"counter".into(), &true.into())
    );
    let load = find("node_load1");
    assert_eq!(
        (&load["kind"], &load["rate"]),
        (&"gauge".into(), &false.into())
    );
    // The first scrape at the start, then one per second: counters have one rate fewer.
    let n_load = load["samples"].as_array().unwrap().len();
    assert!(n_load >= 3, "{load}");
    assert_eq!(cpu["samples"].as_array().unwrap().len(), n_load - 1);
    for s in load["samples"].as_array().unwrap() {
        let t = s[0].as_f64().unwrap();
        assert!((-0.5..4.5).contains(&t), "t = {t}");
        assert!(s[1].as_f64().unwrap() >= 0.0);
    }
    let idle = series
        .iter()
        .filter(|s| s["name"] == "node_cpu_seconds_total")
        .count();
    assert_eq!(idle, std::thread::available_parallelism().unwrap().get());
    let text = stdout(&out);
    assert!(text.contains("prometheus http://127.0.0.1:"), "{text}");
    assert!(
        text.contains("node_load1") && text.contains("rate/s"),
        "{text}"
    );
}
