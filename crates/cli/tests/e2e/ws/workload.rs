//! A workload of WebSocket steps (`ws:`) against Python's websockets: each iteration opens a
//! socket (`ws: connect`), sends templated messages whose replies are judged by `expect` (a
//! JSON path's value, a regular expression, a text) and read by `extract`, and closes the
//! socket (`ws: close`, code 1000); per-name tables and checks as for HTTP steps, held against
//! the server's own counts of sockets, messages and clean closes.

use super::Echo;
use crate::common::*;

#[test]
fn a_workloads_ws_steps_send_expect_extract_and_close_each_iterations_socket() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("ws-workload");
    let file = dir.path("chat.yaml");
    std::fs::write(
        &file,
        format!(
            r#"
target: ws://127.0.0.1:{}/
load: {{ model: closed, users: 2, duration: 30s, iterations: 6 }}
data:
  room: {{ values: ["7"] }}
scenarios:
  - name: chat
    steps:
      - ws: connect
      - ws:
          name: join
          send: {{ op: join, id: "{{{{room}}}}" }}
          expect: {{ json: "$.op", equals: join }}
          extract: {{ id: {{ json: "$.id" }} }}
      - ws: {{ name: say, send: "say {{{{id}}}}", expect: {{ regex: '^say \d+$' }} }}
      - think: 10ms
      - ws: {{ name: wrong, send: hello, expect: {{ text: bye }} }}
      - ws: close
"#,
            echo.port
        ),
    )
    .unwrap();
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .json(&dir.path("r.json"))
        .run();
    let r = ran.json();
    let out = ran.stdout();
    // Six iterations of three messages, each iteration on its own socket, closed cleanly.
    assert_eq!(echo.count(), 18);
    assert_eq!(echo.read("/sockets"), 6);
    assert_eq!(echo.read("/clean"), 6);
    assert_eq!(
        r["generator"]["connections_opened"], 6,
        "{}",
        r["generator"]
    );
    assert_eq!(named(&r, "join")["totals"]["ok"], 6, "{}", r["by_name"]);
    assert_eq!(named(&r, "say")["totals"]["ok"], 6, "{}", r["by_name"]);
    assert_eq!(
        named(&r, "wrong")["totals"]["failed"],
        6,
        "{}",
        r["by_name"]
    );
    assert_eq!(check(&r, "join: expect json $.op = \"join\"")["passes"], 6);
    assert_eq!(check(&r, "join: extract id")["passes"], 6);
    // `say {{id}}` went out with the extracted id: the regex matched every reply.
    assert_eq!(check(&r, "say: expect regex ^say \\d+$")["passes"], 6);
    let wrong = check(&r, "wrong: expect text \"bye\"");
    assert_eq!(wrong["fails"], 6, "{wrong}");
    assert!(
        wrong["sample"]
            .as_str()
            .unwrap()
            .contains("the reply does not contain \"bye\""),
        "{wrong}"
    );
    // herd's own closes are not the server's: none counted.
    assert!(r.get("websocket").is_none(), "{}", r["websocket"]);
    assert!(out.contains(" msg/s "), "{out}");
}

#[test]
fn an_http_targets_ws_steps_need_an_open_socket_and_a_close_needs_one() {
    let dir = TempDir::new("ws-workload-bad");
    let file = dir.path("bad.yaml");
    std::fs::write(
        &file,
        r#"
target: http://127.0.0.1:9/
scenarios:
  - name: a
    steps:
      - ws: close
      - ws: { send: hi }
      - ws: open
"#,
    )
    .unwrap();
    let out = run_herd(&["validate", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for said in [
        "`ws: close` closes a socket, and none is open here",
        "a `ws:` message goes on a socket, and none is open here (open one before it with ws: { connect: /chat }, a path on the target)",
        "`ws: open` is not a WebSocket step",
    ] {
        assert!(err.contains(said), "{said:?} not in\n{err}");
    }
}
