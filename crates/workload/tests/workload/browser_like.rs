//! A virtual user behaves like a browser where a browser's rules are written down: redirects
//! (RFC 9110), cookies (RFC 6265), and the tokens sites sign instead of keeping sessions. Against
//! a fake transport on a virtual clock, as the language's tests are.

use crate::common::{compile, compile_in, ok, run_on, Fake, Reply};
use herd_workload::Workload;
use std::path::Path;

fn fake(answer: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Fake {
    Fake::new(move |req, _| answer(req))
}

fn line(req: &str) -> &str {
    req.lines().next().unwrap_or_default()
}

fn header(h: &str, v: &str) -> Vec<(String, String)> {
    vec![(h.to_owned(), v.to_owned())]
}

#[test]
fn redirects_307_and_308_keep_the_method_and_body_303_gets() {
    let w = compile(
        r#"target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 1 }
scenarios:
  - name: s
    steps:
      - { post: /keep, body: "order=1", follow_redirects: true }
      - { post: /perm, body: "order=2", follow_redirects: true }
      - { post: /see, body: "order=3", follow_redirects: true }
"#,
    );
    let fake = fake(|req| match line(req) {
        "POST /keep HTTP/1.1" => (307, header("Location", "/kept"), String::new()),
        "POST /perm HTTP/1.1" => (308, header("Location", "/permed"), String::new()),
        "POST /see HTTP/1.1" => (303, header("Location", "/seen"), String::new()),
        _ => ok(""),
    });
    run_on(&w, fake.clone());
    let seen = fake.requests();
    let lines: Vec<&str> = seen.iter().map(|r| line(r)).collect();
    assert_eq!(
        lines,
        [
            "POST /keep HTTP/1.1",
            "POST /kept HTTP/1.1",
            "POST /perm HTTP/1.1",
            "POST /permed HTTP/1.1",
            "POST /see HTTP/1.1",
            "GET /seen HTTP/1.1",
        ]
    );
    assert!(seen[1].ends_with("\r\n\r\norder=1"), "{}", seen[1]);
    assert!(seen[3].ends_with("\r\n\r\norder=2"), "{}", seen[3]);
    assert!(seen[5].ends_with("\r\n\r\n"), "{}", seen[5]);
}

#[test]
fn validate_says_one_user_not_one_users() {
    let w = compile(
        "target: http://127.0.0.1:1
load: { model: closed, users: 1, duration: 1s }
scenarios: [ { name: s, steps: [ { get: / } ] } ]
",
    );
    let d = w.describe();
    assert!(
        d.contains("up to 1 user,") || d.ends_with("up to 1 user"),
        "{d}"
    );
    assert!(d.contains("1 scenario,"), "{d}");
}

#[test]
fn json_paths_with_filters_extract_what_they_select() {
    let w = compile(
        r#"target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 1 }
scenarios:
  - name: s
    steps:
      - get: /items
        extract:
          cheap: { json: "$.items[?@.price < 10].id" }
          deep: { json: "$..csrf" }
      - get: /buy/{{cheap}}?csrf={{deep}}
"#,
    );
    let fake = fake(|req| {
        match line(req) {
        "GET /items HTTP/1.1" => (
            200,
            Vec::new(),
            r#"{"items":[{"id":"a","price":30},{"id":"b","price":5}],"meta":{"form":{"csrf":"t9"}}}"#
                .into(),
        ),
        _ => ok(""),
    }
    });
    run_on(&w, fake.clone());
    assert_eq!(line(&fake.requests()[1]), "GET /buy/b?csrf=t9 HTTP/1.1");
}

#[test]
fn a_bad_json_path_is_reported_at_its_column() {
    let src = r#"target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 1 }
scenarios:
  - name: s
    steps:
      - get: /items
        extract: { x: { json: "$.items[?@.price <].id" } }
"#;
    let Err(d) = Workload::compile(src, Path::new("w.yaml"), Path::new(".")) else {
        panic!("a bad path compiled")
    };
    let text = d.to_string();
    assert!(text.contains("w.yaml:7:"), "{text}");
    assert!(text.contains("bad JSONPath"), "{text}");
    let col: usize = text
        .split("w.yaml:7:")
        .nth(1)
        .and_then(|t| t.split(':').next())
        .and_then(|c| c.parse().ok())
        .unwrap();
    assert!(col > 30, "the column points into the path: {text}");
}

#[test]
fn cookies_go_only_where_their_path_and_expiry_allow() {
    let w = compile(
        r#"target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 1 }
scenarios:
  - name: s
    steps:
      - get: /login
      - get: /shop/cart
      - get: /about
      - get: /logout
      - get: /shop/cart
"#,
    );
    let fake = fake(|req| match line(req) {
        "GET /login HTTP/1.1" => (
            200,
            vec![
                ("Set-Cookie".into(), "cart=c1; Path=/shop".into()),
                ("Set-Cookie".into(), "sid=s1; Path=/; Max-Age=600".into()),
            ],
            String::new(),
        ),
        "GET /logout HTTP/1.1" => (
            200,
            header(
                "Set-Cookie",
                "sid=gone; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            ),
            String::new(),
        ),
        _ => ok(""),
    });
    run_on(&w, fake.clone());
    let cookie = |req: &str| {
        let mut c: Vec<String> = req
            .lines()
            .find_map(|l| l.strip_prefix("Cookie: "))
            .map(|v| v.split("; ").map(str::to_owned).collect())
            .unwrap_or_default();
        c.sort();
        c
    };
    let seen = fake.requests();
    assert_eq!(cookie(&seen[1]), ["cart=c1", "sid=s1"], "{}", seen[1]);
    assert_eq!(cookie(&seen[2]), ["sid=s1"], "not under /shop: {}", seen[2]);
    assert_eq!(cookie(&seen[4]), ["cart=c1"], "sid expired: {}", seen[4]);
}

#[test]
fn uuid_and_random_int_follow_the_seed_per_user() {
    let src = |seed: u64| {
        format!(
            r#"target: http://127.0.0.1:1
seed: {seed}
load: {{ model: closed, users: 2, iterations: 4 }}
scenarios:
  - name: s
    steps:
      - get: "/r/{{{{ random_int(1, 1000000) }}}}"
        headers: {{ X-Id: "{{{{ uuid() }}}}", X-Sig: "{{{{ hmac_sha256('k', 'x') }}}}" }}
"#
        )
    };
    let sent = |seed: u64| {
        let w = compile(&src(seed));
        let fake = fake(|_| ok(""));
        run_on(&w, fake.clone());
        let mut lines: Vec<String> = fake
            .requests()
            .iter()
            .map(|r| {
                let id = r.lines().find(|l| l.starts_with("X-Id: ")).unwrap_or("");
                format!("{} {id}", line(r))
            })
            .collect();
        lines.sort();
        (lines, fake.requests())
    };
    let (a, raw) = sent(7);
    let (b, _) = sent(7);
    let (c, _) = sent(8);
    assert_eq!(a.len(), 4);
    assert_eq!(a, b, "same seed, same values");
    assert_ne!(a, c, "another seed, other values");
    let distinct: std::collections::HashSet<&String> = a.iter().collect();
    assert_eq!(distinct.len(), 4, "every request draws anew: {a:?}");
    // a call on literals is computed once, at compile time, and checked against Python's hmac
    assert!(
        raw[0].contains(
            "X-Sig: c38edc8815c8489f64738978f44008f8596345545f0baa68ef6fcf5c53e57189\r\n"
        ),
        "{}",
        raw[0]
    );
}

/// The example's token carries the user's own row, as JSON whatever the row holds.
#[test]
fn a_jwt_built_from_a_csv_row_carries_that_row() {
    use base64::Engine;
    let src = r#"target: http://127.0.0.1:1
load: { model: closed, users: 1, iterations: 1 }
data: { users: { csv: users.csv, pick: per-user } }
scenarios:
  - name: s
    steps:
      - get: /api
        headers:
          Authorization: "Bearer {{ jwt_hs256(concat('{\"sub\":', json_string(users.user), ',\"exp\":', now_unix(300), '}'), 'k') }}"
"#;
    let w = compile_in(src, &[("users.csv", "user\nal\"ice\n")]);
    let fake = fake(|_| ok(""));
    run_on(&w, fake.clone());
    let req = &fake.requests()[0];
    let token = req
        .lines()
        .find_map(|l| l.strip_prefix("Authorization: Bearer "))
        .expect("a bearer token");
    let claims = token.split('.').nth(1).unwrap();
    let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(claims)
        .unwrap();
    let claims: serde_json::Value = serde_json::from_slice(&claims).unwrap();
    assert_eq!(claims["sub"], "al\"ice");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let exp = claims["exp"].as_u64().unwrap();
    assert!((now + 299..=now + 301).contains(&exp), "{exp} vs {now}");
}
