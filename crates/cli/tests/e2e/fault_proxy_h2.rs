//! `herd proxy`'s `http2` toxic end to end: toxiproxy's CLI adds it, herd (and h2load) speak
//! h2c through the proxy to nginx, and what each client counts is what the proxy says it did.

use std::process::Command;

use crate::common::*;
use crate::fault_proxy::HerdProxy;

/// `herd run --http2 -n N` through the proxy; the JSON result, every request accounted.
fn run_h2(proxy: &HerdProxy, n: u64, dir: &TempDir) -> serde_json::Value {
    let r = Herd::new(&[
        "run",
        "--http2",
        "-c",
        "2",
        "--streams",
        "10",
        "-t",
        "1",
        "-n",
        &n.to_string(),
        &format!("http://{}/", proxy.listen),
    ])
    .json(&dir.path("r.json"))
    .run()
    .json();
    let t = &r["totals"];
    let k = |key: &str| t[key].as_u64().unwrap();
    assert_eq!(k("scheduled"), n, "{t}");
    assert_eq!(
        k("completed") + k("errors") + k("dropped"),
        n,
        "none lost: {t}"
    );
    r
}

fn add_toxic(proxy: &HerdProxy, attrs: &[&str]) {
    let mut args = vec!["toxic", "add", "-t", "http2"];
    for a in attrs {
        args.extend_from_slice(&["-a", a]);
    }
    args.push("web");
    proxy.cli(&args);
}

#[test]
fn http2_stream_resets_at_a_rate_are_h2_reset_errors_herd_counts_as_the_proxy_does() {
    let nginx = Nginx::start_with("", "http2");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-h2");
    add_toxic(
        &proxy,
        &["action=rst_stream", "rate=0.2", "path=/*", "method=GET"],
    );
    let toxics = proxy.api_get("/proxies/web/toxics");
    assert_eq!(toxics[0]["type"], "http2", "{toxics}");
    assert_eq!(
        toxics[0]["attributes"]["error_code"], 2,
        "INTERNAL_ERROR by default"
    );

    let r = run_h2(&proxy, 500, &dir);
    let resets = proxy.metric("herd_proxy_h2_stream_resets_total{proxy=\"web\"}");
    assert!((50..=150).contains(&resets), "about 20% of 500: {resets}");
    assert_eq!(
        r["errors"]["h2_reset"].as_u64().unwrap_or(0),
        resets,
        "{}",
        r["errors"]
    );
    assert_eq!(
        r["totals"]["errors"].as_u64().unwrap(),
        resets,
        "{}",
        r["errors"]
    );
    assert_eq!(r["totals"]["ok"].as_u64().unwrap(), 500 - resets);
    assert_eq!(r["generator"]["protocols"][0]["protocol"], "h2c");
    // A reset is the stream's alone: no connection broke over it (a frame of a stream after
    // its reset would be a connection error to nghttp2).
    assert_eq!(
        r["generator"]["connections_opened"], 2,
        "{}",
        r["generator"]
    );
}

