//! A real Server-Sent Events server: an OpenAI-compatible chat completion streamed by
//! sse-starlette on uvicorn (PyPI), with known delays; nginx in front of it with
//! `proxy_buffering off`.

use crate::common::*;
use std::process::{Child, Command};

/// The Python server on a free loopback port.
pub(super) struct Chat {
    child: Child,
    pub port: u16,
}

impl Chat {
    fn start(first_ms: u64, gap_ms: u64, tokens: u64) -> Chat {
        Chat::start_stalling(first_ms, gap_ms, tokens, -1)
    }

    /// The server going quiet for an hour after `stall_after` tokens (-1: never).
    pub(super) fn start_stalling(
        first_ms: u64,
        gap_ms: u64,
        tokens: u64,
        stall_after: i64,
    ) -> Chat {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/sse/chat_server.py");
        let (child, port) = python_server(
            Command::new("python3")
                .arg(script)
                .env("FIRST_MS", first_ms.to_string())
                .env("GAP_MS", gap_ms.to_string())
                .env("TOKENS", tokens.to_string())
                .env("STALL_AFTER", stall_after.to_string()),
            "the SSE server",
            "sse-starlette and uvicorn",
            "sse-starlette uvicorn",
        );
        Chat { child, port }
    }
}

impl Drop for Chat {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_chat(url: &str, dir: &TempDir) -> serde_json::Value {
    let json = dir.path("r.json");
    Herd::new(&[
        "run",
        url,
        "--sse",
        "llm",
        "--body",
        r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        "-c",
        "2",
        "-n",
        "10",
        "-t",
        "1",
    ])
    .json(&json)
    .run()
    .code(0)
    .json()
}

fn assert_200_and_20(st: &serde_json::Value) {
    let ttft = st["ttft_ms"]["p50"].as_f64().unwrap();
    let itl = st["itl_ms"]["p50"].as_f64().unwrap();
    assert!((ttft - 200.0).abs() <= 10.0, "ttft p50 {ttft} ms: {st}");
    assert!((itl - 20.0).abs() <= 1.0, "itl p50 {itl} ms: {st}");
}

#[test]
fn sse_starlette_streaming_tokens_gives_ttft_and_itl_within_five_percent() {
    let _turn = one_at_a_time();
    let chat = Chat::start(200, 20, 10);
    let dir = TempDir::new("sse-python");
    let url = format!("http://127.0.0.1:{}/v1/chat/completions", chat.port);
    let r = run_chat(&url, &dir);
    let st = &r["streams"];
    assert_eq!(st["streams"], 10, "{st}");
    assert_eq!(
        (st["events"].as_u64(), st["tokens"].as_u64()),
        (Some(100), Some(100))
    );
    assert_200_and_20(st);
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
}

#[test]
fn nginx_proxying_without_buffering_passes_the_tokens_as_they_come() {
    let _turn = one_at_a_time();
    let chat = Chat::start(200, 20, 10);
    let nginx = Nginx::start(&format!(
        r#"location /v1/ {{
             proxy_pass http://127.0.0.1:{};
             proxy_http_version 1.1;
             proxy_buffering off;
           }}"#,
        chat.port
    ));
    let dir = TempDir::new("sse-nginx");
    let r = run_chat(&nginx.url("/v1/chat/completions"), &dir);
    let st = &r["streams"];
    assert_eq!(st["tokens"], 100, "{st}");
    assert_200_and_20(st);
}
