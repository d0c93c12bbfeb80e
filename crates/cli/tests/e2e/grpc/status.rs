//! Calls by `grpc-status`, each code under its name with the latency of its own calls, from
//! `herd serve`'s gRPC echo: its failing share takes the 16 error codes in turn, the rest OK.

use super::real::{echo, mock_proto, Serve};
use crate::common::*;

#[test]
fn each_of_the_seventeen_codes_from_the_mock_is_counted_under_its_name() {
    let serve = Serve::start("/herd.echo.Echo/Unary grpc grpc-status=all error-rate=50%");
    let dir = TempDir::new("grpc-17");
    let json = dir.path("r.json");
    let data = r#"{"message":"m"}"#;
    let ran = echo(&serve.addr, "herd.echo.Echo/Unary", data, "120", "1", &json);
    let r = ran.code(0).json();
    let status = r["grpc"]["status"].as_object().unwrap();
    let names: Vec<&str> = status.keys().map(String::as_str).collect();
    let mut want = GRPC_CODES.to_vec();
    want.sort_unstable();
    assert_eq!(names, want, "every code, by name: {status:?}");
    let total: u64 = status.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(total, 120, "every call counted once: {status:?}");
    assert_eq!(r["totals"]["ok"], status["OK"], "{}", r["totals"]);
    assert_eq!(
        r["totals"]["failed"].as_u64(),
        Some(120 - status["OK"].as_u64().unwrap())
    );
    // Each code's own latency, one sample per call of that code.
    let by = r["grpc"]["methods"][0]["by_status"].as_object().unwrap();
    for (name, n) in status {
        assert_eq!(&by[name]["latency_ms"]["count"], n, "{name}");
    }
}

#[test]
fn a_deadline_exceeded_call_is_timed_apart_from_the_fast_ones() {
    // Half the calls would take 50..100 ms, past their 50 ms deadline: the server ends those
    // with DEADLINE_EXCEEDED at the deadline, the rest answer OK before it.
    let serve = Serve::start("/herd.echo.Echo/Unary grpc latency=uniform:0ms:100ms");
    let dir = TempDir::new("grpc-by-status");
    let json = dir.path("r.json");
    let ran = Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        &mock_proto("echo.proto"),
        "--call",
        "herd.echo.Echo/Unary",
        "-d",
        r#"{"message":"m"}"#,
        "--deadline",
        "50ms",
        "-n",
        "60",
        "-c",
        "6",
        &serve.addr,
    ])
    .json(&json)
    .run();
    let r = ran.code(0).json();
    let by = &r["grpc"]["methods"][0]["by_status"];
    let (ok, late) = (
        &by["OK"]["latency_ms"],
        &by["DEADLINE_EXCEEDED"]["latency_ms"],
    );
    let n = |s: &serde_json::Value| s["count"].as_u64().unwrap_or(0);
    assert_eq!(n(ok) + n(late), 60, "{by}");
    assert!(n(ok) > 0 && n(late) > 0, "{by}");
    let late_min = late["min"].as_f64().unwrap();
    assert!(
        late_min >= 49.0,
        "a late call waited its deadline: {late_min} ms"
    );
    let ok_p50 = ok["p50"].as_f64().unwrap();
    assert!(
        ok_p50 < late_min,
        "OK's p50 {ok_p50} ms, the late calls' min {late_min} ms"
    );
    let out = ran.stdout();
    assert!(
        out.contains("  DEADLINE_EXCEEDED  p50") && out.contains("  OK  p50"),
        "each code's latency in the summary:\n{out}"
    );
}
