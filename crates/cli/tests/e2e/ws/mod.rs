//! WebSocket runs (`herd run ws://...`): every message sent is answered and counted, against
//! Python's websockets (directly and through nginx proxying the Upgrade) and `herd serve`'s
//! echo route; Artillery on the same server counts what herd and the server count; a server
//! that stalls shows in the replies timed from their intended instants; what a bad combination
//! of flags is told.

use crate::common::*;
use std::process::{Child, Command};

mod artillery;
mod bar;
mod h2;
mod mix;
mod outputs;
mod sockets;
mod workload;

/// Python's websockets echo server on a free loopback port, counting messages.
pub struct Echo {
    child: Child,
    pub port: u16,
}

impl Echo {
    pub fn start(stall_after: u64, stall_ms: u64) -> Echo {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/ws/echo_server.py");
        let (child, port) = python_server(
            Command::new("python3")
                .arg(script)
                .env("STALL_AFTER", stall_after.to_string())
                .env("STALL_MS", stall_ms.to_string()),
            "the WebSocket echo server",
            "websockets",
            "websockets",
        );
        Echo { child, port }
    }

    /// Messages the server received.
    pub fn count(&self) -> u64 {
        self.read("/count")
    }

    /// One of the server's own counts: `/count`, `/closes`, `/refused`.
    pub fn read(&self, path: &str) -> u64 {
        let addr = format!("127.0.0.1:{}", self.port).parse().unwrap();
        let body = get(addr, path);
        let text = body.rsplit("\r\n\r\n").next().unwrap_or(&body);
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{path}: {body:?}"))
    }

    /// Stops (SIGSTOP) or resumes (SIGCONT) the server's process.
    pub fn signal(&self, sig: i32) {
        kill(self.child.id(), sig);
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const PING: &str = r#"{"op":"ping","id":"{{seq}}"}"#;

/// `herd run URL --send PING` with `more`; the result and the summary.
fn run_ws(url: &str, more: &[&str], dir: &TempDir) -> (serde_json::Value, String) {
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", url, "--send", PING, "-t", "1"])
        .args(more)
        .json(&json)
        .run();
    let r = ran.code(0).json();
    assert_matches_schema("result.schema.json", &r);
    // The summary counts messages.
    let out = ran.stdout();
    assert!(
        out.contains("  messages  ") && out.contains(" msg/s "),
        "{out}"
    );
    (r, out)
}

/// Every message sent was answered: sent = completed = ok, no error.
pub fn all_answered(r: &serde_json::Value) -> u64 {
    let t = &r["totals"];
    assert_eq!(t["sent"], t["completed"], "{t}");
    assert_eq!(t["completed"], t["ok"], "{t}");
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
    t["sent"].as_u64().unwrap()
}

#[test]
fn python_websockets_echo_answers_every_message_at_the_message_rate() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("ws-python");
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let (r, _) = run_ws(
        &url,
        &[
            "-c",
            "20",
            "--message-rate",
            "10",
            "-d",
            "3s",
            "--match",
            "id",
        ],
        &dir,
    );
    let sent = all_answered(&r);
    // 20 sockets x 10 messages a second x 3 s, each answered and counted by the server.
    assert_eq!(sent, 600, "{}", r["totals"]);
    assert_eq!(echo.count(), sent);
    assert_eq!(r["config"]["model"], "open");
    assert_eq!(r["config"]["rate"], 200.0);
    // A message's reply has no status of its own: the 101 was each socket's Upgrade's.
    assert!(
        r["status"].as_object().unwrap().is_empty(),
        "{}",
        r["status"]
    );
    // Each socket opened once, all of them used.
    assert_eq!(r["generator"]["connections_opened"], 20);
    assert_eq!(r["connect_ms"]["count"], 20, "{}", r["connect_ms"]);
}

#[test]
fn nginx_proxying_the_upgrade_passes_every_message() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let nginx = Nginx::start(&format!(
        r#"location /ws {{
             proxy_pass http://127.0.0.1:{};
             proxy_http_version 1.1;
             proxy_set_header Upgrade $http_upgrade;
             proxy_set_header Connection "upgrade";
           }}"#,
        echo.port
    ));
    let dir = TempDir::new("ws-nginx");
    let url = nginx.url("/ws").replacen("http://", "ws://", 1);
    let (r, _) = run_ws(&url, &["-c", "8", "-n", "400"], &dir);
    assert_eq!(all_answered(&r), 400);
    assert_eq!(echo.count(), 400);
    assert_eq!(r["config"]["model"], "closed");
}

#[test]
fn wss_through_nginx_terminating_tls_passes_every_message() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("wss-nginx");
    let nginx = Nginx::start_with(
        &nginx_tls(
            &dir,
            &format!(
                r#"location /ws {{
                     proxy_pass http://127.0.0.1:{};
                     proxy_http_version 1.1;
                     proxy_set_header Upgrade $http_upgrade;
                     proxy_set_header Connection "upgrade";
                   }}"#,
                echo.port
            ),
        ),
        "ssl",
    );
    let url = format!("wss://127.0.0.1:{}/ws", nginx.addr.port());
    let (r, _) = run_ws(&url, &["-k", "-c", "4", "-n", "200"], &dir);
    assert_eq!(all_answered(&r), 200);
    assert_eq!(echo.count(), 200);
    assert!(
        r["generator"]["tls"]
            .to_string()
            .contains("\"version\":\"TLSv1."),
        "{}",
        r["generator"]
    );
}

