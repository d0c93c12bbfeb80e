//! Where each request's time went, by request name: the JSON's per-name phases and the
//! report's breakdown, against nginx.

use crate::common::*;

#[test]
fn a_workload_with_two_names_gets_phases_per_name_and_a_breakdown_in_the_report() {
    let nginx = Nginx::start(
        r#"location = /home { return 200 "home\n"; }
           location = /product { return 200 "product\n"; }"#,
    );
    let dir = TempDir::new("phases-names");
    let yaml = format!(
        r#"
target: {}
load: {{ model: closed, users: 2, iterations: 20 }}
scenarios:
  - name: browse
    steps:
      - get: /home
        name: home page
      - get: /product
        name: product page
"#,
        nginx.url("")
    );
    let file = dir.path("names.yaml");
    std::fs::write(&file, yaml).unwrap();
    let json = dir.path("names.json");
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .json(&json)
        .run();
    let r = ran.code(0).json();
    assert_matches_schema("result.schema.json", &r);
    let mut connections = 0;
    for name in ["home page", "product page"] {
        let n = r["by_name"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {}", r["by_name"]));
        let completed = &n["totals"]["completed"];
        assert_eq!(completed, 20, "{name}");
        for phase in ["waiting_ms", "receiving_ms"] {
            assert_eq!(
                &n["phases"][phase]["count"], completed,
                "{name} {phase}: {n}"
            );
            for stat in ["p50", "p90", "p99", "mean"] {
                assert!(
                    n["phases"][phase][stat].is_number(),
                    "{name} {phase} {stat}"
                );
            }
        }
        assert!(
            n["phases"].get("dns_ms").is_none(),
            "{name}: no lookup of its own"
        );
        connections += n["connect_ms"]["count"].as_u64().unwrap();
    }
    assert_eq!(
        connections,
        r["generator"]["connections_opened"].as_u64().unwrap(),
        "each connection's set-up is on the name of the request that opened it"
    );
    // The page draws one bar per name, a piece per phase.
    let page = html_report(&json);
    assert!(page.contains("id=\"chart-phases\""), "no breakdown chart");
    for name in ["home page", "product page"] {
        assert!(
            page.contains(&format!(">{name}</text>")),
            "no bar for {name}"
        );
        assert!(
            page.contains(&format!("<title>{name}: waiting ")),
            "no waiting piece for {name}"
        );
    }
}

/// The whole time of each phase, in ms, over the requests that had it.
fn phase_total(s: &serde_json::Value) -> f64 {
    s["mean"].as_f64().unwrap_or(0.0) * s["count"].as_f64().unwrap_or(0.0)
}

#[test]
fn closed_model_http2_phases_add_up_to_the_latency() {
    // Users that share a connection's streams wait for the window's batch before their send:
    // that wait is `blocked`, so each request's latency is the sum of its phases (connect,
    // blocked, waiting, receiving), as it is over HTTP/1.1 and pipelining.
    let _turn = one_at_a_time();
    let nginx = Nginx::start_with("", "http2");
    let dir = TempDir::new("phases-h2");
    let ran = Herd::new(&["run", "--http2", "-c", "2", "--streams", "16", "-t", "1"])
        .args(&["-n", "4000", &nginx.url("/")])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.measured().json();
    assert_eq!(r["totals"]["ok"], 4000, "{}", r["errors"]);
    let p = &r["phases"];
    let phases = phase_total(&r["connect_ms"])
        + ["blocked_ms", "waiting_ms", "receiving_ms"]
            .iter()
            .map(|k| phase_total(&p[k]))
            .sum::<f64>();
    let latency = phase_total(&r["latency_ms"]);
    // The histograms hold 3 digits, and each phase is rounded to whole microseconds.
    assert!(
        (phases - latency).abs() <= latency * 0.02 + 4000.0 * 3e-3,
        "phases {phases:.1} ms against latency {latency:.1} ms: {p}"
    );
}
