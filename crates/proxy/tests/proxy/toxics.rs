use std::io::{BufReader, ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

fn add(api: SocketAddr, proxy: &str, toxic: serde_json::Value) {
    let (status, v) = call(
        api,
        "POST",
        &format!("/proxies/{proxy}/toxics"),
        Some(toxic),
    );
    assert_eq!(status, 200, "{v}");
}

fn read_all(listen: SocketAddr) -> std::io::Result<Vec<u8>> {
    let mut c = TcpStream::connect(listen)?;
    let mut got = Vec::new();
    c.read_to_end(&mut got)?;
    Ok(got)
}

#[test]
fn a_toxic_added_applies_to_a_connection_already_open_and_goes_when_removed() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", echo());
    let mut c = BufReader::new(TcpStream::connect(listen).unwrap());
    assert_eq!(round_trip(&mut c, "before\n"), "before\n");

    add(
        api,
        "db",
        json!({"name": "slow", "type": "latency", "attributes": {"latency": 300}}),
    );
    let t = Instant::now();
    assert_eq!(round_trip(&mut c, "during\n"), "during\n");
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );

    let (status, _) = call(api, "DELETE", "/proxies/db/toxics/slow", None);
    assert_eq!(status, 204);
    let t = Instant::now();
    assert_eq!(round_trip(&mut c, "after\n"), "after\n");
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn reset_peer_resets_the_client_and_is_counted() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", blob(10));
    add(
        api,
        "db",
        json!({"type": "reset_peer", "attributes": {"timeout": 0}}),
    );
    let err = read_all(listen).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    assert_eq!(metric(api, "herd_proxy_resets_total{proxy=\"db\"}"), 1);
}

#[test]
fn limit_data_passes_exactly_its_bytes_then_closes() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", blob(100_000));
    add(
        api,
        "db",
        json!({"type": "limit_data", "attributes": {"bytes": 1000}}),
    );
    assert_eq!(read_all(listen).unwrap().len(), 1000);
    assert_eq!(
        metric(api, "herd_proxy_limit_closes_total{proxy=\"db\"}"),
        1
    );
    let sent = "toxiproxy_proxy_sent_bytes_total{direction=\"downstream\"";
    assert_eq!(metric(api, sent), 1000);
}

#[test]
fn a_proxy_created_with_its_toxics_has_them_from_its_first_connection() {
    let srv = server(0);
    let api = srv.api_addr();
    let up = blob(100);
    let (status, v) = call(
        api,
        "POST",
        "/proxies",
        Some(
            json!({"name": "db", "listen": "127.0.0.1:0", "upstream": up.to_string(),
                    "toxics": [{"type": "limit_data", "attributes": {"bytes": 10}}]}),
        ),
    );
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["toxics"][0]["type"], "limit_data");
    let listen: SocketAddr = v["listen"].as_str().unwrap().parse().unwrap();
    assert_eq!(read_all(listen).unwrap().len(), 10);
}

/// Which of 24 connections a toxic of toxicity 0.5 acted on.
fn choices(seed: u64) -> Vec<bool> {
    let srv = server(seed);
    let api = srv.api_addr();
    let listen = create(api, "db", blob(100));
    add(
        api,
        "db",
        json!({"type": "limit_data", "toxicity": 0.5, "attributes": {"bytes": 10}}),
    );
    (0..24)
        .map(|_| read_all(listen).unwrap().len() == 10)
        .collect()
}

#[test]
fn toxicity_is_drawn_from_the_seed_so_a_run_repeats() {
    let a = choices(7);
    assert_eq!(a, choices(7));
    assert!(a.iter().any(|x| *x) && a.iter().any(|x| !*x), "{a:?}");
    assert_ne!(a, choices(8));
}

/// Reads a connection to its end: (bytes, how long it took).
fn timed_read(listen: SocketAddr) -> (usize, Duration) {
    let t = Instant::now();
    let n = read_all(listen).unwrap().len();
    (n, t.elapsed())
}

#[test]
fn timeout_drops_the_data_and_closes_after_its_time() {
    let srv = server(0);
    let api = srv.api_addr();
    // An echo server keeps its connection open: only the toxic ends it.
    let listen = create(api, "db", echo());
    add(
        api,
        "db",
        json!({"type": "timeout", "attributes": {"timeout": 200}}),
    );
    let t = Instant::now();
    let mut c = TcpStream::connect(listen).unwrap();
    std::io::Write::write_all(&mut c, b"dropped\n").unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    let took = t.elapsed();
    assert_eq!(got, b"");
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert_eq!(
        metric(api, "herd_proxy_timeout_closes_total{proxy=\"db\"}"),
        1
    );
}

