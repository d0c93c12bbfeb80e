//! Server-Sent Events read as they arrive: time to first event (token) from the intended and
//! the actual send, the gaps between events (inter-token latency), events and tokens, against
//! `herd serve`'s streamed routes.

use crate::common::*;

mod caddy;
mod capacity;
mod python;
mod seconds;
mod stall;

fn within(got: f64, want: f64, share: f64) -> bool {
    (got - want).abs() <= want * share
}

#[test]
fn an_llm_stream_gives_time_to_first_token_and_inter_token_latency_within_five_percent() {
    let _turn = one_at_a_time();
    let s = mock(&["/v1/chat/completions sse=llm ttft=200ms itl=20ms tokens=20"]);
    let dir = TempDir::new("sse-llm");
    let json = dir.path("r.json");
    let url = format!("http://{}/v1/chat/completions", s.local_addr());
    let ran = Herd::new(&[
        "run",
        &url,
        "--sse",
        "llm",
        "--body",
        r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        "-c",
        "4",
        "-n",
        "12",
        "-t",
        "1",
    ])
    .json(&json)
    .run();
    let r = ran.code(0).json();
    assert_matches_schema("result.schema.json", &r);
    let st = &r["streams"];
    assert_eq!(st["streams"], 12, "{st}");
    // 20 content events a stream; the usage chunk says 20 tokens.
    assert_eq!(
        (st["events"].as_u64(), st["tokens"].as_u64()),
        (Some(240), Some(240))
    );
    assert_eq!(st["events_per_stream"]["p50"], 20);
    let ttft = st["ttft_ms"]["p50"].as_f64().unwrap();
    let ttft_sent = st["ttft_sent_ms"]["p50"].as_f64().unwrap();
    let itl = st["itl_ms"]["p50"].as_f64().unwrap();
    assert!(within(ttft, 200.0, 0.05), "ttft p50 {ttft} ms");
    assert!(
        within(ttft_sent, 200.0, 0.05),
        "ttft from the send p50 {ttft_sent} ms"
    );
    assert!(within(itl, 20.0, 0.05), "itl p50 {itl} ms");
    assert_eq!(st["itl_ms"]["count"], 12 * 19);
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
    let out = ran.stdout();
    for want in ["streams", "ttft", "itl", "tokens"] {
        assert!(out.contains(want), "no {want} in the summary:\n{out}");
    }
    // Each second says its events and tokens; the page has the section.
    let events: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["events"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(events, 240);
    let page = html_report(&json);
    assert!(
        page.contains("gaps between events (inter-token latency)"),
        "no streams section"
    );
    // Its charts second by second: the time to first token, the gaps, events per second.
    for id in ["chart-ttft", "chart-itl", "chart-events"] {
        assert!(page.contains(id), "no {id} on the report page");
    }
}

#[test]
fn ttft_and_itl_are_thresholds_of_the_one_grammar() {
    let s = mock(&["/v1/chat/completions sse=llm ttft=100ms itl=5ms tokens=4"]);
    let dir = TempDir::new("sse-slo");
    let file = dir.path("chat.yaml");
    let yaml = format!(
        r#"
target: http://{}
load: {{ model: closed, users: 2, iterations: 4 }}
thresholds:
  - "ttft p50 < 50ms"
  - "itl p99 < 1s"
scenarios:
  - name: chat
    steps:
      - post: /v1/chat/completions
        name: first
        json: {{ "stream": true }}
        stream: llm
      - post: /v1/chat/completions
        name: second
        json: {{ "stream": true }}
        stream: llm
"#,
        s.local_addr()
    );
    std::fs::write(&file, yaml).unwrap();
    let json = dir.path("r.json");
    let r = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .json(&json)
        .run()
        .json();
    let t = r["thresholds"].as_array().unwrap();
    assert_eq!(t.len(), 2, "{t:?}");
    assert_eq!(
        t[0]["pass"], false,
        "ttft 100 ms is not under 50 ms: {}",
        t[0]
    );
    assert_eq!(t[1]["pass"], true, "{}", t[1]);
    let streams = r["streams"]["streams"].as_u64().unwrap();
    assert_eq!(streams, r["totals"]["completed"].as_u64().unwrap());
    assert_eq!(r["streams"]["tokens"].as_u64(), Some(4 * streams));
    for n in r["by_name"].as_array().unwrap() {
        assert_eq!(
            n["streams"]["ttft_ms"]["count"], n["totals"]["completed"],
            "{n}"
        );
    }
}

#[test]
fn plain_events_are_counted_without_any_flag_and_a_stream_without_done_is_an_error_with_llm() {
    let s = mock(&["/events sse ttft=10ms itl=5ms tokens=8"]);
    let url = format!("http://{}/events", s.local_addr());
    let dir = TempDir::new("sse-plain");
    let json = dir.path("r.json");
    let r = Herd::new(&["run", &url, "-c", "2", "-n", "6", "-t", "1"])
        .json(&json)
        .run()
        .code(0)
        .json();
    assert_eq!(r["streams"]["events"], 48, "{}", r["streams"]);
    assert_eq!(r["streams"]["itl_ms"]["count"], 6 * 7);
    // Read as an LLM's: no event carries content and none says [DONE].
    let json = dir.path("llm.json");
    let ran = Herd::new(&["run", &url, "--sse", "llm", "-c", "2", "-n", "6", "-t", "1"])
        .json(&json)
        .run();
    let r = ran.json();
    assert_eq!(r["errors"]["sse_no_done"], 6, "{}", r["errors"]);
    assert!(
        r["error_samples"]["sse_no_done"]
            .as_str()
            .unwrap()
            .contains("[DONE]"),
        "{}",
        r["error_samples"]
    );
}
