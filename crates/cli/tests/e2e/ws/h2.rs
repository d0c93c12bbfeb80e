//! WebSockets over HTTP/2 (RFC 8441, `--http2`): Hypercorn offers them (its SETTINGS carry
//! SETTINGS_ENABLE_CONNECT_PROTOCOL), over h2c and over TLS by ALPN, each of `--streams`
//! sockets on a connection opens as an extended CONNECT stream, and every message is answered
//! and counted by the server; `herd serve` offers them with its latency and faults; nginx does
//! not offer them, and the run stops at once saying what to do; a workload's `ws:` steps are
//! refused over HTTP/2.

use super::{all_answered, run_ws};
use crate::common::*;
use std::process::{Child, Command};

/// Hypercorn serving an ASGI echo app on a free loopback port (h2c by prior knowledge).
struct H2Echo {
    child: Child,
    port: u16,
    /// Where its counts are read in plain HTTP (its own port, or a second one beside TLS).
    counts: u16,
}

impl H2Echo {
    fn start() -> H2Echo {
        Self::started(&mut Command::new("python3"))
    }

    /// Over TLS (HTTP/2 by ALPN), with a self-signed certificate written into `dir`.
    fn start_tls(dir: &TempDir) -> H2Echo {
        let (cert, key) = (dir.path("cert.pem"), dir.path("key.pem"));
        let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        std::fs::write(&cert, ck.cert.pem()).unwrap();
        std::fs::write(&key, ck.key_pair.serialize_pem()).unwrap();
        let counts = free_port();
        let mut echo = Self::started(
            Command::new("python3")
                .env("CERT", &cert)
                .env("KEY", &key)
                .env("COUNTS_PORT", counts.to_string()),
        );
        echo.counts = counts;
        echo
    }

    fn started(cmd: &mut Command) -> H2Echo {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/ws/h2_echo.py");
        let (child, port) = python_server(
            cmd.arg(script),
            "Hypercorn's WebSocket echo app",
            "hypercorn",
            "hypercorn",
        );
        H2Echo {
            child,
            port,
            counts: port,
        }
    }

    /// The server's own counts: `/count` (messages), `/sockets`, `/h2` (sockets over HTTP/2).
    fn read(&self, path: &str) -> u64 {
        let addr = format!("127.0.0.1:{}", self.counts).parse().unwrap();
        let body = get(addr, path);
        let text = body.rsplit("\r\n\r\n").next().unwrap_or(&body);
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{path}: {body:?}"))
    }
}

impl Drop for H2Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn hypercorn_carries_websockets_on_http2_streams_and_answers_every_message() {
    let _turn = one_at_a_time();
    let echo = H2Echo::start();
    let dir = TempDir::new("ws-h2");
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let (r, out) = run_ws(
        &url,
        &[
            "--http2",
            "-c",
            "2",
            "--streams",
            "5",
            "--message-rate",
            "10",
            "-d",
            "3s",
            "--match",
            "id",
        ],
        &dir,
    );
    // 2 connections x 5 sockets, each 10 messages a second for 3 s: every one answered, and
    // counted by the server.
    let sent = all_answered(&r);
    assert_eq!(sent, 300, "{}", r["totals"]);
    assert_eq!(echo.read("/count"), sent);
    assert_eq!(r["config"]["rate"], 100.0);
    // Ten sockets, all over HTTP/2 streams, on two connections.
    assert_eq!(echo.read("/sockets"), 10);
    assert_eq!(echo.read("/h2"), 10);
    assert_eq!(r["generator"]["connections_opened"], 2);
    let p = &r["generator"]["protocols"][0];
    assert_eq!(p["protocol"], "websocket/h2c", "{p}");
    assert_eq!(p["connections"], 2, "{p}");
    assert_eq!(p["requests"], 300, "{p}");
    // Each socket's handshake (its CONNECT out to the 200 in), apart from connect.
    let full = &p["handshakes"]["full"];
    assert_eq!(full["count"], 10, "{p}");
    assert!(full["mean_ms"].as_f64().unwrap() > 0.0, "{p}");
    assert_eq!(r["latency_ms"]["count"], 300, "{}", r["latency_ms"]);
    assert!(r["latency_ms"]["p50"].as_f64().unwrap() > 0.0);
    assert!(
        out.contains("websocket/h2c 2 connections, 300 messages (handshakes: 10 full "),
        "{out}"
    );
}

#[test]
fn wss_negotiates_h2_by_alpn_and_carries_the_sockets_on_its_streams() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("wss-h2");
    let echo = H2Echo::start_tls(&dir);
    let url = format!("wss://127.0.0.1:{}/", echo.port);
    let (r, _) = run_ws(
        &url,
        &["--http2", "-k", "-c", "1", "--streams", "4", "-n", "200"],
        &dir,
    );
    assert_eq!(all_answered(&r), 200);
    assert_eq!(echo.read("/count"), 200);
    assert_eq!(echo.read("/h2"), 4);
    let p = &r["generator"]["protocols"][0];
    assert_eq!(p["protocol"], "websocket/h2", "{p}");
    assert_eq!(p["handshakes"]["full"]["count"], 4, "{p}");
    let tls = r["generator"]["tls"].to_string();
    assert!(tls.contains("\"alpn\":\"h2\""), "{tls}");
}

