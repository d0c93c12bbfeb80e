//! examples/token.yaml end to end: the binary runs the example against the mock server with a
//! route that wants an HS256 JWT (`auth=hmac:KEY`), as docs/workload.md tells users to. Tokens
//! built by `jwt_hs256` from each user's CSV row pass; the same file with another key fails.

use crate::common::*;
use herd_mock::{Config, Route, Server};
use serde_json::Value;

fn passes_fails(c: &Value) -> (u64, u64) {
    (c["passes"].as_u64().unwrap(), c["fails"].as_u64().unwrap())
}

#[test]
fn the_token_example_passes_against_a_mock_that_verifies_its_tokens() {
    let server = Server::start(Config {
        routes: vec![
            Route::parse("/api/* auth=hmac:s3cret-key").unwrap(),
            Route::new("/*"),
        ],
        ..Config::default()
    })
    .unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    let example = std::fs::read_to_string(format!("{root}token.yaml")).unwrap();
    let target = format!("http://{}", server.local_addr());
    let example = example.replace("http://127.0.0.1:8080", &target);
    assert!(example.contains(&target), "the example's target moved");
    let dir = TempDir::new("token");
    std::fs::copy(format!("{root}users.csv"), dir.path("users.csv")).unwrap();
    let run = |yaml: &str| {
        let file = dir.path("token.yaml");
        std::fs::write(&file, yaml).unwrap();
        let json = dir.path("r.json");
        let out = run_herd(&[
            "run",
            file.to_str().unwrap(),
            "-q",
            "-t",
            "1",
            "--json",
            json.to_str().unwrap(),
        ]);
        (out, read_json(&json))
    };

    let (out, r) = run(&example);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // 20 iterations of two requests: the header counts iterations, not 20 "requests" for 40.
    assert!(text.contains(", 20 iterations, "), "{text}");
    assert!(text.contains("40 completed (40 ok, 0 failed)"), "{text}");
    // The 20 expected 401s are ok, and the summary says why.
    assert!(
        text.contains("ok = every check passed: 20 responses with a 4xx/5xx status were what a check expected"),
        "{text}"
    );
    assert_eq!(passes_fails(check(&r, "no token: status 401")), (20, 0));
    assert_eq!(passes_fails(check(&r, "signed token: status 200")), (20, 0));

    // signed with a key the server does not know: every token is refused
    let (out, r) = run(&example.replace("'s3cret-key'", "'guessed-key'"));
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(passes_fails(check(&r, "signed token: status 200")), (0, 20));
    assert_eq!(server.shutdown().requests, 80);
}
