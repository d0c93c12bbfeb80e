//! What the dashboard shows beside the run's own numbers, in Chromium while the run goes on: the
//! watched server's CPU and memory (from the per-second records, which `--json` writes as it
//! goes), a live table per request name, and a series' levels growing step by step.

use crate::common::{mock, one_at_a_time, shop_workload, Herd, TempDir};
use crate::dashboard::{ask, finish, follow, loopback, start, wait_for};
use crate::quiet::browser::{browse_url, console};

/// The lines of a `--json` stream written so far that carry the watched server's readings.
fn lines_with_server(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l.get("server").is_some())
        .collect()
}

#[test]
fn the_page_shows_the_watched_server_and_each_request_name_while_the_run_goes_on() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("dashboard-live");
    let file = shop_workload(
        &dir,
        server.local_addr(),
        "model: open, rate: 40, max_connections: 4, duration: 60s",
    );
    let json = dir.path("r.json");
    // The test process serves the mock: the server watched is this process.
    let me = std::process::id().to_string();
    let metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let h = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .args(&["--watch-pid", &me])
        .args(&["--metrics-listen", &metrics.to_string()])
        .args(&["--dashboard=127.0.0.1:0", "--dashboard-control"])
        .json(&json);
    let (child, url, reader) = start(h);
    let addr = loopback(&url);

    // `--json` as it goes: each second's line carries the server's readings of that second.
    wait_for("three lines with the server's readings", || {
        lines_with_server(&json).len() >= 3
    });
    let lines = lines_with_server(&json);
    for l in &lines {
        let p = &l["server"]["processes"][0];
        assert_eq!(
            p["pid"].as_u64(),
            Some(u64::from(std::process::id())),
            "{l}"
        );
        let s = &p["samples"][0];
        assert!(s["rss_bytes"].as_u64().unwrap() > 0, "{l}");
        assert!(s["cpu_percent"].as_f64().is_some(), "{l}");
    }

    // The metrics endpoint has the server too, as gauges.
    let scraped = ask(metrics, "GET", "/metrics", "");
    assert!(
        scraped.contains("herd_server_cpu_percent{run_id=")
            && scraped.contains(&format!("process=\"{me}\"}}")),
        "{scraped}"
    );
    assert!(
        scraped.contains("herd_server_resident_memory_bytes{"),
        "{scraped}"
    );

    // Opened hovering the server's CPU chart near its right end: the value at that second.
    let hovered = format!("{url}#hover=chart-server-cpu:0.9");
    let out = browse_url(&dir, &hovered, &["--dump-dom"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(dom.contains("data-state=\"running\""), "{dom}");
    let chart = dom.split("id=\"chart-server-cpu\"").nth(1).unwrap();
    let tip = chart.split("<div class=\"tip\"").nth(1).unwrap();
    let tip = &tip[..tip.find("</div></div>").unwrap_or(tip.len())];
    assert!(
        tip.contains("class=\"head\"") && tip.contains("class=\"row\"") && tip.contains('%'),
        "a tooltip with the second's CPU: {tip}"
    );
    assert!(dom.contains("<dt>server CPU</dt>"), "{dom}");
    assert!(dom.contains("<dt>server memory</dt><dd>"), "{dom}");
    assert!(dom.contains("id=\"chart-server-cpu\""), "{dom}");
    assert!(dom.contains("id=\"chart-server-memory\""), "{dom}");
    // Both request names, live, with the last second's rate.
    assert!(dom.contains("<th>req/s now</th>"), "{dom}");
    for name in ["home", "item"] {
        assert!(
            dom.contains(&format!("<tr data-name=\"{name}\">")),
            "{name}: {dom}"
        );
    }

    let stop = ask(addr, "POST", "/stop", "X-Herd-Control: stop\r\n");
    assert!(stop.starts_with("HTTP/1.1 202"), "{stop}");
    // herd waits for one scrape of the final counts before it exits.
    wait_for("the final counts scraped", || {
        let m = ask(metrics, "GET", "/metrics", "");
        m.lines()
            .any(|l| l.starts_with("herd_run_finished{") && l.ends_with(" 1"))
    });
    let (code, summary, said) = finish(child, reader);
    assert_eq!(code, 130, "{summary}\n{said}");
    let result = crate::common::read_json(&json);
    let samples = result["server"]["processes"][0]["samples"]
        .as_array()
        .unwrap();
    assert!(samples.len() >= lines.len(), "{result}");
}

#[test]
fn a_sweeps_page_grows_its_table_level_by_level_and_says_finished_with_the_report() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let dir = TempDir::new("dashboard-sweep");
    let (json, rec) = (dir.path("sweep.json"), dir.path("rec.ndjson"));
    let target = format!("http://{}/", server.local_addr());
    // Steps long enough for Chromium to join during the first one, whatever the machine's load.
    let h = Herd::new(&["sweep", &target, "--rates", "20,40", "-t", "1"])
        .args(&["--step-duration", "5s", "--cooldown", "0s", "--no-stop"])
        .args(&["--dashboard=127.0.0.1:0"])
        .file("--record", &rec)
        .json(&json);
    let (child, url, reader) = start(h);
    let addr = loopback(&url);
    // The step going on is live on the page, above the table of levels done.
    wait_for("the first step live", || {
        let page = ask(addr, "GET", "/", "");
        page.contains("<section id=\"step\"><h2>Now: 20 req/s</h2>")
            && page.contains("data-state=\"running\" data-levels=\"0\"")
    });
    let watcher = follow(&dir, &url);

    let out = watcher.join().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(console(&log), Vec::<&str>::new(), "console output");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains(
            "id=\"series-status\" class=\"finished\" data-state=\"finished\" data-levels=\"2\""
        ),
        "{dom}"
    );
    assert!(dom.contains("Finished: 2 level(s)."), "{dom}");
    assert!(dom.contains("data-ended=\"true\""), "{dom}");
    let rows: Vec<&str> = dom.split("<tr class=\"level\">").skip(1).collect();
    assert_eq!(rows.len(), 2, "{dom}");
    assert!(rows[0].starts_with("<td>20 req/s</td>"), "{}", rows[0]);
    assert!(rows[1].starts_with("<td>40 req/s</td>"), "{}", rows[1]);
    assert!(rows.iter().all(|r| r.contains("replies/s")), "{dom}");
    assert!(
        dom.contains("id=\"report-link\" download=\"herd-report.html\" href=\"blob:"),
        "{dom}"
    );
    let (code, table, said) = finish(child, reader);
    assert_eq!(code, 0, "{table}\n{said}");
    let result = crate::common::read_json(&json);
    assert_eq!(result["steps"].as_array().unwrap().len(), 2, "{result}");

    // The recording makes the same page afterwards: finished, both levels.
    let page = dir.path("page.html");
    let out = crate::common::run_herd(&[
        "report",
        rec.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("data-state=\"finished\" data-levels=\"2\""),
        "{html}"
    );
    assert_eq!(html.matches("<tr class=\"level\">").count(), 2, "{html}");
}
