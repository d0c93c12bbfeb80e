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
