//! Artillery (npm's `artillery`, its `engine: ws`) and herd against the same Python websockets
//! echo server, 20 sockets x 10 messages each: the server's own count of messages received is
//! herd's `sent` and `completed` (replies received) exactly, and Artillery's
//! `websocket.messages_sent` and `websocket.messages_received` exactly. scripts/check installs
//! Artillery into `ws/artillery` (npm, `--prefix`).

use super::{all_answered, run_ws, Echo};
use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SOCKETS: u64 = 20;
const EACH: u64 = 10;

/// Artillery's binary, from the tests' own npm prefix.
fn artillery() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/ws/artillery/node_modules/.bin/artillery");
    assert!(
        bin.is_file(),
        "Artillery is not installed: run `scripts/check` (it installs it) or \
         `PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-package-lock --prefix {}`",
        bin.parent()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .display()
    );
    bin
}

/// Artillery's scenario: SOCKETS virtual users, all arriving within a second, each opening one
/// socket and sending EACH JSON messages, each awaiting its echo (matched by its `id`) before
/// the next: the closed mode herd runs by default.
fn scenario(port: u16) -> String {
    format!(
        r#"config:
  target: "ws://127.0.0.1:{port}/"
  phases:
    - duration: 1
      arrivalCount: {SOCKETS}
  ws:
    timeout: 5
scenarios:
  - engine: ws
    flow:
      - loop:
          - send:
              payload:
                op: ping
                id: "{{{{ $loopCount }}}}"
              match:
                json: "$.id"
                value: "{{{{ $loopCount }}}}"
        count: {EACH}
"#
    )
}

/// `artillery run --output REPORT SCENARIO`, bounded at 90 s; the report's aggregate counters.
fn run_artillery(port: u16, dir: &TempDir) -> serde_json::Value {
    let yml = dir.path("ws.yml");
    std::fs::write(&yml, scenario(port)).unwrap();
    let report = dir.path("artillery.json");
    let mut child = Command::new(artillery())
        .arg("run")
        .arg("--quiet")
        .arg("--output")
        .arg(&report)
        .arg(&yml)
        // no telemetry leaves the machine
        .env("ARTILLERY_DISABLE_TELEMETRY", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs Artillery");
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Artillery did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "artillery: {}{}",
        stdout(&out),
        stderr(&out)
    );
    read_json(&report)["aggregate"]["counters"].clone()
}

#[test]
fn artillery_and_herd_count_the_messages_the_server_counts() {
    let _turn = one_at_a_time();
    let echo = Echo::start(0, 0);
    let dir = TempDir::new("ws-artillery");
    let all = SOCKETS * EACH;

    // herd: 20 sockets, closed, 200 messages in all.
    let url = format!("ws://127.0.0.1:{}/", echo.port);
    let (r, _) = run_ws(
        &url,
        &["-c", &SOCKETS.to_string(), "-n", &all.to_string()],
        &dir,
    );
    let sent = all_answered(&r);
    assert_eq!(sent, all, "{}", r["totals"]);
    // Every message sent was received: the server's own count.
    assert_eq!(echo.count(), sent);
    assert_eq!(echo.read("/sockets"), SOCKETS);
    assert_eq!(r["generator"]["connections_opened"], SOCKETS);

    // Artillery on the same server, its counts from its JSON report: what it says it sent and
    // received are what the server received and echoed, neither over- nor under-counted.
    let c = run_artillery(echo.port, &dir);
    let server = echo.count() - sent;
    assert_eq!(server, all, "the server's count of Artillery's messages");
    assert_eq!(c["websocket.messages_sent"], server, "{c}");
    assert_eq!(c["websocket.messages_received"], server, "{c}");
    assert_eq!(c["vusers.created"], SOCKETS, "{c}");
    assert_eq!(c["vusers.completed"], SOCKETS, "{c}");
    assert!(c.get("vusers.failed").is_none_or(|f| f == 0), "{c}");
    assert_eq!(echo.read("/sockets"), 2 * SOCKETS);

    // Side by side: the same counts for the same load.
    assert_eq!(c["websocket.messages_sent"], r["totals"]["sent"]);
    assert_eq!(c["websocket.messages_received"], r["totals"]["ok"]);
}
