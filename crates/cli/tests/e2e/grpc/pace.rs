//! `--message-rate`: a client stream's messages sent on a schedule over one call's stream, each
//! reply timed as it arrives, against `herd serve`'s bidirectional echo (a reply per message).

use super::real::{mock_proto, Serve};
use crate::common::*;

#[test]
fn a_bidi_streams_messages_go_on_their_schedule_and_each_reply_is_timed() {
    let _turn = one_at_a_time();
    let serve = Serve::start("/herd.echo.Echo/* grpc");
    let dir = TempDir::new("grpc-message-rate");
    let json = dir.path("r.json");
    let messages =
        r#"[{"message":"a"},{"message":"b"},{"message":"c"},{"message":"d"},{"message":"e"}]"#;
    let r = Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        &mock_proto("echo.proto"),
        "--call",
        "herd.echo.Echo/Bidi",
        "-d",
        messages,
        "--message-rate",
        "20",
        "-n",
        "4",
        "-c",
        "2",
        &serve.addr,
    ])
    .json(&json)
    .run()
    .code(0)
    .json();
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 4}));
    let st = &r["streams"];
    assert_eq!(
        (st["streams"].as_u64(), st["events"].as_u64()),
        (Some(4), Some(20)),
        "{st}"
    );
    // 20 messages a second: a reply every 50 ms, as the messages went (all at once, the gaps
    // would be microseconds).
    let gap = st["itl_ms"]["p50"].as_f64().unwrap();
    assert!((45.0..=60.0).contains(&gap), "reply gap p50 {gap} ms");
    let whole = r["latency_ms"]["p50"].as_f64().unwrap();
    assert!(whole >= 199.0, "a call lasts its 4 intervals: {whole} ms");
    // ghz's --stream-interval says the same as its inverse.
    let r = Herd::new(&["grpc", "--insecure", "--proto", &mock_proto("echo.proto")])
        .args(&["--call", "herd.echo.Echo/Bidi", "-d", messages])
        .args(&[
            "--stream-interval",
            "50ms",
            "-n",
            "2",
            "-c",
            "2",
            &serve.addr,
        ])
        .json(&json)
        .run()
        .code(0)
        .json();
    let gap = r["streams"]["itl_ms"]["p50"].as_f64().unwrap();
    assert!(
        (45.0..=60.0).contains(&gap),
        "--stream-interval: gap p50 {gap} ms"
    );
    // A method that takes one message is told, before any call.
    let ran = Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        &mock_proto("echo.proto"),
        "--call",
        "herd.echo.Echo/Unary",
        "--message-rate",
        "5",
        &serve.addr,
    ])
    .run();
    ran.code(2);
    assert!(
        ran.stderr()
            .contains("--message-rate paces a client stream's messages"),
        "{}",
        ran.stderr()
    );
}
