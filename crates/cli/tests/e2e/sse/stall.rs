//! `--event-timeout`: a stream that goes quiet (between events, or before its first) ends as
//! `sse_stalled`, apart from a missing `[DONE]` and from `--timeout`, and is never waited on
//! past the limit; against herd serve and a real server stuck mid-answer (sse-starlette).

use super::python::Chat;
use crate::common::*;
use std::time::{Duration, Instant};

const BODY: &str = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;

/// `herd run URL --sse llm` with `more`, four streams on two connections; the result, and how
/// long the run took.
fn chat(url: &str, dir: &TempDir, name: &str, more: &[&str]) -> (serde_json::Value, Duration) {
    let json = dir.path(name);
    let started = Instant::now();
    let ran = Herd::new(&["run", url, "--sse", "llm", "--body", BODY])
        .args(&["-c", "2", "-n", "4", "-t", "1"])
        .args(more)
        .json(&json)
        .run();
    (ran.json(), started.elapsed())
}

#[test]
fn a_stream_quiet_past_the_event_timeout_is_sse_stalled_and_the_run_ends_on_time() {
    let _turn = one_at_a_time();
    let s = mock(&[
        // The first token at once, the next five seconds later.
        "/between sse=llm ttft=10ms itl=5s tokens=3",
        // The head at once, the first token five seconds later.
        "/before sse=llm ttft=5s itl=10ms tokens=3",
        "/steady sse=llm ttft=10ms itl=100ms tokens=5",
    ]);
    let dir = TempDir::new("sse-stall");
    let url = |p: &str| format!("http://{}{p}", s.local_addr());
    for path in ["/between", "/before"] {
        let (r, took) = chat(&url(path), &dir, "r.json", &["--event-timeout", "300ms"]);
        assert_eq!(r["errors"]["sse_stalled"], 4, "{path}: {}", r["errors"]);
        assert_eq!(r["totals"]["errors"], 4, "{path}");
        let sample = r["error_samples"]["sse_stalled"].as_str().unwrap();
        assert!(sample.contains("300ms"), "{path}: {sample}");
        // Each stream would take 5 s or more: none was waited on past the limit.
        assert!(took < Duration::from_secs(4), "{path}: {took:?}");
    }
    // A stream whose events keep coming within the limit is not stalled, however long it is.
    let (r, _) = chat(
        &url("/steady"),
        &dir,
        "steady.json",
        &["--event-timeout", "300ms"],
    );
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
    assert_eq!(r["streams"]["tokens"], 20);
    // Without it, the same stall is the request's timeout: another class.
    let (r, _) = chat(&url("/between"), &dir, "timeout.json", &["--timeout", "1s"]);
    assert_eq!(r["errors"]["timeout"], 4, "{}", r["errors"]);
    assert!(r["errors"].get("sse_stalled").is_none());
}

#[test]
fn a_real_server_stuck_mid_answer_is_a_stalled_stream() {
    let _turn = one_at_a_time();
    // sse-starlette streams two tokens 20 ms apart, then holds the connection for an hour.
    let chat_server = Chat::start_stalling(50, 20, 10, 2);
    let dir = TempDir::new("sse-stall-python");
    let url = format!("http://127.0.0.1:{}/v1/chat/completions", chat_server.port);
    let (r, took) = chat(&url, &dir, "r.json", &["--event-timeout", "500ms"]);
    assert_eq!(r["errors"]["sse_stalled"], 4, "{}", r["errors"]);
    assert!(r["errors"].get("sse_no_done").is_none(), "{}", r["errors"]);
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_bad_event_timeout_is_refused_with_what_to_write() {
    refused(
        &["run", "http://127.0.0.1:1/", "--event-timeout", "0s"],
        "is no wait at all",
    );
    refused(
        &["run", "http://127.0.0.1:1/", "--event-timeout", "soon"],
        "soon",
    );
    let dir = TempDir::new("sse-stall-file");
    let file = dir.path("chat.yaml");
    std::fs::write(
        &file,
        "target: http://127.0.0.1:1\n\
         defaults: { event_timeout: 0s }\n\
         load: { model: closed, users: 1, iterations: 1 }\n\
         scenarios:\n  - steps:\n      - post: /v1/chat/completions\n        stream: llm\n",
    )
    .unwrap();
    let out = run_herd(&["validate", file.to_str().unwrap()]);
    let err = stderr(&out) + &stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`event_timeout` must be longer than 0s"),
        "{err}"
    );
}
