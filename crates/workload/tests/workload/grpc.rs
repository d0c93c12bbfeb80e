//! `grpc:` steps on the fake transport: the call's message framed from its data, its reply read
//! as JSON for checks and extraction (defaults shown), the value carried into an HTTP request
//! and a later call, and checks on `grpc-status` by name.

use crate::common::{compile_in, ok, run_on, Fake};

const PROTO: &str = "syntax = \"proto3\";\npackage e;\n\
    service E { rpc U (M) returns (M); rpc S (M) returns (stream M); }\n\
    message M { string text = 1; uint32 n = 2; }\n";

/// `message` with gRPC's 5-byte prefix, as text (the fake's bodies are text).
fn framed(message: &[u8]) -> String {
    let mut out = vec![0, 0, 0, 0, message.len() as u8];
    out.extend_from_slice(message);
    String::from_utf8(out).unwrap()
}

#[test]
fn a_calls_reply_is_read_as_json_and_carried_into_later_steps() {
    let w = compile_in(
        r#"target: http://127.0.0.1:1
proto: e.proto
load: { model: closed, users: 1, iterations: 2 }
scenarios:
  - name: s
    steps:
      - grpc: e.E/U
        data: { text: hi }
        check: { status: OK, json: { "$.n": 0 } }
        extract: { said: { json: "$.text" } }
      - get: /next?said={{said}}
      - grpc: e.E.S
        data: { text: "{{said}}!" }
        check: { status: [not_found, 14] }
"#,
        &[("e.proto", PROTO)],
    );
    assert!(w.http2, "a workload with a call speaks HTTP/2");
    let fake = Fake::new(|req, _| {
        let status = |code: &str| vec![("grpc-status".to_owned(), code.to_owned())];
        if req.starts_with("POST /e.E/U ") {
            // M { text: "hi" }: field 1, 2 bytes
            (200, status("0"), framed(b"\x0a\x02hi"))
        } else if req.starts_with("POST /e.E/S ") {
            (200, status("5"), String::new())
        } else {
            ok("next")
        }
    });
    let out = run_on(&w, fake.clone());
    let r = fake.requests();
    assert_eq!(r.len(), 6, "{r:?}");
    assert!(r[0].contains("content-type: application/grpc"), "{}", r[0]);
    assert!(r[0].ends_with(&framed(b"\x0a\x02hi")), "{:?}", r[0]);
    assert!(r[1].starts_with("GET /next?said=hi "), "{}", r[1]);
    assert!(r[2].ends_with(&framed(b"\x0a\x03hi!")), "{:?}", r[2]);
    for (name, c) in w.checks().iter().zip(&out.script.checks) {
        assert_eq!((c.passes, c.fails), (2, 0), "{name}: {:?}", c.sample);
    }
    let codes: Vec<_> = out.total.grpc.as_ref().unwrap().counts.iter().collect();
    assert_eq!(codes, [("OK", 2), ("NOT_FOUND", 2)]);
    assert_eq!(out.total.failed, 0);
}

#[test]
fn a_reply_that_is_not_the_calls_is_an_error_class() {
    let w = compile_in(
        r#"target: http://127.0.0.1:1
proto: e.proto
load: { model: closed, users: 1, iterations: 3 }
scenarios:
  - name: s
    steps:
      - grpc: e.E/U
"#,
        &[("e.proto", PROTO)],
    );
    // A frame that says 9 bytes and carries 2; then OK trailers.
    let fake = Fake::new(|_, _| {
        let mut body = framed(b"\x0a\x07");
        body.replace_range(4..5, "\x09");
        (200, vec![("grpc-status".into(), "0".into())], body)
    });
    let out = run_on(&w, fake);
    let kind = herd_engine::metrics::ErrorKind::GrpcMalformed;
    assert_eq!(out.total.error_count(kind), 3);
    assert_eq!(out.total.completed, 0);
}
