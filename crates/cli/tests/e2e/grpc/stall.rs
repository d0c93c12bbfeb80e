//! wrk2's stop-the-server experiment on gRPC: unary calls at a fixed rate to grpc-go's greeter,
//! the server stopped (SIGSTOP) for about a second in the middle. Every call intended during
//! the stop waits for it, so the latency from the intended send shows the stop in p99
//! (~0.9 x stop at 10 s of load), where the service time (from the actual send) hides it;
//! and every call scheduled is one the server answered.
//!
//! The issue's bar is 2,000 calls/s for 20 s; the test keeps its shape at 500 calls/s for 10 s
//! (the suite's time): after the stop the stalled calls drain through the connection's 50
//! streams, and a lower rate keeps that drain (the only thing a loaded machine adds) far
//! inside the tolerance, as in `stop_the_server.rs`.

use super::real::mock_proto;
use crate::common::*;
use herd_testkit::{GrpcServer, Streams};
use std::time::{Duration, Instant};

#[test]
fn a_stalled_server_shows_in_p99_from_the_intended_send_and_every_call_is_accounted() {
    let _turn = one_at_a_time();
    let go = GrpcServer::go(Streams::default());
    let dir = TempDir::new("grpc-stall");
    let json = dir.path("r.json");
    let (addr, proto) = (go.addr.to_string(), mock_proto("helloworld.proto"));
    let child = Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        &proto,
        "--call",
        "helloworld.Greeter/SayHello",
        "-d",
        r#"{"name":"x"}"#,
        "--rps",
        "500",
        "-z",
        "10s",
        "-c",
        "50",
        "--threads",
        "1",
        &addr,
    ])
    .json(&json)
    .spawn();
    std::thread::sleep(Duration::from_secs(4));
    let stopped = Instant::now();
    kill(go.pid(), SIGSTOP);
    std::thread::sleep(Duration::from_secs(1));
    kill(go.pid(), SIGCONT);
    let stop = stopped.elapsed().as_secs_f64() * 1000.0;
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    assert_eq!(r["totals"]["scheduled"], 5_000, "{}", r["totals"]);
    assert_eq!(
        r["totals"]["ok"], 5_000,
        "every call answered OK: {}",
        r["totals"]
    );
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 5_000}));
    assert_eq!(
        go.calls("/helloworld.Greeter/SayHello"),
        5_000,
        "the server answered each call herd counted"
    );
    let want99 = 0.9 * stop;
    for (what, p99) in [
        ("the run's", &r["latency_ms"]["p99"]),
        (
            "the method's",
            &r["grpc"]["methods"][0]["latency_ms"]["p99"],
        ),
        (
            "OK's",
            &r["grpc"]["methods"][0]["by_status"]["OK"]["latency_ms"]["p99"],
        ),
    ] {
        let p99 = p99.as_f64().unwrap();
        assert!(
            (p99 - want99).abs() <= 0.1 * want99,
            "{what} latency p99 {p99:.0} ms, analytic {want99:.0} ms (stop {stop:.0} ms)"
        );
    }
    // What a client timing from the actual send (coordinated omission) would have said.
    let s95 = r["service_time_ms"]["p95"].as_f64().unwrap();
    let p95 = r["latency_ms"]["p95"].as_f64().unwrap();
    assert!(
        s95 < p95 / 5.0,
        "service-time p95 {s95} ms against latency p95 {p95} ms"
    );
}
