//! Event streams over HTTP/2 and HTTP/3: Caddy proxying herd serve's streamed chat completion,
//! its tokens read as they come in DATA frames (h2 by ALPN) or through QUIC. Over HTTP/2 herd
//! decodes the header blocks itself and passes on only the fields it uses: the response's
//! `content-type: text/event-stream` must still make it an event stream.

use super::within;
use crate::common::*;

/// Six streams of ten tokens through Caddy with `flag`: TTFT the first token's (not the
/// headers' nor the second token's: at least 95% of 200 ms and short of 200 + 40 ms, the proxy's
/// hop on a busy machine allowed for), ITL within 5% as over HTTP/1.1, spoken as `protocol` by
/// herd and logged as `caddy_proto` by Caddy.
fn through_caddy(flag: &str, extra: &[&str], protocol: &str, caddy_proto: &str) {
    let _turn = one_at_a_time();
    let s = mock(&["/v1/chat/completions sse=llm ttft=200ms itl=40ms tokens=10"]);
    // Caddy flushes a text/event-stream as it comes; -1 says so whatever its version's default.
    let proxy = format!(
        "reverse_proxy /v1/* {} {{\n\t\tflush_interval -1\n\t}}",
        s.local_addr()
    );
    let caddy = Caddy::start_with(&[], &proxy);
    let dir = TempDir::new("sse-caddy");
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", &caddy.url("/v1/chat/completions"), flag, "-k"])
        .args(&["--sse", "llm", "--body", r#"{"stream":true}"#])
        .args(&["-c", "2", "-n", "6", "-t", "1", "--event-timeout", "1s"])
        .args(extra)
        .json(&json)
        .run();
    let r = ran.code(0).json();
    let st = &r["streams"];
    assert_eq!(st["streams"], 6, "{st}");
    assert_eq!(st["tokens"], 60, "{st}");
    let ttft = st["ttft_ms"]["p50"].as_f64().unwrap();
    let itl = st["itl_ms"]["p50"].as_f64().unwrap();
    assert!((190.0..230.0).contains(&ttft), "ttft p50 {ttft} ms: {st}");
    assert!(within(itl, 40.0, 0.05), "itl p50 {itl} ms: {st}");
    let protocols = r["generator"]["protocols"].to_string();
    assert!(
        protocols.contains(&format!("\"{protocol}\"")),
        "{protocols}"
    );
    let log = caddy.access_log(6);
    assert!(log.iter().all(|e| e["request"]["proto"] == caddy_proto));
}

#[test]
fn http2_through_caddy_gives_ttft_and_itl_as_over_http1() {
    through_caddy("--http2", &["--streams", "3"], "h2", "HTTP/2.0");
}

#[test]
fn http3_through_caddy_gives_ttft_and_itl_as_over_tcp() {
    through_caddy("--http3", &[], "h3", "HTTP/3.0");
}
