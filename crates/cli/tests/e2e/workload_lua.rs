//! A workload's `script:` end to end: examples/card.yaml computes each card number's check digit
//! in Lua and judges the echoed answer with a Lua check, on two worker threads (each with its
//! own state); `herd validate` refuses a missing script, a syntax error and an unknown function
//! at their lines; a Lua error during the run is the `lua` error class, never a crash.

use crate::common::*;
use serde_json::Value;

fn passes_fails(c: &Value) -> (u64, u64) {
    (c["passes"].as_u64().unwrap(), c["fails"].as_u64().unwrap())
}

/// examples/card.yaml and card.lua copied into `dir`, the target pointed at `url`; `lua` edits
/// the script's text.
fn card(dir: &TempDir, url: &str, lua: impl Fn(String) -> String) -> std::path::PathBuf {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    let yaml = std::fs::read_to_string(format!("{root}card.yaml")).unwrap();
    let moved = yaml.replace("http://127.0.0.1:8080", url);
    assert_ne!(moved, yaml, "the example's target moved");
    let code = std::fs::read_to_string(format!("{root}card.lua")).unwrap();
    std::fs::write(dir.path("card.lua"), lua(code)).unwrap();
    let file = dir.path("card.yaml");
    std::fs::write(&file, moved).unwrap();
    file
}

fn run(file: &std::path::Path, json: &std::path::Path) -> std::process::Output {
    run_herd(&[
        "run",
        file.to_str().unwrap(),
        "-q",
        "-t",
        "2",
        "--json",
        json.to_str().unwrap(),
    ])
}