#[test]
fn slow_close_holds_the_end_but_not_the_bytes() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", blob(1000));
    add(
        api,
        "db",
        json!({"type": "slow_close", "attributes": {"delay": 300}}),
    );
    let (n, took) = timed_read(listen);
    assert_eq!(n, 1000);
    assert!(took >= Duration::from_millis(300), "{took:?}");
}

#[test]
fn bandwidth_spreads_the_bytes_over_time_at_its_rate() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", blob(50_000));
    // 100 KB/s: 50,000 bytes take half a second.
    add(
        api,
        "db",
        json!({"type": "bandwidth", "attributes": {"rate": 100}}),
    );
    let (n, took) = timed_read(listen);
    assert_eq!(n, 50_000);
    assert!(took >= Duration::from_millis(450), "{took:?}");
}

#[test]
fn an_http_toxic_delays_the_head_of_matching_responses_only() {
    use std::io::Write;
    let srv = server(0);
    let api = srv.api_addr();
    // A server answering each request line with a small response.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(c) = c else { continue };
            std::thread::spawn(move || {
                let mut w = c.try_clone().unwrap();
                let mut r = BufReader::new(c);
                let mut line = String::new();
                while std::io::BufRead::read_line(&mut r, &mut line)
                    .map(|n| n > 0)
                    .unwrap_or(false)
                {
                    if line == "\r\n" {
                        let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                    }
                    line.clear();
                }
            });
        }
    });
    let listen = create(api, "web", up);
    add(
        api,
        "web",
        json!({"type": "http", "attributes": {"path": "/slow*", "header_delay": 300}}),
    );
    let mut c = TcpStream::connect(listen).unwrap();
    let mut ask = |path: &str| -> Duration {
        let t = Instant::now();
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut buf = [0u8; 40];
        c.read_exact(&mut buf).unwrap();
        assert!(buf.ends_with(b"ok"), "{}", String::from_utf8_lossy(&buf));
        t.elapsed()
    };
    assert!(ask("/fast") < Duration::from_millis(300));
    assert!(ask("/slow/x") >= Duration::from_millis(300));
    assert!(ask("/fast") < Duration::from_millis(300));
    assert_eq!(
        metric(api, "herd_proxy_http_faults_total{proxy=\"web\"}"),
        1
    );
}

#[test]
fn an_upstream_nobody_listens_on_closes_the_client_and_is_counted() {
    let srv = server(0);
    let api = srv.api_addr();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let listen = create(api, "gone", closed);
    assert_eq!(read_all(listen).map(|b| b.len()).unwrap_or(0), 0);
    let failures = "herd_proxy_upstream_failures_total{proxy=\"gone\"}";
    assert_eq!(metric(api, failures), 1);
    assert_eq!(
        metric(api, "herd_proxy_connections_open{proxy=\"gone\"}"),
        0
    );
}

#[test]
fn packet_loss_drops_chunks_and_counts_them_and_an_upstream_slicer_still_delivers_all() {
    let srv = server(0);
    let api = srv.api_addr();
    let listen = create(api, "db", blob(10_000));
    add(
        api,
        "db",
        json!({"type": "packet_loss", "attributes": {"loss_rate": 1}}),
    );
    assert_eq!(read_all(listen).unwrap().len(), 0, "every chunk dropped");
    assert!(metric(api, "herd_proxy_dropped_chunks_total{proxy=\"db\"}") > 0);

    // The client's bytes cut into slices of about 4 on the way up: the echo gets them all.
    let echoed = create(api, "up", echo());
    add(
        api,
        "up",
        json!({"type": "slicer", "stream": "upstream",
               "attributes": {"average_size": 4, "size_variation": 2, "delay": 100}}),
    );
    let mut c = BufReader::new(TcpStream::connect(echoed).unwrap());
    let line = "a line cut into small slices on its way up\n";
    assert_eq!(round_trip(&mut c, line), line);
}

#[test]
fn latency_with_jitter_stays_within_its_bounds() {
    let srv = server(3);
    let api = srv.api_addr();
    let listen = create(api, "db", echo());
    add(
        api,
        "db",
        json!({"type": "latency", "attributes": {"latency": 60, "jitter": 20}}),
    );
    let mut c = BufReader::new(TcpStream::connect(listen).unwrap());
    for _ in 0..5 {
        let t = Instant::now();
        assert_eq!(round_trip(&mut c, "x\n"), "x\n");
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(40) && took < Duration::from_millis(500),
            "{took:?}"
        );
    }
}
