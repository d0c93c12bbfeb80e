//! A workload that mixes HTTP requests and WebSocket messages, as k6, Artillery and Gatling
//! users write it: log in over HTTP, extract the token, open a socket with it in the Upgrade's
//! `Authorization`, chat, close, and call HTTP again. Against Python's websockets serving both
//! (the login, the chat behind it), whose own counts herd's per-name tables must match; a user
//! whose token the server does not take has its Upgrade refused, counted by its status, and
//! its messages not sent. Over https (nginx terminating TLS in front), the socket is wss://,
//! named by its full URL on the target's host.

use crate::common::*;
use std::process::Command;

/// The login and chat server on a free loopback port.
struct Chat {
    child: std::process::Child,
    port: u16,
}

impl Chat {
    fn start() -> Chat {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/ws/login_server.py");
        let (child, port) = python_server(
            Command::new("python3").arg(script),
            "the login and chat server",
            "websockets",
            "websockets",
        );
        Chat { child, port }
    }

    /// The server's own counts.
    fn counts(&self) -> serde_json::Value {
        let addr = format!("127.0.0.1:{}", self.port).parse().unwrap();
        let body = get(addr, "/counts");
        let text = body.rsplit("\r\n\r\n").next().unwrap_or(&body);
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {body:?}"))
    }
}

