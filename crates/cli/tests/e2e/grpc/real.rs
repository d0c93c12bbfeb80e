//! `herd grpc` against the project's other gRPC servers: grpc-go's greeter (tests/grpc-go,
//! counting the calls it answered) and `herd serve`'s echo service (every error code in turn,
//! server streams).

use crate::common::*;
use herd_testkit::{GrpcServer, Streams};
use std::process::{Child, Stdio};
use std::time::Duration;

pub(super) fn mock_proto(name: &str) -> String {
    format!("{}/../mock/proto/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `herd serve` on a free port, one thread (failing calls take the codes in a known order).
pub(super) struct Serve {
    child: Child,
    pub(super) addr: String,
}

impl Serve {
    pub(super) fn start(route: &str) -> Serve {
        Serve::start_routes(&[route])
    }

    pub(super) fn start_routes(routes: &[&str]) -> Serve {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let mut cmd = herd();
        cmd.args(["serve", "--listen", &addr, "-t", "1"]);
        for r in routes {
            cmd.args(["--route", r]);
        }
        let child = cmd.stderr(Stdio::null()).spawn().unwrap();
        wait_listening(addr.parse().unwrap(), "herd serve");
        Serve { child, addr }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn echo(
    addr: &str,
    method: &str,
    data: &str,
    n: &str,
    c: &str,
    json: &std::path::Path,
) -> Ran {
    Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        &mock_proto("echo.proto"),
        "--call",
        method,
        "-d",
        data,
        "-n",
        n,
        "-c",
        c,
        addr,
    ])
    .json(json)
    .run()
}

#[test]
fn the_go_greeter_answered_as_many_calls_as_herd_counted() {
    let go = GrpcServer::go(Streams::default());
    let dir = TempDir::new("grpc-go");
    let json = dir.path("r.json");
    let addr = go.addr.to_string();
    let proto = mock_proto("helloworld.proto");
    let r = Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        &proto,
        "--call",
        "helloworld.Greeter/SayHello",
        "-d",
        r#"{"name":"x"}"#,
        "-n",
        "200",
        "-c",
        "4",
        &addr,
    ])
    .json(&json)
    .run()
    .code(0)
    .json();
    assert_eq!(go.calls("/helloworld.Greeter/SayHello"), 200);
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 200}));
}

#[test]
fn every_error_code_of_herd_serve_is_counted_under_its_name() {
    let serve = Serve::start("/herd.echo.Echo/Unary grpc grpc-status=all error-rate=100%");
    let dir = TempDir::new("grpc-serve-codes");
    let json = dir.path("r.json");
    let r = echo(
        &serve.addr,
        "herd.echo.Echo/Unary",
        r#"{"message":"m"}"#,
        "32",
        "1",
        &json,
    )
    .code(0)
    .json();
    let status = r["grpc"]["status"].as_object().unwrap();
    assert_eq!(status.len(), 16, "{status:?}");
    assert!(status.values().all(|n| n == 2), "{status:?}");
    assert!(!status.contains_key("OK"));
    assert_eq!(r["totals"]["failed"], 32);
}

#[test]
fn a_server_stream_is_a_call_whose_every_message_is_read() {
    let serve = Serve::start("/herd.echo.Echo/* grpc");
    let dir = TempDir::new("grpc-serve-stream");
    let json = dir.path("r.json");
    let data = r#"{"message":"m","count":5}"#;
    let r = echo(
        &serve.addr,
        "herd.echo.Echo/ServerStream",
        data,
        "10",
        "2",
        &json,
    )
    .code(0)
    .json();
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 10}));
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
}

