//! A workload's `faults:` on the run's timeline, end to end: nginx behind `herd proxy`, the
//! run adding a toxic through the proxy's API at its instant and removing it after its window;
//! the result, the summary and the report show the window; Ctrl-C leaves the proxy clean.

use crate::common::*;
use crate::fault_proxy::HerdProxy;
use std::time::{Duration, Instant};

/// A workload of `rate` requests a second for `duration` through `proxy`, with `faults`.
fn workload(dir: &TempDir, proxy: &HerdProxy, duration: &str, faults: &str) -> std::path::PathBuf {
    let path = dir.path("faults.yaml");
    let text = format!(
        "target: http://{}\nproxy_api: http://{}\nload: {{ model: open, rate: 20, duration: {duration} }}\nscenarios:\n  - {{ name: home, steps: [{{ get: / }}] }}\nfaults:\n{faults}",
        proxy.listen, proxy.api
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn toxics(proxy: &HerdProxy) -> Vec<serde_json::Value> {
    proxy
        .api_get("/proxies/web/toxics")
        .as_array()
        .unwrap()
        .clone()
}

/// A run of `duration` with one 200 ms latency window from `at` for `length` seconds: the
/// window is in the result where the API put it, the per-second p50 rises inside it and only
/// there, each second inside it says so (the JSON's timeline and the CSV), a recovery time is
/// stated, and the summary and the report show it.
fn latency_window(duration: u64, at: u64, length: u64) {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-timeline");
    let file = workload(
        &dir,
        &proxy,
        &format!("{duration}s"),
        &format!(
            "  - {{ at: {at}s, for: {length}s, proxy: web, latency: 200ms, thresholds: [\"p50 > 150ms\"] }}\n"
        ),
    );
    let json = dir.path("r.json");
    let csv = dir.path("r.csv");
    let ran = Herd::new(&[
        "run",
        file.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ])
    .json(&json)
    .run();
    ran.code(0);
    let r = ran.json();
    let w = &r["faults"][0];
    assert_eq!(w["proxy"], "web");
    assert_eq!(w["toxic"], "latency");
    assert_eq!(w["attributes"]["latency"], 200);
    let (start, end) = (w["start_s"].as_f64().unwrap(), w["end_s"].as_f64().unwrap());
    // The API was called at the window's instants (a second of slack for a loaded machine).
    let (at, length) = (at as f64, length as f64);
    assert!(
        (at - 0.1..at + 1.0).contains(&start)
            && (at + length - 0.1..at + length + 1.0).contains(&end),
        "{w}"
    );
    // Seconds wholly inside the window are slow; those wholly outside it, a margin second
    // away from each edge, are not: the latency is there and only there. Each second that
    // overlaps the window names it; no other does.
    let (mut inside, mut outside, mut marked) = (0, 0, Vec::new());
    for e in r["timeline"].as_array().unwrap() {
        let t = e["t"].as_f64().unwrap();
        let in_force = t < end && t + 1.0 > start;
        assert_eq!(
            e.get("faults"),
            in_force.then(|| serde_json::json!([0])).as_ref(),
            "second {t}: {e}"
        );
        if in_force {
            marked.push(t as u64);
        }
        let p50 = e["p50_ms"].as_f64().unwrap();
        if e["partial"] == true || e["requests"] == 0 {
            continue;
        }
        if t >= start && t + 1.0 <= end {
            assert!(
                p50 >= 200.0,
                "second {t} inside the window: p50 {p50} ms: {e}"
            );
            inside += 1;
        } else if t + 1.0 <= start - 1.0 || t >= end + 1.0 {
            assert!(
                p50 < 100.0,
                "second {t} outside the window: p50 {p50} ms: {e}"
            );
            outside += 1;
        }
    }
    assert!(
        inside as f64 >= length - 1.0 && outside as f64 >= duration as f64 - length - 4.0,
        "inside {inside}, outside {outside}"
    );
    // The CSV names the window on the same seconds.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().ends_with(",itl_p99_ms,fault"));
    let csv_marked: Vec<u64> = lines
        .filter(|l| l.ends_with(",fault 1: latency 200 ms on web"))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(csv_marked, marked, "{text}");
    // The window's own threshold passed, and a recovery time is stated.
    assert_eq!(w["thresholds"][0]["pass"], true, "{w}");
    let rec = &w["recovery"];
    assert!(rec["seconds"].as_f64().is_some(), "{rec}");
    assert!(
        rec["rule"].as_str().unwrap().contains("p50 within 10%"),
        "{rec}"
    );
    let text = ran.stdout();
    assert!(
        text.contains("fault 1") && text.contains("latency 200 ms on web"),
        "{text}"
    );
    assert!(
        text.contains("recovery") && text.contains("after its end"),
        "{text}"
    );
    // The report shades the window on its time charts.
    let page = html_report(&json);
    assert!(page.contains("class=\"fault-window\""), "no shaded window");
    assert!(page.contains("fault 1: latency 200 ms on web"));
    // Nothing left on the proxy.
    assert!(toxics(&proxy).is_empty());
}

/// A 3 s window of 200 ms in a 10 s run; `HERD_FAULT_BAR=full` plays the bar as
/// written, a 30 s window in a 90 s run (90 s of the suite's time, so not in CI's run).
#[test]
fn a_latency_window_raises_p50_inside_it_only_is_shaded_and_recovers() {
    let _turn = one_at_a_time();
    if std::env::var("HERD_FAULT_BAR").is_ok_and(|v| v == "full") {
        latency_window(90, 30, 30);
    } else {
        latency_window(10, 3, 3);
    }
}

#[test]
fn a_run_interrupted_inside_a_window_leaves_no_toxic_on_the_proxy() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-interrupt");
    let file = workload(
        &dir,
        &proxy,
        "60s",
        "  - { at: 1s, for: 50s, proxy: web, http: { status: 503, rate: 0.5 } }\n",
    );
    let json = dir.path("r.json");
    let mut child = Herd::new(&["run", file.to_str().unwrap()])
        .json(&json)
        .spawn();
    // Wait (bounded) for the toxic to be in force, then Ctrl-C.
    let deadline = Instant::now() + Duration::from_secs(30);
    while toxics(&proxy).is_empty() {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("the fault's toxic never appeared on the proxy");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(toxics(&proxy)[0]["name"], "herd_fault_1");
    kill(child.id(), SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        toxics(&proxy).is_empty(),
        "a toxic was left: {:?}",
        toxics(&proxy)
    );
    let r = read_json(&json);
    assert_eq!(r["interrupted"], true);
    assert_eq!(r["faults"][0]["toxic"], "http");
    assert!(r["faults"][0]["end_s"].as_f64().unwrap() < 50.0);
}

#[test]
fn an_unknown_proxy_or_a_silent_api_is_refused_before_any_load() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-refused");
    let file = workload(
        &dir,
        &proxy,
        "5s",
        "  - { at: 1s, for: 1s, proxy: wbe, latency: 10ms }\n",
    );
    let ran = Herd::new(&["run", file.to_str().unwrap()]).run();
    ran.code(2);
    let err = ran.stderr();
    assert!(err.contains("faults.yaml:7: no proxy `wbe`"), "{err}");
    assert!(err.contains("web"), "{err}");
    // The API elsewhere: a port nobody listens on.
    let silent = format!("http://127.0.0.1:{}", free_port());
    let ran = Herd::new(&["run", file.to_str().unwrap()])
        .env("TOXIPROXY_URL", &silent)
        .run();
    ran.code(2);
    let err = ran.stderr();
    assert!(
        err.contains(&format!("the proxy API at {silent} does not answer")),
        "{err}"
    );
    assert!(toxics(&proxy).is_empty());
}

#[test]
fn the_dashboard_shades_a_window_while_it_is_in_force() {
    use crate::dashboard::{ask, finish, loopback, start, wait_for};
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-dashboard");
    let file = workload(
        &dir,
        &proxy,
        "60s",
        "  - { at: 1s, for: 50s, proxy: web, latency: 20ms }\n",
    );
    let h = Herd::new(&["run", file.to_str().unwrap(), "--dashboard=127.0.0.1:0"]);
    let (child, url, reader) = start(h);
    let addr = loopback(&url);
    wait_for("the window shaded on the live page", || {
        let page = ask(addr, "GET", "/", "");
        page.contains("class=\"fault-window\"") && page.contains("fault 1: latency 20 ms on web")
    });
    assert_eq!(toxics(&proxy).len(), 1);
    kill(child.id(), SIGINT);
    let (code, _, err) = finish(child, reader);
    assert_eq!(code, 130, "{err}");
    assert!(toxics(&proxy).is_empty());
}

/// A workload without `proxy_api:` finds the API at `$TOXIPROXY_URL`, as toxiproxy's clients
/// do; a window threshold that fails fails the run (exit 3), and says so for its window.
#[test]
fn toxiproxy_url_finds_the_api_and_a_failed_window_threshold_fails_the_run() {
    let nginx = Nginx::start("");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-env");
    let file = dir.path("faults.yaml");
    std::fs::write(
        &file,
        format!(
            "target: http://{}\nload: {{ model: open, rate: 20, duration: 6s }}\nscenarios:\n  - {{ name: home, steps: [{{ get: / }}] }}\nfaults:\n  - {{ at: 2s, for: 2s, proxy: web, latency: 200ms, thresholds: [\"p50 < 50ms\"] }}\n",
            proxy.listen
        ),
    )
    .unwrap();
    let ran = Herd::new(&["run", file.to_str().unwrap()])
        .env("TOXIPROXY_URL", &format!("http://{}", proxy.api))
        .json(&dir.path("r.json"))
        .run();
    ran.code(3);
    let r = ran.json();
    let w = &r["faults"][0];
    assert_eq!(w["toxic"], "latency", "{w}");
    assert_eq!(w["thresholds"][0]["pass"], false, "{w}");
    assert!(
        r["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["faults"] == serde_json::json!([0])),
        "the window's seconds are marked"
    );
    assert!(toxics(&proxy).is_empty());
}
