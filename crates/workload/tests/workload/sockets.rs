//! `ws:` steps beside HTTP requests in an http(s):// target's workload: the Upgrade an exchange
//! of its own (`ws: { connect: PATH }`, its headers the workload's defaults and the step's,
//! rendered per user), messages on the user's socket, the socket closed by `ws: close` or at
//! the scenario's end, messages after a refused Upgrade not sent; and what is refused, at its
//! line and column.

use crate::common::{compile, fresh_dir};
use herd_engine::{Action, Ctx, Last, Request, Response, Script, SocketRole};
use herd_workload::Workload;
use std::path::Path;
use std::time::Instant;

const CHAT: &str = r#"
target: http://127.0.0.1:1
defaults: { headers: { X-Client: herd } }
load: { users: 1, duration: 1s }
scenarios:
  - name: chat
    steps:
      - get: /login
        name: login
        extract: { token: { json: "$.token" } }
      - ws: { connect: "/chat?room=1", headers: { Authorization: "Bearer {{token}}" } }
      - ws: { name: join, send: { op: join }, expect: { json: "$.op", equals: join } }
      - ws: { name: say, send: hi }
      - ws: close
      - get: /after
      - ws: { connect: "ws://127.0.0.1:1/feed", name: feed }
      - ws: { name: tick, send: tick }
"#;

fn ctx() -> Ctx {
    Ctx {
        now: Instant::now(),
        measured: true,
        arrival: None,
    }
}

fn send(a: Action) -> Request {
    match a {
        Action::Send(r) => r,
        other => panic!("not a request: {other:?}"),
    }
}

/// The user's answer to `req`, judged, and its next action.
fn answer<S: Script>(s: &S, u: &mut S::User, req: &Request, status: u16, body: &str) -> Action {
    let resp = Response {
        status,
        body: body.as_bytes().into(),
        ..Response::default()
    };
    s.judge(u, req, &resp, ctx()).unwrap();
    s.next(u, Last::Response(&resp), ctx())
}

fn text(r: &Request) -> &str {
    std::str::from_utf8(&r.bytes).unwrap()
}

