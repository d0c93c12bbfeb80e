use crate::fixtures::{self, CLOSED_ERRORS, OPEN, SLOW};
use herd_compare::compare;
use herd_report::html;
use herd_result::{parse_json, GeneratorVerdict};
use serde_json::json;

/// The `d` attribute of every series path in a chart, by the chart's id.
pub fn series_paths<'a>(page: &'a str, chart: &str) -> Vec<&'a str> {
    let start = page
        .find(&format!("id=\"{chart}\""))
        .unwrap_or_else(|| panic!("no chart {chart}"));
    let end = start + page[start..].find("</figure>").unwrap();
    page[start..end]
        .split("<path class=\"series")
        .skip(1)
        .map(|p| {
            let d = p.find(" d=\"").unwrap() + 4;
            &p[d..d + p[d..].find('"').unwrap()]
        })
        .collect()
}

pub fn points(d: &str) -> usize {
    d.matches(['M', 'L']).count()
}

#[test]
fn a_run_report_has_its_verdict_charts_and_tables() {
    let r = fixtures::run(OPEN);
    let page = html::render_run(&r);
    // Verdict first.
    let verdict = page.find("id=\"verdict\"").unwrap();
    assert!(verdict < page.find("id=\"figures\"").unwrap());
    assert!(
        page.contains(">COMPLETED<")
            && page.contains("generator ok")
            && page.contains("ran to the end")
    );
    // One point per second of the timeline, per percentile.
    let latency = series_paths(&page, "chart-latency");
    assert_eq!(latency.len(), 4, "p50, p90, p99, max");
    assert!(
        latency.iter().all(|d| points(d) == r.timeline.len()),
        "{latency:?}"
    );
    let throughput = series_paths(&page, "chart-throughput");
    assert_eq!(points(throughput[0]), r.timeline.len());
    assert!(
        page.contains("target rate"),
        "the open model's rate is drawn"
    );
    // The distribution comes from the histograms: many points, up to the max.
    let dist = series_paths(&page, "chart-distribution");
    assert_eq!(dist.len(), 2, "latency and service time");
    assert!(points(dist[0]) > 50, "{}", points(dist[0]));
    assert!(page.contains("percentile (log scale"));
    for unit in [
        "latency (ms)",
        "requests per second (req/s)",
        "time since start (s)",
    ] {
        assert!(page.contains(unit), "axis {unit}");
    }
    // Numbers at three significant digits with units.
    assert!(page.contains(">3.42 ms<"), "p50");
    assert!(page.contains("1,500"));
    // Absent sections stay absent.
    for id in ["by_name", "thresholds", "checks", "server"] {
        assert!(!page.contains(&format!("<section id=\"{id}\"")), "{id}");
    }
}

#[test]
fn errors_show_by_class_over_time_and_in_the_tables() {
    let mut r = fixtures::run(CLOSED_ERRORS);
    // written before time_to_error existed: it reads as empty
    assert_eq!(r.time_to_error_ms.count, 0);
    r.time_to_error_ms.count = r.totals.errors;
    r.time_to_error_ms.p50 = 1.25;
    let page = html::render_run(&r);
    let row = page
        .split("time to error (no response)")
        .nth(1)
        .expect("a time-to-error row");
    assert!(
        row[..row.find("</tr>").unwrap()].contains(">1.25 ms<"),
        "{row:.300}"
    );
    assert!(page.contains("error: reset"), "a stack for the error class");
    assert!(
        page.contains("Connection reset by peer"),
        "the sample message"
    );
    assert!(page.contains("of which not ok"));
    let bars = page.split("id=\"chart-statuses\"").nth(1).unwrap();
    let bars = &bars[..bars.find("</figure>").unwrap()];
    assert_eq!(
        bars.matches("<rect x=").count(),
        2 * r.timeline.len(),
        "2xx and reset each second"
    );
}