#[test]
fn the_card_example_computes_and_checks_in_lua_on_every_thread() {
    let server = mock(&["/pay echo", "/*"]);
    let dir = TempDir::new("lua-card");
    let url = format!("http://{}", server.local_addr());
    let file = card(&dir, &url, |c| c);
    let out = run_herd(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = dir.path("r.json");
    let out = run(&file, &json);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(passes_fails(check(&r, "pay by card: sent")), (20, 0));
    assert_eq!(
        passes_fails(check(&r, "pay by card: lua card_accepted")),
        (20, 0)
    );
    assert!(r["errors"].get("lua").is_none(), "{}", r["errors"]);

    // A wrong check digit is caught by the Lua check, which says why.
    let wrong = card(&dir, &url, |c| c.replace("% 10) % 10)", "% 10 + 1) % 10)"));
    let out = run(&wrong, &json);
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    let r = read_json(&json);
    let c = check(&r, "pay by card: lua card_accepted");
    assert_eq!(passes_fails(c), (0, 20));
    let sample = c["sample"].as_str().unwrap();
    assert!(sample.contains("fails the Luhn check"), "{sample}");
    assert_eq!(server.shutdown().requests, 40);
}

#[test]
fn lua_errors_during_the_run_are_the_lua_error_class() {
    let server = mock(&["/pay echo", "/*"]);
    let dir = TempDir::new("lua-errors");
    let url = format!("http://{}", server.local_addr());
    let json = dir.path("r.json");
    // The template's function fails: nothing is sent, each step counted as not sent.
    let file = card(&dir, &url, |c| {
        c.replace(
            "  if not digits:match",
            "  error('no digits today')\n  if not digits:match",
        )
    });
    let out = run(&file, &json);
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    let r = read_json(&json);
    assert_eq!(r["errors"]["lua"], 20, "{}", r["errors"]);
    let sample = r["error_samples"]["lua"].as_str().unwrap();
    assert!(
        sample.starts_with("lua.with_check_digit: card.lua:")
            && sample.ends_with("no digits today"),
        "{sample}"
    );
    assert_eq!(passes_fails(check(&r, "pay by card: sent")), (0, 20));

    // The check's function fails: the requests went out, the check fails with the error.
    let file = card(&dir, &url, |c| {
        c.replace(
            "  if status ~= 200",
            "  local x = nil + 1\n  if status ~= 200",
        )
    });
    let out = run(&file, &json);
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    let r = read_json(&json);
    assert_eq!(r["errors"]["lua"], 20, "{}", r["errors"]);
    assert_eq!(r["totals"]["errors"], 20, "errors are errors in the totals");
    assert!(
        r["thresholds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["expression"].as_str().unwrap().contains("errors") && t["pass"] == false),
        "{}",
        r["thresholds"]
    );
    assert_eq!(passes_fails(check(&r, "pay by card: sent")), (20, 0));
    let c = check(&r, "pay by card: lua card_accepted");
    assert_eq!(passes_fails(c), (0, 20));
    assert!(
        c["sample"]
            .as_str()
            .unwrap()
            .contains("arithmetic on a nil value"),
        "{c}"
    );
    assert_eq!(server.shutdown().requests, 20);
}

#[test]
fn validate_refuses_a_missing_script_a_syntax_error_and_an_unknown_function() {
    let dir = TempDir::new("lua-validate");
    let file = card(&dir, "http://127.0.0.1:9", |c| c);
    let text = std::fs::read_to_string(&file).unwrap();
    let f = file.to_str().unwrap();

    std::fs::write(&file, text.replace("script: card.lua", "script: cart.lua")).unwrap();
    let out = refused(
        &["validate", f],
        "card.yaml:9:9: cannot read the script `cart.lua`",
    );
    assert!(stderr(&out).contains("1 problem"), "{}", stderr(&out));

    std::fs::write(
        dir.path("card.lua"),
        "function with_check_digit(d)\n  return d ..\nend\n",
    )
    .unwrap();
    std::fs::write(&file, &text).unwrap();
    refused(
        &["validate", f],
        "card.yaml:9:9: the script does not load: card.lua:3: unexpected symbol near 'end'",
    );
    // `herd run` refuses it too, before anything is sent.
    refused(&["run", f], "card.lua:3:");

    card(&dir, "http://127.0.0.1:9", |c| c);
    std::fs::write(
        &file,
        text.replace("lua.with_check_digit(", "lua.with_checkdigit("),
    )
    .unwrap();
    refused(
        &["validate", f],
        "card.yaml:17:21: `lua.with_checkdigit(...)`: the script card.lua defines no function `with_checkdigit` (did you mean `with_check_digit`?)",
    );
    std::fs::write(&file, text.replace("lua: card_accepted", "lua: accepted")).unwrap();
    refused(
        &["validate", f],
        "check `lua: accepted`: the script card.lua defines no function `accepted`",
    );
}

/// `{{request.body}}` in a header is the body as this request rendered it, so a signature over
/// the body can be computed by a template function or by Lua; the echo route shows what was sent.
#[test]
fn a_header_signs_the_rendered_body_with_a_builtin_and_with_lua() {
    let server = mock(&["/order echo", "/*"]);
    let dir = TempDir::new("lua-body");
    std::fs::write(
        dir.path("sign.lua"),
        "function byte_sum(s)\n  local n = 0\n  for i = 1, #s do n = n + s:byte(i) end\n  return n\nend\n",
    )
    .unwrap();
    let yaml = format!(
        r#"target: http://{}
script: sign.lua
load: {{ model: closed, users: 1, iterations: 3 }}
data:
  item: {{ values: [shoes] }}
scenarios:
  - name: order
    steps:
      - post: /order
        body: "order={{{{item}}}}&qty=2"
        headers:
          X-Body-SHA: "{{{{ sha256(request.body) }}}}"
          X-Body-Sum: "{{{{ lua.byte_sum(request.body) }}}}"
        check: {{ body_contains: "X-Body-SHA: 9c76130bfcbb58dfa01324a46c550d03c8bb3189ed4b92541c99426368eb11be" }}
      - post: /order
        name: sum
        body: "order={{{{item}}}}&qty=2"
        headers: {{ X-Body-Sum: "{{{{ lua.byte_sum(request.body) }}}}" }}
        check: {{ body_contains: "X-Body-Sum: 1646" }}
"#,
        server.local_addr()
    );
    let file = dir.path("order.yaml");
    std::fs::write(&file, &yaml).unwrap();
    let json = dir.path("r.json");
    let out = run(&file, &json);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let r = read_json(&json);
    let sha = "POST /order: body contains \"X-Body-SHA: 9c76130bfcbb58dfa01324a46c550d03c8bb3189ed4b92541c99426368eb11be\"";
    assert_eq!(passes_fails(check(&r, sha)), (3, 0));
    assert_eq!(
        passes_fails(check(&r, "sum: body contains \"X-Body-Sum: 1646\"")),
        (3, 0)
    );

    // Elsewhere than a header the body is not known yet: refused at its place.
    std::fs::write(
        &file,
        yaml.replace(
            "order={{item}}&qty=2\"\n        headers:",
            "{{request.body}}\"\n        headers:",
        ),
    )
    .unwrap();
    refused(
        &["validate", file.to_str().unwrap()],
        "order.yaml:10:16: `{{request.body}}` is known only in a step's headers",
    );
    assert_eq!(server.shutdown().requests, 6);
}