#[test]
fn a_users_socket_opens_with_its_token_carries_its_messages_and_closes_before_http_again() {
    let w = compile(CHAT);
    assert!(w.sockets());
    assert_eq!(
        w.names(),
        [
            "login",
            "WS connect /chat?room=1",
            "join",
            "say",
            "GET /after",
            "feed",
            "tick"
        ]
    );
    let s = w.script();
    let mut u = s.new_user(0);
    let login = send(s.next(&mut u, Last::Start, ctx()));
    assert_eq!(login.socket, SocketRole::None);
    let open = send(answer(&s, &mut u, &login, 200, r#"{"token":"T1"}"#));
    // The Upgrade: a GET of the path with WebSocket's headers, the defaults' and the step's.
    assert_eq!(open.socket, SocketRole::Open);
    let head = text(&open);
    assert!(head.starts_with("GET /chat?room=1 HTTP/1.1\r\n"), "{head}");
    for h in [
        "Upgrade: websocket\r\n",
        "Connection: Upgrade\r\n",
        "Sec-WebSocket-Version: 13\r\n",
        "Sec-WebSocket-Key: ",
        "X-Client: herd\r\n",
        "Authorization: Bearer T1\r\n",
    ] {
        assert!(head.contains(h), "{h:?} not in {head}");
    }
    assert!(!open.last);
    let join = send(answer(&s, &mut u, &open, 101, ""));
    assert_eq!(
        (join.socket, text(&join)),
        (SocketRole::Message, r#"{"op":"join"}"#)
    );
    let say = send(answer(&s, &mut u, &join, 0, r#"{"op":"join"}"#));
    // `ws: close` after it: its socket's last exchange.
    assert_eq!((say.socket, say.last), (SocketRole::Message, true));
    let after = send(answer(&s, &mut u, &say, 0, "hi"));
    assert_eq!(after.socket, SocketRole::None);
    assert!(text(&after).starts_with("GET /after "));
    let feed = send(answer(&s, &mut u, &after, 200, ""));
    assert!(
        text(&feed).starts_with("GET /feed HTTP/1.1\r\n"),
        "{}",
        text(&feed)
    );
    let tick = send(answer(&s, &mut u, &feed, 101, ""));
    // Left open at the scenario's end: closed after its last message.
    assert_eq!((tick.socket, tick.last), (SocketRole::Message, true));
    assert!(matches!(answer(&s, &mut u, &tick, 0, "tick"), Action::Done));
}

#[test]
fn messages_after_a_refused_upgrade_are_not_sent_and_counted_so() {
    let w = compile(CHAT);
    let s = w.script();
    let mut u = s.new_user(0);
    let login = send(s.next(&mut u, Last::Start, ctx()));
    let open = send(answer(&s, &mut u, &login, 200, r#"{"token":"bad"}"#));
    // 401: no socket; `join` and `say` are not sent, the next request goes.
    let after = send(answer(&s, &mut u, &open, 401, ""));
    assert!(text(&after).starts_with("GET /after "), "{}", text(&after));
    let tally = s.finish();
    let checks = w.checks();
    let sent = |name: &str| {
        let i = checks.iter().position(|c| c == name).unwrap();
        (tally.checks[i].passes, tally.checks[i].fails)
    };
    assert_eq!(sent("join: sent"), (0, 1));
    assert_eq!(sent("say: sent"), (0, 1));
}

/// Each bad `ws:` step of an http(s):// target's workload is told at its line and column, all
/// of them at once; `herd validate` says the same (it compiles the same way).
#[test]
fn bad_socket_steps_are_told_at_their_place() {
    let src = r#"target: http://127.0.0.1:1
load: { users: 1, duration: 1s }
scenarios:
  - name: a
    steps:
      - ws: { send: early }
      - ws: { connect: "ws://other.example:9/chat" }
      - ws: { connect: "http://127.0.0.1:1/chat" }
      - ws: { connect: "wss://127.0.0.1:1/chat" }
      - ws: connect
      - ws: close
      - ws: { connect: /chat, send: hi }
      - ws: { send: hi, headers: { A: b } }
"#;
    let err = match Workload::compile(src, Path::new("w.yaml"), &fresh_dir("sockets-bad")) {
        Ok(_) => panic!("accepted"),
        Err(d) => d.to_string(),
    };
    for want in [
        "w.yaml:6:13: a `ws:` message goes on a socket, and none is open here",
        "w.yaml:7:24: `connect: ws://other.example:9/chat` is on another host than the target (http://127.0.0.1:1/)",
        "w.yaml:8:24: `connect: http://127.0.0.1:1/chat`: a socket of an http:// target opens with ws://",
        "w.yaml:9:24: `connect: wss://127.0.0.1:1/chat`: a socket of an http:// target opens with ws://",
        "w.yaml:10:13: `ws: connect` in an http(s):// target's workload needs the path",
        "w.yaml:11:13: `ws: close` closes a socket, and none is open here",
        "w.yaml:12:37: a `connect` step opens the socket: `send` goes in a step of its own",
        "w.yaml:13:34: a message has no headers",
    ] {
        assert!(err.contains(want), "{want:?} not in\n{err}");
    }
    for (src, want) in [
        (
            "target: ws://127.0.0.1:1/\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ ws: { connect: /chat } }] }]\n",
            "3:49: `connect: PATH` opens a socket in an http:// or https:// target's workload",
        ),
        (
            "target: http://127.0.0.1:1/\nprotocol: h2\nload: { users: 1, duration: 1s }\nscenarios: [{ name: a, steps: [{ ws: { connect: /chat } }] }]\n",
            "2:11: a `ws: { connect }` step opens its socket with HTTP/1.1's Upgrade, and this workload speaks HTTP/2",
        ),
    ] {
        let err = match Workload::compile(src, Path::new("w.yaml"), &fresh_dir("sockets-bad")) {
            Ok(_) => panic!("accepted:\n{src}"),
            Err(d) => d.to_string(),
        };
        assert!(err.contains(want), "{want:?} not in\n{err}");
    }
}
