//! A workload's `grpc:` steps against `herd serve` (gRPC and HTTP on one h2c port): a call's
//! reply read by JSON path into a later HTTP request and later calls (ghz #65's chained calls),
//! a server stream's messages as a JSON array, a client stream's messages from a YAML list,
//! metadata, and checks on `grpc-status` by name.

use super::real::{mock_proto, Serve};
use crate::common::*;

fn serve() -> Serve {
    Serve::start_routes(&[
        "/herd.echo.Echo/ClientStream grpc grpc-status=not_found",
        "/herd.echo.Echo/* grpc",
        "/echo echo",
    ])
}

#[test]
fn a_scenario_chains_grpc_calls_and_http_requests_through_extraction() {
    let serve = serve();
    let dir = TempDir::new("grpc-workload");
    let file = dir.path("chain.yaml");
    let yaml = format!(
        r#"
target: http://{addr}
proto: {proto}
load: {{ model: closed, users: 2, iterations: 10 }}
scenarios:
  - name: chain
    steps:
      - grpc: herd.echo.Echo/Unary
        name: first
        data: {{ message: hello }}
        metadata: {{ x-tag: herd }}
        check: {{ status: OK, json: {{ "$.message": hello }} }}
        extract: {{ said: {{ json: "$.message" }} }}
      - get: /echo?said={{{{said}}}}
        name: echo
        check: {{ status: 200, body_contains: "said=hello" }}
      - grpc: herd.echo.Echo.ServerStream
        data: {{ message: "{{{{said}}}}-again", count: 3 }}
        check: {{ json: {{ "$[2].index": 2 }} }}
        extract: {{ last: {{ json: "$[2].message" }} }}
      - grpc: herd.echo.Echo/ClientStream
        data: [ {{ message: a }}, {{ message: "{{{{last}}}}" }} ]
        check: {{ status: [not_found, 14] }}
"#,
        addr = serve.addr,
        proto = mock_proto("echo.proto"),
    );
    std::fs::write(&file, yaml).unwrap();
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", file.to_str().unwrap(), "-t", "1"])
        .json(&json)
        .run();
    let r = ran.code(0).json();
    for c in r["checks"].as_array().unwrap() {
        assert_eq!(c["fails"], 0, "{c}");
        assert!(c["passes"].as_u64().unwrap() >= 10, "{c}");
    }
    assert_eq!(r["totals"]["failed"], 0, "{}", r["totals"]);
    assert!(
        r["errors"].as_object().unwrap().is_empty(),
        "{}",
        r["errors"]
    );
    // Each call counted under its code and its step's name; the HTTP request under HTTP's.
    assert_eq!(
        r["grpc"]["status"],
        serde_json::json!({"OK": 20, "NOT_FOUND": 10}),
        "{}",
        r["grpc"]
    );
    let methods: Vec<&str> = r["grpc"]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "first",
            "herd.echo.Echo/ServerStream",
            "herd.echo.Echo/ClientStream"
        ]
    );
    assert_eq!(r["status"]["200"], 40, "{}", r["status"]);
    let out = ran.stdout();
    assert!(
        out.contains("herd run "),
        "a workload is no `herd grpc`:\n{out}"
    );
}

#[test]
fn a_grpc_steps_mistakes_are_told_before_any_call() {
    let dir = TempDir::new("grpc-workload-bad");
    let file = dir.path("bad.yaml");
    let yaml = format!(
        r#"
target: http://127.0.0.1:9
proto: {proto}
protocol: h1
load: {{ model: closed, users: 1, iterations: 1 }}
scenarios:
  - name: s
    steps:
      - grpc: herd.echo.Echo/Nope
      - grpc: herd.echo.Echo/Unary
        data: {{ mesage: x }}
      - grpc: herd.echo.Echo/Unary
        check: {{ status: NOT_A_CODE }}
        body: x
"#,
        proto = mock_proto("echo.proto"),
    );
    std::fs::write(&file, yaml).unwrap();
    let ran = Herd::new(&["run", file.to_str().unwrap()]).run();
    ran.code(2);
    let err = ran.stderr();
    for says in [
        "herd.echo.Echo has no method Nope; its methods: Unary",
        "not a herd.echo.EchoRequest message",
        "`NOT_A_CODE` is not a gRPC status",
        "`body` is an HTTP request's",
        "calls ride HTTP/2",
    ] {
        assert!(err.contains(says), "{says}:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}