#[test]
fn h2load_through_stream_resets_counts_the_failures_the_proxy_made() {
    let nginx = Nginx::start_with("", "http2");
    let proxy = HerdProxy::start(nginx.addr, "web");
    add_toxic(&proxy, &["rate=0.25", "error_code=REFUSED_STREAM"]);
    let out = Command::new("h2load")
        .args(["-n", "400", "-c", "2", "-m", "10"])
        .arg(format!("http://{}/", proxy.listen))
        .output()
        .expect("h2load is not installed: run scripts/check (it installs nghttp2-client)");
    let text = stdout(&out);
    let resets = proxy.metric("herd_proxy_h2_stream_resets_total{proxy=\"web\"}");
    // "requests: 400 total, 400 started, 400 done, 300 succeeded, 100 failed, 100 errored, ..."
    let line = text
        .lines()
        .find(|l| l.starts_with("requests:"))
        .unwrap_or_else(|| panic!("no requests line from h2load:\n{text}{}", stderr(&out)));
    let count = |what: &str| -> u64 {
        line.split(", ")
            .find_map(|p| p.strip_suffix(what))
            .and_then(|n| n.trim_start_matches("requests: ").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {what} in {line}"))
    };
    assert!(resets > 0, "{line}");
    assert_eq!(count(" succeeded"), 400 - resets, "{line}");
    assert_eq!(count(" failed"), resets, "{line}");
}

#[test]
fn an_http2_goaway_after_n_streams_makes_herd_reconnect_and_lose_nothing() {
    let nginx = Nginx::start_with("", "http2");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-h2");
    add_toxic(&proxy, &["action=goaway", "after=50", "first=1"]);
    let r = run_h2(&proxy, 1000, &dir);
    let goaways = proxy.metric("herd_proxy_h2_goaways_total{proxy=\"web\"}");
    assert_eq!(r["totals"]["ok"], 1000, "{}", r["errors"]);
    assert_eq!(r["totals"]["errors"], 0, "{}", r["errors"]);
    // Each connection carries 50 streams, then GOAWAY: about 1000 / 50 of them.
    assert!((18..=21).contains(&goaways), "{goaways}");
    let opened = r["generator"]["connections_opened"].as_u64().unwrap();
    assert!(
        opened > goaways,
        "a new connection after each GOAWAY: {opened} opened, {goaways}"
    );
}

#[test]
fn an_http2_goaway_at_a_rate_loses_no_request() {
    let nginx = Nginx::start_with("", "http2");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-h2");
    add_toxic(&proxy, &["action=goaway", "rate=0.05"]);
    let r = run_h2(&proxy, 600, &dir);
    let goaways = proxy.metric("herd_proxy_h2_goaways_total{proxy=\"web\"}");
    assert!(goaways > 5, "{goaways}");
    assert_eq!(r["totals"]["ok"], 600, "{}", r["errors"]);
}

/// No connection escapes: an `http2` toxic added while herd's h2c connections are open (and
/// their HPACK tables long in use) resets streams on those very connections.
#[test]
fn an_http2_toxic_added_mid_run_reaches_the_connections_already_open() {
    let nginx = Nginx::start_with("", "http2");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-h2");
    let json = dir.path("r.json");
    let child = Herd::new(&[
        "run",
        "--http2",
        "-c",
        "2",
        "--streams",
        "1",
        "-d",
        "3s",
        "-t",
        "1",
        &format!("http://{}/", proxy.listen),
    ])
    .json(&json)
    .spawn();
    // Wait (bounded) until both users' connections are open and carried requests.
    let started = std::time::Instant::now();
    let up = "toxiproxy_proxy_received_bytes_total{direction=\"upstream\"";
    while proxy.metric("herd_proxy_connections_open{proxy=\"web\"}") < 2
        || proxy.metric(up) < 20_000
    {
        assert!(
            started.elapsed().as_secs() < 10,
            "no traffic through the proxy"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let open = proxy.metric("herd_proxy_connections_total{proxy=\"web\"}");
    add_toxic(&proxy, &["rate=0.3"]);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let resets = proxy.metric("herd_proxy_h2_stream_resets_total{proxy=\"web\"}");
    assert!(resets > 20, "{resets}");
    assert_eq!(
        proxy.metric("herd_proxy_connections_total{proxy=\"web\"}"),
        open,
        "the resets were on the connections open before the toxic: {} {}",
        r["errors"],
        r["generator"]
    );
    assert_eq!(
        r["errors"]["h2_reset"].as_u64().unwrap_or(0),
        resets,
        "{}",
        r["errors"]
    );
}

/// A workload's `faults:` window with an `http2` toxic: herd adds it to herd proxy through
/// the API at its instant, the proxy takes its attributes as the file wrote them, and the
/// streams it reset inside the window are herd's errors of that class, there only.
#[test]
fn a_workload_window_of_http2_resets_counts_as_the_proxy_does() {
    let nginx = Nginx::start_with("", "http2");
    let proxy = HerdProxy::start(nginx.addr, "web");
    let dir = TempDir::new("fault-h2-window");
    let file = dir.path("h2.yaml");
    std::fs::write(
        &file,
        format!(
            "target: http://{}\nproxy_api: http://{}\nprotocol: h2\nload: {{ model: open, rate: 100, duration: 5s }}\nscenarios:\n  - {{ name: home, steps: [{{ get: / }}] }}\nfaults:\n  - {{ at: 1s, for: 2s, proxy: web, http2: {{ rate: 50%, error_code: refused_stream, path: /* }} }}\n",
            proxy.listen, proxy.api
        ),
    )
    .unwrap();
    let r = Herd::new(&["run", "-t", "1", file.to_str().unwrap()])
        .json(&dir.path("r.json"))
        .run()
        .code(0)
        .json();
    let w = &r["faults"][0];
    assert_eq!(w["toxic"], "http2", "{w}");
    assert_eq!(w["attributes"]["error_code"], "REFUSED_STREAM", "{w}");
    let resets = proxy.metric("herd_proxy_h2_stream_resets_total{proxy=\"web\"}");
    assert!(resets > 20, "about half of 200 requests: {resets}");
    assert_eq!(
        r["errors"]["h2_refused_stream"].as_u64().unwrap_or(0),
        resets,
        "{}",
        r["errors"]
    );
    // The errors are in the window's seconds only.
    for e in r["timeline"].as_array().unwrap() {
        let errors = e["errors"].as_u64().unwrap();
        if e.get("faults").is_none() {
            assert_eq!(errors, 0, "a second outside the window: {e}");
        }
    }
    assert!(proxy
        .api_get("/proxies/web/toxics")
        .as_array()
        .unwrap()
        .is_empty());
}
