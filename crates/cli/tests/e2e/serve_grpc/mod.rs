//! gRPC against real clients: `herd serve`'s gRPC services driven by Python's grpcio (messages
//! learnt by server reflection) and by ghz; grpc-go's own greeter (tests/grpc-go) and Python
//! grpcio's (tests/grpc-py), through herd-testkit, counting what ghz sent, directly and
//! through nginx's `grpc_pass`.

use crate::common::*;
use herd_testkit::{go_bin, GrpcServer, Streams};
use std::process::{Child, Command, Stdio};

/// ghz's names for gRPC's codes (Go's `codes.Code.String()`), in code order.
const GO_NAMES: [&str; 17] = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];

/// `herd serve` on a free port, one thread (failing calls take the codes in a known order).
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(routes: &[&str]) -> Serve {
        let port = free_port();
        let mut cmd = herd();
        cmd.args(["serve", "--listen", &format!("127.0.0.1:{port}"), "-t", "1"]);
        for r in routes {
            cmd.args(["--route", r]);
        }
        let child = cmd.stderr(Stdio::null()).spawn().unwrap();
        let addr = format!("127.0.0.1:{port}");
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

/// The Python client's results for `checks` against `addr`.
fn grpcio(addr: &str, checks: &[&str]) -> serde_json::Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/e2e/serve_grpc/client.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(addr)
        .args(checks)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "the grpcio client failed (scripts/check installs PyPI's grpcio and grpcio-reflection): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// ghz's JSON report of a call (`-O json`), with `args` after the address's flags.
fn ghz(addr: &str, call: &str, data: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(go_bin("ghz"))
        .args(["--insecure", "--call", call, "-d", data, "-O", "json"])
        .args(args)
        .arg(addr)
        .output()
        .expect("ghz");
    assert!(
        out.status.success(),
        "ghz: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn herd_serve_answers_grpcio_by_reflection_streams_every_status_and_a_malformed_reply() {
    let serve = Serve::start(&[
        "/herd.echo.Echo/Unary grpc grpc-status=all",
        "/helloworld.Greeter/SayHello grpc fault=garbage",
        "/herd.echo.Echo/ServerStream grpc latency=30ms",
    ]);
    let r = grpcio(
        &serve.addr,
        &["list", "codes:16", "hello", "stream:5:20", "bidi", "client"],
    );
    assert_eq!(
        r["list"],
        serde_json::json!([
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
            "helloworld.Greeter",
            "herd.echo.Echo"
        ])
    );
    let names = &GRPC_CODES[1..];
    assert_eq!(
        r["codes:16"],
        serde_json::json!(names),
        "each error code once, in turn"
    );
    assert_eq!(
        r["hello"]["code"], "INTERNAL",
        "a reply that does not decode is the client's error, not a hang: {r}"
    );
    let stream = &r["stream:5:20"];
    assert_eq!(stream["indexes"], serde_json::json!([0, 1, 2, 3, 4]));
    for (i, ms) in stream["ms"].as_array().unwrap().iter().enumerate() {
        let due = 30.0 + 20.0 * i as f64;
        assert!(
            ms.as_f64().unwrap() >= due,
            "message {i} came before {due} ms: {stream}"
        );
    }
    assert_eq!(
        r["bidi"],
        serde_json::json!([["a", 0], ["b", 1], ["c", 2]]),
        "each answer came before the client sent the next message"
    );
    assert_eq!(r["client"], serde_json::json!({"message": "c", "index": 3}));
}

#[test]
fn ghz_counts_each_status_of_herd_serve_under_its_name_and_the_go_greeter_counts_what_ghz_sent() {
    let serve = Serve::start(&["/herd.echo.Echo/Unary grpc grpc-status=all error-rate=100%"]);
    let report = ghz(
        &serve.addr,
        "herd.echo.Echo/Unary",
        r#"{"message":"x"}"#,
        &["-n", "32", "-c", "1"],
    );
    let want: serde_json::Map<String, serde_json::Value> = GO_NAMES[1..]
        .iter()
        .map(|n| (n.to_string(), serde_json::json!(2)))
        .collect();
    assert_eq!(
        report["statusCodeDistribution"],
        serde_json::Value::Object(want)
    );
    let ok = ghz(
        &serve.addr,
        "helloworld.Greeter/SayHello",
        r#"{"name":"x"}"#,
        &["-n", "10"],
    );
    assert_eq!(ok["statusCodeDistribution"], serde_json::json!({"OK": 10}));

    let go = GrpcServer::go(Streams::default());
    let addr = go.addr.to_string();
    let report = ghz(
        &addr,
        "helloworld.Greeter/SayHello",
        r#"{"name":"x"}"#,
        &["-n", "200", "-c", "4"],
    );
    assert_eq!(
        report["statusCodeDistribution"],
        serde_json::json!({"OK": 200})
    );
    assert_eq!(go.calls("/helloworld.Greeter/SayHello"), 200);
    let said = go.stop();
    assert_eq!(
        said["methods"]["/helloworld.Greeter/SayHello"], 200,
        "{said}"
    );
}

#[test]
fn nginx_grpc_pass_carries_ghz_and_grpcio_to_the_go_greeter() {
    let go = GrpcServer::go(Streams::default());
    let nginx = Nginx::grpc_pass(go.addr);
    let addr = nginx.addr.to_string();
    let report = ghz(
        &addr,
        "helloworld.Greeter/SayHello",
        r#"{"name":"x"}"#,
        &["-n", "100", "-c", "4"],
    );
    assert_eq!(
        report["statusCodeDistribution"],
        serde_json::json!({"OK": 100})
    );
    let r = grpcio(&addr, &["hello"]);
    assert_eq!(r["hello"], "Hello herd");
    assert_eq!(
        go.calls("/helloworld.Greeter/SayHello"),
        101,
        "every call went through nginx to the Go server"
    );
}

#[test]
fn the_python_greeter_answers_grpcio_by_reflection_and_counts_what_ghz_sent() {
    let py = GrpcServer::python(std::time::Duration::ZERO);
    let addr = py.addr.to_string();
    let r = grpcio(&addr, &["list", "hello"]);
    assert_eq!(r["hello"], "Hello herd", "{r}");
    let proto = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mock/proto/helloworld.proto"
    );
    let report = ghz(
        &addr,
        "helloworld.Greeter/SayHello",
        r#"{"name":"x"}"#,
        &["--proto", proto, "-n", "50", "-c", "2"],
    );
    assert_eq!(
        report["statusCodeDistribution"],
        serde_json::json!({"OK": 50})
    );
    let said = py.stop();
    assert_eq!(
        said["methods"]["/helloworld.Greeter/SayHello"], 51,
        "{said}"
    );
}