#[test]
fn nginx_offers_no_websockets_over_http2_and_the_run_stops_saying_so() {
    let _turn = one_at_a_time();
    // h2c, without RFC 8441: nginx's SETTINGS lack SETTINGS_ENABLE_CONNECT_PROTOCOL.
    let nginx = Nginx::start_with("", "http2");
    let url = nginx.url("/").replacen("http://", "ws://", 1);
    let t0 = std::time::Instant::now();
    let ran = Herd::new(&["run", &url, "--http2", "--send", "hi"])
        .args(&["-c", "2", "--streams", "4", "-d", "30s", "-t", "1"])
        .run();
    ran.code(2);
    let err = ran.stderr();
    for said in [
        "--http2: the server does not offer WebSockets over HTTP/2",
        "RFC 8441's SETTINGS_ENABLE_CONNECT_PROTOCOL",
        "run without --http2 to open each socket with HTTP/1.1's Upgrade",
    ] {
        assert!(err.contains(said), "should say {said:?}:\n{err}");
    }
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(10),
        "a 30 s run stopped at the first proof"
    );
}

#[test]
fn herd_serve_offers_websockets_over_http2_with_its_latency_and_faults() {
    let _turn = one_at_a_time();
    let s = mock(&["/ws ws latency=1ms", "/bad ws error-rate=0.5 fault=close"]);
    let dir = TempDir::new("ws-h2-serve");
    let (r, _) = run_ws(
        &format!("ws://{}/ws", s.local_addr()),
        &["--http2", "-c", "2", "--streams", "3", "-n", "300"],
        &dir,
    );
    assert_eq!(all_answered(&r), 300);
    // The server counts each socket's CONNECT and each message.
    assert_eq!(
        r["generator"]["protocols"][0]["handshakes"]["full"]["count"],
        6
    );
    assert_eq!(s.stats().requests, 6 + 300);
    let lat = r["latency_ms"]["min"].as_f64().unwrap();
    assert!(lat >= 1.0, "an echo after 1 ms took {lat} ms");

    // Half the messages close their socket with 1011: each such message is `ws_closed`, and
    // the socket opens again on a new stream for the next.
    let (r, _) = {
        let json = dir.path("bad.json");
        let ran = Herd::new(&["run", &format!("ws://{}/bad", s.local_addr())])
            .args(&[
                "--http2",
                "--send",
                "hi",
                "-c",
                "1",
                "--streams",
                "2",
                "-n",
                "100",
            ])
            .args(&["-t", "1"])
            .json(&json)
            .run();
        (ran.json(), ran.stdout())
    };
    let closed = r["errors"]["ws_closed"].as_u64().unwrap_or(0);
    assert!(closed > 0, "{}", r["errors"]);
    assert_eq!(closed + r["totals"]["ok"].as_u64().unwrap(), 100);
    let sample = r["error_samples"]["ws_closed"].as_str().unwrap();
    assert!(sample.contains("code 1011"), "{sample}");
    assert_eq!(
        r["websocket"]["closes"][0]["code"], 1011,
        "{}",
        r["websocket"]
    );

    // A path with no WebSocket behind it: the CONNECT's status, counted as such.
    let json = dir.path("refused.json");
    let r = Herd::new(&["run", &format!("ws://{}/none", s.local_addr())])
        .args(&["--http2", "--send", "hi", "-c", "1", "-n", "3", "-t", "1"])
        .json(&json)
        .run()
        .json();
    assert_eq!(r["status"]["404"], 3, "{}", r["status"]);
    assert_eq!(
        r["websocket"]["handshakes_failed"]["404"], 3,
        "{}",
        r["websocket"]
    );
}

#[test]
fn a_workloads_ws_steps_over_http2_are_refused_not_upgraded_over_http1() {
    let dir = TempDir::new("ws-h2-workload");
    let file = dir.path("chat.yaml");
    std::fs::write(
        &file,
        "target: ws://127.0.0.1:9/\n\
         load: { model: closed, users: 1, duration: 2s }\n\
         scenarios:\n  - name: chat\n    steps:\n      - ws: { send: \"hi\" }\n",
    )
    .unwrap();
    refused(
        &["run", file.to_str().unwrap(), "--http2", "-t", "1"],
        "a workload's ws: steps open their sockets with HTTP/1.1's Upgrade: WebSockets over \
         HTTP/2 (--http2, protocol: h2) are for a ws:// URL's --send for now",
    );
}