#[test]
fn hover_data_holds_each_seconds_values() {
    let page = html::render_run(&fixtures::run(OPEN));
    let chart = page.split("id=\"chart-latency\"").nth(1).unwrap();
    let data = chart.split("data-hover=\"").nth(1).unwrap();
    let data = data[..data.find('"').unwrap()].replace("&quot;", "\"");
    let v: serde_json::Value = serde_json::from_str(&data).unwrap();
    assert_eq!(v["t"][0], "0–1 s");
    assert_eq!(v["s"][0]["n"], "p50");
    assert!(v["s"][0]["v"][0].as_str().unwrap().ends_with(" ms"));
}

#[test]
fn optional_sections_render_when_present() {
    let mut doc = fixtures::value(OPEN);
    let mut home = fixtures::name_entry(&doc, "home", 1000, 990, 2.9, 4.1, 5.0);
    home["response_bytes"]["mean"] = 2000.0.into();
    doc["by_name"] = json!([
        home,
        fixtures::name_entry(&doc, "search <q>", 500, 500, 12.0, 20.0, 31.0)
    ]);
    doc["thresholds"] = json!([
        {"expression": "p99 < 20ms", "value": 5.43, "unit": "ms", "pass": true},
        {"expression": "errors < 0.1%", "value": 1.0, "unit": "%", "pass": false},
    ]);
    doc["checks"] = json!([{"name": "status is 200", "passes": 1490, "fails": 10}]);
    let sample = |t: f64, cpu: f64, rss: u64| {
        json!({"t": t, "processes": 1, "cpu_percent": cpu, "rss_bytes": rss, "threads": 1, "fds": 12,
               "ctx_switches_voluntary": 100, "ctx_switches_involuntary": 3})
    };
    doc["server"] = json!({"processes": [{"pid": 42, "pids": [42], "samples": [
        sample(1.0, 20.0, 50_000_000), sample(2.0, 35.0, 52_000_000), sample(3.0, 30.0, 51_000_000),
    ], "notes": []}], "prometheus": []});
    let r = parse_json(&doc.to_string(), "workload.json").unwrap();
    let page = html::render_run(&r);
    assert!(
        page.contains(">FAILED<"),
        "a failed threshold fails the verdict"
    );
    assert!(page.contains("1 of 2 thresholds failed"));
    assert!(page.contains("threshold failed: errors &lt; 0.1% (measured 1.00%)"));
    for id in ["by_name", "thresholds", "checks", "server"] {
        assert!(page.contains(&format!("<section id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("search &lt;q&gt;"), "names are escaped");
    assert!(page.contains("200: 990, 500: 10"), "codes per name");
    assert!(page.contains(">2.00 KB<"), "page weight");
    assert!(page.contains("Latency by name"));
    assert_eq!(series_paths(&page, "chart-server-cpu").len(), 1);
    assert_eq!(series_paths(&page, "chart-server-memory").len(), 1);
    assert!(page.contains("memory (MB)"));
}

#[test]
fn a_limited_or_interrupted_run_says_so_first() {
    let mut r = fixtures::run(OPEN);
    r.interrupted = true;
    let page = html::render_run(&r);
    assert!(page.contains(">INTERRUPTED<") && page.contains("interrupted after 5.00 s"));
    r.generator.verdict = GeneratorVerdict::GeneratorLimited;
    r.generator.reasons = vec!["send lag p99 120 ms".into()];
    let page = html::render_run(&r);
    assert!(page.contains("NOT VALID: GENERATOR-LIMITED"));
    assert!(page.contains("<li>send lag p99 120 ms</li>"));
}

#[test]
fn user_text_is_escaped() {
    let mut r = fixtures::run(OPEN);
    r.target = "http://x/<script>alert(1)</script>".into();
    r.error_samples
        .insert("other".into(), "<img src=x onerror=alert(1)>".into());
    r.errors.insert("other".into(), 1);
    let page = html::render_run(&r);
    assert!(!page.contains("<script>alert"));
    assert!(!page.contains("<img src=x"));
    assert_eq!(page.matches("<script>").count(), 1, "only the hover script");
}

#[test]
fn a_page_needs_nothing_from_the_network() {
    let runs = [fixtures::run(OPEN), fixtures::run(SLOW)];
    let c = compare(&[("a".into(), &runs[0]), ("b".into(), &runs[1])], 0.1);
    for page in [
        html::render_run(&runs[0]),
        html::render_compare(&c, &[&runs[0], &runs[1]]),
    ] {
        for external in ["src=", "href=", "@import", "url(", "<link"] {
            assert!(!page.contains(external), "{external}");
        }
        assert!(page.contains("@media print"));
    }
}

#[test]
fn a_comparison_overlays_the_runs() {
    let (a, b) = (fixtures::run(OPEN), fixtures::run(SLOW));
    let c = compare(&[("fast.json".into(), &a), ("slow.json".into(), &b)], 0.1);
    let page = html::render_compare(&c, &[&a, &b]);
    assert!(page.contains(">REGRESSED<"));
    assert!(page.contains("slow.json: latency p99 +"));
    assert_eq!(series_paths(&page, "chart-throughput").len(), 2);
    assert_eq!(
        series_paths(&page, "chart-latency").len(),
        4,
        "p50 and p99 per run"
    );
    assert_eq!(series_paths(&page, "chart-distribution").len(), 2);
    assert!(page.contains("class=\"regressed\""));
}

#[test]
fn a_replay_report_puts_production_beside_now() {
    let mut r = fixtures::run(OPEN);
    r.extra.insert(
        "replay".to_owned(),
        json!({"production_vs_now": [{
            "name": "GET /items/{id}",
            "production_ms": {"count": 40, "p50": 5.0, "p95": 8.0, "max": 12.0},
            "now_ms": {"count": 40, "p50": 0.2, "p95": 16.0, "max": 30.0},
            "p95_change": 1.0
        }]}),
    );
    let page = html::render_run(&r);
    let at = page
        .find("id=\"replay\"")
        .expect("a production against now section");
    let section = &page[at..];
    assert!(section.contains("GET /items/{id}"), "{section}");
    assert!(
        section.contains("8.00 ms") && section.contains("16.0 ms"),
        "{section}"
    );
    assert!(section.contains("class=\"regressed\">+100%"), "{section}");
}

#[test]
fn herd_report_draws_the_series_of_the_run_figure_herd_plot_draws() {
    let r = parse_json(OPEN, "run-open.json").unwrap();
    let fig = herd_report::figure::run_figure(&r);
    let page = html::render_run(&r);
    for (panel, id) in
        fig.panels
            .iter()
            .zip(["chart-throughput", "chart-latency", "chart-distribution"])
    {
        let start = page.find(&format!("id=\"{id}\"")).unwrap();
        let data = page[start..].split("data-hover=\"").nth(1).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&data[..data.find('"').unwrap()].replace("&quot;", "\"")).unwrap();
        let drawn: Vec<(&str, &str)> = v["s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["n"].as_str().unwrap(), s["c"].as_str().unwrap()))
            .collect();
        let plotted: Vec<(&str, &str)> = panel
            .series
            .iter()
            .map(|s| (s.label.as_str(), s.color))
            .collect();
        assert_eq!(drawn, plotted, "{id}");
        assert!(!plotted.is_empty(), "{id}");
    }
}

#[test]
fn a_run_page_says_its_protocol_streams_tls_handshakes_and_phases() {
    let mut r = fixtures::run(OPEN);
    r.config.streams = Some(1000);
    r.config.proxy = Some("http://127.0.0.1:3128".into());
    r.generator.streams_allowed = Some(128);
    r.generator.naps = Some(herd_result::Naps {
        windows: 50,
        napping: 48,
        longest_us: 50,
    });
    r.generator.protocols = vec![herd_result::ProtocolUse {
        protocol: "h3".into(),
        connections: 4,
        requests: 300,
        handshakes: Some(herd_result::Handshakes {
            full: herd_result::HandshakeTimes {
                count: 1,
                mean_ms: 2.5,
                max_ms: 2.5,
                total_ms: 2.5,
            },
            resumed: herd_result::HandshakeTimes {
                count: 3,
                mean_ms: 1.0,
                max_ms: 1.2,
                total_ms: 3.0,
            },
            early_data_accepted: 3,
            early_data_rejected: 0,
        }),
    }];
    r.generator.tls = vec![herd_result::TlsUse {
        version: "TLSv1.3".into(),
        cipher: "TLS13_AES_128_GCM_SHA256".into(),
        alpn: Some("h3".into()),
        connections: 4,
    }];
    r.phases = Some(herd_result::Phases {
        waiting_ms: herd_result::Summary {
            count: 300,
            p50: 1.0,
            p99: 2.0,
            max: 3.0,
            ..Default::default()
        },
        ..Default::default()
    });
    let page = html::render_run(&r);
    for said in [
        "HTTP/3 over QUIC (h3)",
        "x 1,000 streams",
        "the server allows 128 per connection",
        "TLS13_AES_128_GCM_SHA256",
        "TLSv1.3",
        "3 taken, 0 refused",
        "3 (1.00 ms mean)",
        "http://127.0.0.1:3128",
        "Phases of a request",
        "waiting (send to first byte)",
        "in 48 of 50 tenths of a second, up to 50 µs each",
    ] {
        assert!(page.contains(said), "the page should say {said:?}");
    }
    let mut h1 = fixtures::run(OPEN);
    h1.config.pipeline = Some(16);
    let page = html::render_run(&h1);
    assert!(page.contains("pipelining 16") && page.contains("pipeline depth"));
}

#[test]
fn the_generator_charts_end_at_the_throughputs_last_second() {
    // A 5 s run's five whole seconds, and the generator's sample of a sixth second cut short
    // by the drain: its CPU would read as a dip after the throughput chart has ended.
    let mut r = fixtures::run(OPEN);
    r.generator.timeline = (0..6)
        .map(|t| herd_result::GeneratorSample {
            t,
            cpu_percent: vec![if t < 5 { 50.0 } else { 1.0 }],
            ..Default::default()
        })
        .collect();
    let page = html::render_run(&r);
    let throughput = series_paths(&page, "chart-throughput")[0];
    for id in ["chart-generator-cpu", "chart-generator-lag"] {
        let drawn = series_paths(&page, id);
        assert!(!drawn.is_empty(), "{id}");
        for d in drawn {
            assert_eq!(points(d), points(throughput), "{id}: {d}");
        }
    }
}

#[test]
fn a_websocket_runs_page_has_its_pings_closes_refusals_and_backlog() {
    let mut r = fixtures::run(CLOSED_ERRORS);
    assert!(html::render_run(&r).find("id=\"websocket\"").is_none());
    let mut ping = herd_result::Summary::default();
    (ping.count, ping.p50, ping.p99, ping.max) = (40, 1.5, 9.0, 12.0);
    r.websocket = Some(herd_result::Sockets {
        ping_rtt_ms: ping,
        closes: vec![herd_result::Close {
            code: 1011,
            name: "internal_error".into(),
            count: 3,
        }],
        handshakes_failed: [("403".to_owned(), 2)].into(),
        ping_rtt_histogram: String::new(),
        backlog: Some(herd_result::SendBacklog {
            max_messages: 57,
            max_bytes: 0,
            end_messages: 4,
            end_bytes: 120,
        }),
    });
    for (i, e) in r.timeline.iter_mut().enumerate() {
        e.ws = Some(Box::new(herd_result::SocketsSecond {
            pongs: 10,
            ping_p99_ms: 9.0,
            closes: [("1011".to_owned(), 1)].into(),
            backlog_messages: Some(i as u64 * 10),
            backlog_bytes: Some(0),
            ..Default::default()
        }));
    }
    let page = html::render_run(&r);
    let section = page.split("id=\"websocket\"").nth(1).expect("a section");
    for said in [
        "<dt>pongs</dt><dd>40</dd>",
        "<td>ping round trips (from the intended send)</td><td>40</td><td>1.50 ms</td>",
        "<td>1011</td><td>internal_error</td><td>3</td>",
        "<td>403</td><td>2</td>",
        "<dt>send backlog, most</dt><dd>57 messages (0 B)</dd>",
        "<dt>send backlog, at the end</dt><dd>4 messages (120 B)</dd>",
        "id=\"chart-ping\"",
        "id=\"chart-backlog\"",
        "id=\"chart-closes\"",
    ] {
        assert!(section.contains(said), "{said:?} not in the section");
    }
}