impl Drop for Chat {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The chat scenario run against `target`, its socket opened on `connect`, with `more` flags:
/// the result, its summary and the server's counts, each asserted equal to the other.
fn run_chat(chat: &Chat, target: &str, connect: &str, more: &[&str], dir: &TempDir) -> String {
    let file = dir.path("chat.yaml");
    // Three users, each keeping its own name (ann, bob, eve), three iterations each: eve's
    // token is not taken.
    std::fs::write(
        &file,
        format!(
            r#"
target: {target}
defaults: {{ headers: {{ X-Client: herd }} }}
load: {{ model: closed, users: 3, duration: 30s, iterations: 9 }}
data:
  who: {{ values: [ann, bob, eve], pick: per-user }}
scenarios:
  - name: chat
    steps:
      - get: /login?user={{{{who}}}}
        name: login
        extract: {{ token: {{ json: "$.token" }} }}
      - ws: {{ connect: "{connect}", name: open, headers: {{ Authorization: "Bearer {{{{token}}}}" }} }}
      - ws:
          name: join
          send: {{ op: join, who: "{{{{who}}}}" }}
          expect: {{ json: "$.op", equals: join }}
      - ws: {{ name: say, send: "hello from {{{{who}}}}", expect: {{ text: hello }} }}
      - ws: close
      - get: /done
        name: done
        check: {{ status: 200 }}
thresholds:
  - "join: p99 < 10s"
  - "done: p99 < 10s"
"#
        ),
    )
    .unwrap();
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .args(more)
        .json(&dir.path("r.json"))
        .run();
    let r = ran.code(0).json();
    let out = ran.stdout();
    let server = chat.counts();
    // Every login, Upgrade, message and last request: herd's per-name counts are the server's.
    assert_eq!(server["logins"], 9, "{server}");
    assert_eq!(named(&r, "login")["totals"]["ok"], server["logins"]);
    let open = named(&r, "open");
    assert_eq!(open["status"]["101"], server["upgrades"], "{open}");
    assert_eq!(server["upgrades"], 6, "{server}");
    let messages = ["join", "say"]
        .map(|n| named(&r, n)["totals"]["ok"].as_u64().unwrap())
        .iter()
        .sum::<u64>();
    assert_eq!(messages, server["messages"].as_u64().unwrap(), "{server}");
    assert_eq!(messages, 12);
    assert_eq!(check(&r, "join: expect json $.op = \"join\"")["passes"], 6);
    assert_eq!(check(&r, "say: expect text \"hello\"")["passes"], 6);
    // Each socket closed with 1000 before the next request went out as HTTP.
    assert_eq!(server["clean"], 6, "{server}");
    assert_eq!(named(&r, "done")["totals"]["ok"], server["done"]);
    assert_eq!(server["done"], 9, "{server}");
    // Thresholds on messages and requests alike.
    let thresholds = r["thresholds"].as_array().unwrap();
    assert!(
        thresholds.len() == 2 && thresholds.iter().all(|t| t["pass"] == true),
        "{thresholds:?}"
    );
    // The token extracted over HTTP reached the Upgrade, beside the defaults' headers.
    let seen: Vec<&str> = server["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    for token in ["Bearer t-ann", "Bearer t-bob", "Bearer t-eve"] {
        assert_eq!(seen.iter().filter(|s| **s == token).count(), 3, "{seen:?}");
    }
    assert_eq!(server["x_client"], 9, "{server}");
    // eve's Upgrades, refused: counted by status in the name's table and the run's failed
    // handshakes, and her messages not sent (a fail of `NAME: sent`), not errors.
    assert_eq!(server["refused"], 3, "{server}");
    assert_eq!(open["status"]["401"], 3, "{open}");
    assert_eq!(open["totals"]["failed"], 3, "{open}");
    assert_eq!(
        r["websocket"]["handshakes_failed"]["401"], 3,
        "{}",
        r["websocket"]
    );
    let sent = check(&r, "join: sent");
    assert_eq!(
        (sent["passes"].as_u64(), sent["fails"].as_u64()),
        (Some(6), Some(3))
    );
    assert!(
        sent["sample"]
            .as_str()
            .unwrap()
            .contains("no open WebSocket"),
        "{sent}"
    );
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
    // Both protocols in the summary: HTTP/1.1's connections and the sockets beside them.
    assert!(
        out.contains("http/1.1 ") && out.contains("websocket 6 connections"),
        "{out}"
    );
    out
}

#[test]
fn login_over_http_then_a_socket_with_the_token_then_http_again_counted_as_the_server_counts() {
    let _turn = one_at_a_time();
    let chat = Chat::start();
    let dir = TempDir::new("ws-mix");
    let target = format!("http://127.0.0.1:{}", chat.port);
    run_chat(&chat, &target, "/chat", &[], &dir);
}

#[test]
fn over_https_the_socket_is_wss_on_the_targets_host_through_nginx_terminating_tls() {
    let _turn = one_at_a_time();
    let chat = Chat::start();
    let dir = TempDir::new("ws-mix-tls");
    let nginx = Nginx::start_with(
        &nginx_tls(
            &dir,
            &format!(
                r#"location ~ ^/(login|chat|done) {{
                     proxy_pass http://127.0.0.1:{};
                     proxy_http_version 1.1;
                     proxy_set_header Upgrade $http_upgrade;
                     proxy_set_header Connection "upgrade";
                   }}"#,
                chat.port
            ),
        ),
        "ssl",
    );
    let port = nginx.addr.port();
    let target = format!("https://127.0.0.1:{port}");
    // The socket named by its full wss:// URL on the target's host.
    let connect = format!("wss://127.0.0.1:{port}/chat");
    let out = run_chat(&chat, &target, &connect, &["-k"], &dir);
    assert!(out.contains("TLSv1."), "{out}");
}

#[test]
fn a_workloads_sockets_beside_requests_refuse_http2_and_a_proxy_before_sending() {
    let dir = TempDir::new("ws-mix-refused");
    let file = dir.path("chat.yaml");
    std::fs::write(
        &file,
        "target: http://127.0.0.1:9\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ get: /login }, { ws: { connect: /chat } }, { ws: { send: hi } }] }]\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    for (flags, said) in [
        (
            &["--http2"][..],
            "--http2: this workload's `ws: { connect }` steps open their sockets with HTTP/1.1's Upgrade",
        ),
        (
            &["--proxy", "http://127.0.0.1:9"][..],
            "--proxy: this workload's WebSockets would need a tunnel",
        ),
    ] {
        let out = run_herd(&[&["run", path][..], flags].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(said), "{said:?} not in\n{err}");
    }
}
