//! `herd grpc` against a real gRPC server (grpcio, PyPI): the calls herd counts are the calls
//! the server counted, each grpc-status under its name, a reply that is not a HelloReply an
//! error class, and bad flags a message with exit 2.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

mod pace;
mod real;
mod stall;
mod status;
mod tls;
mod workload;

/// The Python greeter on a free loopback port, counting its calls into a file.
struct Greeter {
    child: Child,
    port: u16,
    counts: PathBuf,
}

impl Greeter {
    fn start(dir: &TempDir) -> Greeter {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/e2e/grpc/greeter_server.py"
        );
        let counts = dir.path("counts.json");
        let (child, port) = python_server(
            Command::new("python3")
                .arg(script)
                .env("COUNT_FILE", &counts),
            "the gRPC greeter",
            "grpcio",
            "grpcio",
        );
        Greeter {
            child,
            port,
            counts,
        }
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// What the server counted: its calls, and its calls by status code.
    fn counted(&self) -> serde_json::Value {
        read_json(&self.counts)
    }
}

impl Drop for Greeter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn proto() -> &'static str {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/e2e/grpc/helloworld.proto"
    )
}

fn call(addr: &str, data: &str, n: &str, json: &Path) -> Ran {
    Herd::new(&[
        "grpc",
        "--insecure",
        "--proto",
        proto(),
        "--call",
        "helloworld.Greeter/SayHello",
        "-d",
        data,
        "-n",
        n,
        "-c",
        "4",
        addr,
    ])
    .json(json)
    .run()
}

#[test]
fn unary_calls_are_counted_as_the_server_counted_them() {
    let dir = TempDir::new("grpc-count");
    let server = Greeter::start(&dir);
    let json = dir.path("r.json");
    let ran = call(&server.addr(), r#"{"name":"x"}"#, "200", &json);
    let r = ran.code(0).json();
    assert_eq!(server.counted()["calls"], 200, "{}", server.counted());
    assert_eq!(r["totals"]["completed"], 200, "{}", r["totals"]);
    assert_eq!(r["totals"]["ok"], 200);
    let g = &r["grpc"];
    assert_eq!(g["status"]["OK"], 200, "{g}");
    let m = &g["methods"][0];
    assert_eq!(m["method"], "helloworld.Greeter/SayHello", "{m}");
    assert_eq!(
        (m["calls"].as_u64(), m["latency_ms"]["count"].as_u64()),
        (Some(200), Some(200))
    );
    let out = ran.stdout();
    assert!(
        out.contains("herd grpc ") && out.contains("helloworld.Greeter/SayHello"),
        "{out}"
    );
    assert!(out.contains("OK 200"), "{out}");
    // Reply messages said in gRPC's words, not an LLM's.
    assert!(out.contains("200 calls   200 reply messages"), "{out}");
    assert!(
        out.contains("first msg") && !out.contains("tokens"),
        "{out}"
    );
    let seconds: u64 = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["grpc"]["OK"].as_u64())
        .sum();
    assert_eq!(seconds, 200, "the seconds carry the codes too");
}

#[test]
fn each_of_the_seventeen_codes_is_counted_under_its_name() {
    let dir = TempDir::new("grpc-codes");
    let server = Greeter::start(&dir);
    let names = GRPC_CODES;
    for (code, name) in names.iter().enumerate() {
        let json = dir.path(&format!("r{code}.json"));
        let data = format!(r#"{{"name":"code:{code}"}}"#);
        let r = call(&server.addr(), &data, "3", &json).code(0).json();
        assert_eq!(
            r["grpc"]["status"],
            serde_json::json!({ *name: 3 }),
            "code {code}"
        );
        // Apart from HTTP's statuses and transport errors: each got its 200 and its trailers.
        assert_eq!(r["status"]["200"], 3, "code {code}: {}", r["status"]);
        assert!(
            r["errors"].as_object().unwrap().is_empty(),
            "{}",
            r["errors"]
        );
        let failed = if code == 0 { 0 } else { 3 };
        assert_eq!(r["totals"]["failed"], failed, "code {code}");
        if code > 0 {
            let said = server.counted()["by_code"][code.to_string()].clone();
            assert_eq!(said, 3, "the server's count of code {code}");
        }
    }
}

#[test]
fn templates_in_the_data_number_each_call() {
    // Call n asks for status n (ghz's {{.RequestNumber}}, from 0): 17 calls, each code once,
    // and {{seq}} (from 1) beside it, as herd's other bodies number theirs.
    let dir = TempDir::new("grpc-template");
    let server = Greeter::start(&dir);
    let json = dir.path("r.json");
    let data = r#"{"name":"code:{{.RequestNumber}}"}"#;
    let r = call(&server.addr(), data, "17", &json).code(0).json();
    let status = r["grpc"]["status"].as_object().unwrap();
    assert_eq!(status.len(), 17, "every code once: {status:?}");
    assert!(status.values().all(|n| n == 1), "{status:?}");
    let by_code = server.counted()["by_code"].clone();
    assert_eq!(by_code.as_object().unwrap().len(), 17, "{by_code}");
    let r = call(&server.addr(), r#"{"name":"n{{seq}}"}"#, "5", &json)
        .code(0)
        .json();
    assert_eq!(r["grpc"]["status"], serde_json::json!({"OK": 5}));
    let ran = call(&server.addr(), r#"{"name":"{{uuid}}"}"#, "1", &json);
    ran.code(2);
    assert!(ran.stderr().contains("{{seq}}"), "{}", ran.stderr());
}

#[test]
fn a_reply_of_another_type_is_an_error_class_not_a_panic() {
    let dir = TempDir::new("grpc-garbage");
    let server = Greeter::start(&dir);
    let json = dir.path("r.json");
    let ran = call(&server.addr(), r#"{"name":"garbage"}"#, "10", &json);
    let r = ran.json();
    assert!(!ran.stderr().contains("panicked"), "{}", ran.stderr());
    assert_eq!(r["errors"]["grpc_malformed"], 10, "{}", r["errors"]);
    let sample = r["error_samples"]["grpc_malformed"].as_str().unwrap();
    assert!(sample.contains("helloworld.HelloReply"), "{sample}");
    assert_eq!(server.counted()["calls"], 10);
}

#[test]
fn bad_flags_say_what_is_wrong_with_exit_2() {
    let dir = TempDir::new("grpc-flags");
    let json = dir.path("r.json");
    let proto = proto();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--proto", proto, "--call", "helloworld.Greeter/SayHi"],
            "has no method SayHi; its methods: SayHello",
        ),
        (
            &["--proto", "/nonexistent/x.proto", "--call", "a.B/C"],
            "--proto /nonexistent/x.proto: no such file",
        ),
        (
            &[
                "--proto",
                proto,
                "--call",
                "helloworld.Greeter/SayHello",
                "-d",
                "{name",
            ],
            "-d: the data is not JSON",
        ),
        // 127.0.0.1:9 serves no reflection (nothing listens): told, with the way out.
        (&["--call", "helloworld.Greeter/SayHello"], "--protoset"),
    ];
    for (args, says) in cases {
        let ran = Herd::new(&["grpc", "--insecure", "127.0.0.1:9"])
            .args(args)
            .json(&json)
            .run();
        ran.code(2);
        let err = ran.stderr();
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