#[test]
fn herd_serve_echoes_and_its_close_fault_is_counted_with_its_code() {
    let _turn = one_at_a_time();
    let s = mock(&["/ws ws latency=1ms", "/bad ws error-rate=0.5 fault=close"]);
    let dir = TempDir::new("ws-serve");
    let (r, _) = run_ws(
        &format!("ws://{}/ws", s.local_addr()),
        &["-c", "4", "-n", "200"],
        &dir,
    );
    assert_eq!(all_answered(&r), 200);
    // The server counts each socket's Upgrade request and each message.
    assert_eq!(r["generator"]["connections_opened"], 4);
    assert_eq!(s.stats().requests, 4 + 200);
    let lat = r["latency_ms"]["min"].as_f64().unwrap();
    assert!(lat >= 1.0, "an echo after 1 ms took {lat} ms");

    let (r, _) = run_ws(
        &format!("ws://{}/bad", s.local_addr()),
        &["-c", "2", "-n", "100"],
        &dir,
    );
    let closed = r["errors"]["ws_closed"].as_u64().unwrap_or(0);
    assert!(closed > 0, "{}", r["errors"]);
    assert_eq!(closed + r["totals"]["ok"].as_u64().unwrap(), 100);
    let sample = r["error_samples"]["ws_closed"].as_str().unwrap();
    assert!(sample.contains("code 1011"), "{sample}");

    // A path with no WebSocket behind it: the handshake's status, counted as such.
    let json = dir.path("refused.json");
    let r = Herd::new(&["run", &format!("ws://{}/none", s.local_addr())])
        .args(&["--send", "hi", "-c", "1", "-n", "3", "-t", "1"])
        .json(&json)
        .run()
        .json();
    assert_eq!(r["status"]["404"], 3, "{}", r["status"]);
}

#[test]
fn messages_are_counted_as_messages_in_the_summary_json_and_csv() {
    let s = mock(&["/ws ws"]);
    let dir = TempDir::new("ws-messages");
    let (json, csv) = (dir.path("r.json"), dir.path("r.csv"));
    let ran = Herd::new(&["run", &format!("ws://{}/ws", s.local_addr())])
        .args(&["--send", "hi", "-c", "2", "-n", "40", "-t", "1"])
        .args(&["--csv", csv.to_str().unwrap()])
        .json(&json)
        .run();
    let r = ran.code(0).json();
    assert_eq!(all_answered(&r), 40);
    let out = ran.stdout();
    for said in [
        ", 40 messages, ",
        "websocket 2 connections, 40 messages",
        "(40 messages)",
        "(replies, from the intended send time)",
        "  replies    min 2 B  mean 2 B  max 2 B\n",
    ] {
        assert!(out.contains(said), "{said:?} not in\n{out}");
    }
    for not in ["status 101", "requests", "req/s", "responses"] {
        assert!(!out.contains(not), "{not:?} in\n{out}");
    }
    // No status for a message in the JSON's totals or its seconds.
    assert!(
        r["status"].as_object().unwrap().is_empty(),
        "{}",
        r["status"]
    );
    for e in r["timeline"].as_array().unwrap() {
        assert!(e["status_class"].as_object().unwrap().is_empty(), "{e}");
    }
    assert_eq!(r["generator"]["protocols"][0]["protocol"], "websocket");
    let table = std::fs::read_to_string(&csv).unwrap();
    assert!(
        table.starts_with("t,messages,ok,failed,errors,msg_per_s,"),
        "{table}"
    );
}

#[test]
fn a_server_stall_of_one_second_shows_in_the_replies_from_their_intended_time() {
    let _turn = one_at_a_time();
    // The whole server blocks for 1 s when its 60th message arrives.
    let echo = Echo::start(60, 1000);
    let dir = TempDir::new("ws-stall");
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let (r, _) = run_ws(
        &url,
        &[
            "-c",
            "10",
            "--message-rate",
            "20",
            "-d",
            "4s",
            "--match",
            "id",
        ],
        &dir,
    );
    assert_eq!(all_answered(&r), 800);
    assert_eq!(echo.count(), 800);
    let lat = &r["latency_ms"];
    // The message that met the stall waited all of it; those due during it were sent on
    // time and waited the rest: a fifth of the run's messages.
    assert!(lat["max"].as_f64().unwrap() >= 1000.0, "{lat}");
    assert!(lat["p99"].as_f64().unwrap() >= 900.0, "{lat}");
    assert!(lat["p75"].as_f64().unwrap() < 900.0, "{lat}");
}

#[test]
fn websocket_flags_without_a_websocket_url_and_the_reverse_are_refused() {
    refused(
        &["run", "http://127.0.0.1:9/", "--send", "hi"],
        "--send, --message-rate, --match and --ping-interval are for WebSocket URLs: write \
         ws:// or wss://",
    );
    refused(
        &["run", "ws://127.0.0.1:9/"],
        "a WebSocket run sends messages: give one with --send",
    );
    refused(
        &["run", "ws://127.0.0.1:9/", "--send", "hi", "--rate", "10"],
        "--message-rate R (messages per second on each of the -c sockets)",
    );
    refused(
        &["run", "ws://127.0.0.1:9/", "--send", "hi", "--http3"],
        "--http3 does not apply to a WebSocket URL",
    );
}