#[test]
fn without_a_proto_the_types_come_by_server_reflection() {
    let dir = TempDir::new("grpc-reflect");
    let serve = Serve::start("/herd.echo.Echo/* grpc");
    let json = dir.path("serve.json");
    let r = Herd::new(&[
        "grpc",
        "--insecure",
        "--call",
        "herd.echo.Echo/ServerStream",
    ])
    .args(&[
        "-d",
        r#"{"message":"m","count":3}"#,
        "-n",
        "20",
        "-c",
        "2",
        &serve.addr,
    ])
    .json(&json)
    .run()
    .code(0)
    .json();
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 20}));
    let go = GrpcServer::go(Streams::default());
    let json = dir.path("go.json");
    let addr = go.addr.to_string();
    let r = Herd::new(&[
        "grpc",
        "--insecure",
        "--call",
        "helloworld.Greeter.SayHello",
    ])
    .args(&["-d", r#"{"name":"x"}"#, "-n", "30", "-c", "3", &addr])
    .json(&json)
    .run()
    .code(0)
    .json();
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 30}));
    assert_eq!(go.calls("/helloworld.Greeter/SayHello"), 30);
}

#[test]
fn a_server_streams_messages_are_timed_as_they_arrive() {
    let _turn = one_at_a_time();
    let serve = Serve::start("/herd.echo.Echo/* grpc latency=50ms");
    let dir = TempDir::new("grpc-stream-timing");
    let json = dir.path("r.json");
    let data = r#"{"message":"m","count":100,"interval":"0.010s"}"#;
    let r = echo(
        &serve.addr,
        "herd.echo.Echo/ServerStream",
        data,
        "4",
        "4",
        &json,
    )
    .code(0)
    .json();
    let st = &r["streams"];
    assert_eq!(
        (st["streams"].as_u64(), st["events"].as_u64()),
        (Some(4), Some(400)),
        "{st}"
    );
    assert_eq!(st["events_per_stream"]["p50"], 100);
    let gap = st["itl_ms"]["p50"].as_f64().unwrap();
    assert!((gap - 10.0).abs() <= 0.5, "per-message gap p50 {gap} ms");
    // The route's 50 ms before the first message (never less), not the call's whole second;
    // a loaded test machine adds to it, so no upper bound tighter than that.
    let first = st["ttft_ms"]["p50"].as_f64().unwrap();
    assert!(
        (50.0..=300.0).contains(&first),
        "time to first message p50 {first} ms"
    );
    let whole = r["latency_ms"]["p50"].as_f64().unwrap();
    assert!(
        whole >= 1_040.0,
        "the call lasts its 100 messages: {whole} ms"
    );
}

#[test]
fn the_go_greeters_delay_is_herds_p50_as_it_is_ghzs() {
    // Where the server sets the latency (20 ms a call, 4 in flight: 200 calls/s, far below
    // what either client can drive), herd's p50 and ghz's read the same time.
    let go = GrpcServer::go_delayed(Duration::from_millis(20));
    let dir = TempDir::new("grpc-go-delay");
    let json = dir.path("r.json");
    let (addr, proto) = (go.addr.to_string(), mock_proto("helloworld.proto"));
    let call = [
        "--insecure",
        "--proto",
        &proto,
        "--call",
        "helloworld.Greeter/SayHello",
        "-d",
        r#"{"name":"x"}"#,
        "-n",
        "60",
        "-c",
        "4",
    ];
    let r = Herd::new(&["grpc"])
        .args(&call)
        .args(&[&addr])
        .json(&json)
        .run()
        .code(0)
        .json();
    let herd_p50 = r["latency_ms"]["p50"].as_f64().unwrap();
    let out = std::process::Command::new(herd_testkit::go_bin("ghz"))
        .args(call)
        .args(["-O", "json", &addr])
        .output()
        .expect("ghz");
    assert!(
        out.status.success(),
        "ghz: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let g: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ghz_p50 = g["latencyDistribution"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["percentage"] == 50)
        .unwrap()["latency"]
        .as_f64()
        .unwrap()
        / 1e6;
    assert_eq!(go.calls("/helloworld.Greeter/SayHello"), 120);
    for (who, p50) in [("herd", herd_p50), ("ghz", ghz_p50)] {
        assert!(
            (20.0..30.0).contains(&p50),
            "{who}'s p50 {p50} ms at a 20 ms server"
        );
    }
}
