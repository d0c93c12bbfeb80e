//! The model on small hand-written HAR files: what becomes a step, an extraction, a secret and
//! a think time; every workload written compiles with herd's own workload compiler.

use super::*;
use serde_json::{json, Value};

fn entry(page: &str, at: &str, ms: f64, method: &str, url: &str, status: u16) -> Value {
    json!({
        "pageref": page, "startedDateTime": at, "time": ms,
        "request": {"method": method, "url": url, "headers": [
            {"name": "User-Agent", "value": "Mozilla/5.0 HeadlessChrome"},
            {"name": "Accept-Encoding", "value": "gzip, br"},
            {"name": ":authority", "value": "shop.test"}
        ]},
        "response": {"status": status, "headers": [], "content": {"mimeType": "text/html", "text": ""}}
    })
}

fn with(mut e: Value, f: impl FnOnce(&mut Value)) -> Value {
    f(&mut e);
    e
}

fn har(entries: Vec<Value>) -> Vec<u8> {
    json!({"log": {"version": "1.2", "creator": {"name": "chrome-har", "version": "1.3.1"},
        "pages": [{"id": "p1", "title": "Log in"}, {"id": "p2", "title": "Account"}],
        "entries": entries}})
    .to_string()
    .into_bytes()
}

/// A session: the login page (a CSRF token in a hidden input, a cookie, a stylesheet, a font
/// from another host, a request the browser cancelled), the login form posted with the token and
/// a password (a 303 to the account page), the orders API, and an order page by its id.
fn session() -> Vec<u8> {
    let base = "http://127.0.0.1:8080";
    har(vec![
        with(
            entry(
                "p1",
                "2026-11-25T10:00:00.000Z",
                20.0,
                "GET",
                &format!("{base}/login"),
                200,
            ),
            |e| {
                e["response"]["headers"] =
                    json!([{"name": "Set-Cookie", "value": "sid=s3ss10n; Path=/; HttpOnly"}]);
                e["response"]["content"]["text"] = json!(
                    r#"<form method=post><input type="hidden" name="csrf" value="c5rf70ken"><input name="user"></form>"#
                );
            },
        ),
        with(
            entry(
                "p1",
                "2026-11-25T10:00:00.030Z",
                5.0,
                "GET",
                &format!("{base}/static/site.css"),
                200,
            ),
            |e| {
                e["response"]["content"]["mimeType"] = json!("text/css");
            },
        ),
        entry(
            "p1",
            "2026-11-25T10:00:00.031Z",
            5.0,
            "GET",
            "https://fonts.example/a.woff2",
            200,
        ),
        entry(
            "p1",
            "2026-11-25T10:00:00.032Z",
            0.0,
            "GET",
            &format!("{base}/beacon"),
            0,
        ),
        with(
            entry(
                "p2",
                "2026-11-25T10:00:02.500Z",
                10.0,
                "POST",
                &format!("{base}/login"),
                303,
            ),
            |e| {
                e["request"]["headers"].as_array_mut().unwrap().extend([
                    json!({"name": "Cookie", "value": "sid=s3ss10n; pre=b3f0re"}),
                    json!({"name": "Origin", "value": "http://127.0.0.1:8080"}),
                    json!({"name": "Content-Type", "value": "application/x-www-form-urlencoded"}),
                ]);
                e["request"]["postData"] = json!({"mimeType": "application/x-www-form-urlencoded",
                "text": "csrf=c5rf70ken&user=alice&password=s%26cret"});
                e["response"]["headers"] = json!([{"name": "Location", "value": "/account"}]);
            },
        ),
        entry(
            "p2",
            "2026-11-25T10:00:02.511Z",
            10.0,
            "GET",
            &format!("{base}/account"),
            200,
        ),
        with(
            entry(
                "p2",
                "2026-11-25T10:00:02.600Z",
                10.0,
                "GET",
                &format!("{base}/api/orders"),
                200,
            ),
            |e| {
                e["response"]["content"] = json!({"mimeType": "application/json",
                "text": r#"{"orders": [{"id": 98123, "total": "12.50"}]}"#});
            },
        ),
        with(
            entry(
                "p2",
                "2026-11-25T10:00:03.000Z",
                10.0,
                "GET",
                &format!("{base}/orders/98123?from=list"),
                200,
            ),
            |e| {
                e["request"]["headers"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"name": "Authorization", "value": "Basic YWxpY2U6cw=="}));
            },
        ),
    ])
}

fn compiles(yaml: &str, env: &[&str]) {
    for name in env {
        std::env::set_var(name, "x");
    }
    if let Err(d) = herd_workload::Workload::compile(yaml, "har.yaml".as_ref(), ".".as_ref()) {
        panic!("{d}\n{yaml}");
    }
}

#[test]
fn a_session_becomes_steps_with_extractions_think_times_and_no_secrets() {
    let m = model(&session(), &Options::default()).unwrap();
    let y = &m.yaml;
    assert!(y.contains("target: http://127.0.0.1:8080"), "{y}");
    // the CSRF token from the page's hidden input goes back with the form
    assert!(
        y.contains(r#"csrf: { regex: '<input[^>]*name="csrf"[^>]*value="([^"]*)"' }"#),
        "{y}"
    );
    assert!(y.contains("'csrf': '{{csrf}}'"), "{y}");
    // the id from the orders' JSON goes into the order page's URL
    assert!(y.contains("order_id: { json: '$.orders[0].id' }"), "{y}");
    assert!(y.contains("- get: '/orders/{{order_id}}?from=list'"), "{y}");
    // the password, a cookie from before the recording and a Basic login are not in the file
    for secret in ["s&cret", "s%26cret", "b3f0re", "YWxpY2U6cw"] {
        assert!(!y.contains(secret), "{secret} in\n{y}");
    }
    assert!(y.contains("'password': '{{env.HAR_PASSWORD}}'"), "{y}");
    assert!(y.contains("'Cookie': '{{env.HAR_COOKIE}}'"), "{y}");
    assert!(
        y.contains("'Authorization': '{{env.HAR_AUTHORIZATION}}'"),
        "{y}"
    );
    // the site's own cookie is the jar's
    assert!(!y.contains("s3ss10n"), "{y}");
    // the redirect is followed by the POST, as the browser did; the pause before page 2
    assert!(y.contains("follow_redirects: true"), "{y}");
    assert_eq!(y.matches("- get: '/account'").count(), 0, "{y}");
    assert!(y.contains("- think: 2464ms"), "{y}");
    // what a browser sends that herd must not ask for, and pseudo-headers, are gone
    assert!(
        !y.contains("Accept-Encoding") && !y.contains(":authority"),
        "{y}"
    );
    assert!(
        y.contains("'User-Agent': 'Mozilla/5.0 HeadlessChrome'"),
        "{y}"
    );
    assert!(
        y.contains("2 static files") || y.contains("1 static files"),
        "{y}"
    );
    assert!(y.contains("https://fonts.example/a.woff2"), "{y}");
    assert!(y.contains("1 requests that got no response"), "{y}");
    assert_eq!((m.steps, m.pages, m.extractions), (4, 2, 2));
    let names: Vec<&str> = m.secrets.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["HAR_COOKIE", "HAR_PASSWORD", "HAR_AUTHORIZATION"]);
    compiles(y, &names);
}

#[test]
fn a_token_no_response_showed_is_flagged() {
    let y = model(
        &har(vec![with(
            entry(
                "p1",
                "2026-11-25T10:00:00Z",
                1.0,
                "POST",
                "http://127.0.0.1:8080/f",
                200,
            ),
            |e| {
                e["request"]["postData"] = json!({"mimeType": "application/x-www-form-urlencoded",
                    "text": "csrfmiddlewaretoken=abc123def456&q=1"});
            },
        )]),
        &Options::default(),
    )
    .unwrap()
    .yaml;
    assert!(
        y.contains("'csrfmiddlewaretoken': 'abc123def456'   # as recorded: no response showed"),
        "{y}"
    );
}

#[test]
fn a_key_a_page_script_holds_is_taken_from_the_page() {
    let base = "http://127.0.0.1:8080";
    let y = model(
        &har(vec![
            with(
                entry(
                    "p1",
                    "2026-11-25T10:00:00Z",
                    1.0,
                    "GET",
                    &format!("{base}/app"),
                    200,
                ),
                |e| {
                    e["response"]["content"]["text"] =
                        json!("<script>\n  var apiKey = \"k3y0123456789\";\n</script>");
                },
            ),
            with(
                entry(
                    "p1",
                    "2026-11-25T10:00:01Z",
                    1.0,
                    "GET",
                    &format!("{base}/api/me"),
                    200,
                ),
                |e| {
                    e["request"]["headers"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!({"name": "X-Api-Key", "value": "k3y0123456789"}));
                },
            ),
        ]),
        &Options::default(),
    )
    .unwrap()
    .yaml;
    assert!(
        y.contains(r#"apikey: { regex: 'var apiKey = "([A-Za-z0-9]+)' }"#),
        "{y}"
    );
    assert!(y.contains("'X-Api-Key': '{{apikey}}'"), "{y}");
    // The comment wrote the key's first ten characters ("'k3y0123456...' in the recording").
    assert!(!y.contains("k3y0"), "{y}");
    assert!(
        y.contains("# a credential of 13 characters in the recording"),
        "{y}"
    );
    compiles(&y, &[]);
}

#[test]
fn static_files_are_steps_when_asked() {
    let o = Options {
        assets: true,
        ..Options::default()
    };
    let y = model(&session(), &o).unwrap().yaml;
    assert!(y.contains("- get: '/static/site.css'"), "{y}");
}

#[test]
fn another_target_keeps_the_recorded_paths() {
    let o = Options {
        target: Some("https://staging.test".into()),
        ..Options::default()
    };
    let y = model(&session(), &o).unwrap().yaml;
    assert!(
        y.contains("target: https://staging.test   # --target"),
        "{y}"
    );
    assert!(y.contains("- get: '/login'"), "{y}");
    // what the site compares with itself names the target
    assert!(y.contains("'Origin': 'https://staging.test'"), "{y}");
    let y = model(&session(), &Options::default()).unwrap().yaml;
    assert!(y.contains("'Origin': 'http://127.0.0.1:8080'"), "{y}");
}

/// chrome-har keeps a tab's navigations in one page: each navigation still starts a page, and
/// the pause before it is a think time.
#[test]
fn navigations_start_pages_within_one_recorded_page() {
    let base = "http://127.0.0.1:8080";
    let nav = |at: &str, path: &str| {
        with(
            entry("tab", at, 100.0, "GET", &format!("{base}{path}"), 200),
            |e| {
                e["_resourceType"] = json!("document");
            },
        )
    };
    let xhr = with(
        entry(
            "tab",
            "2026-11-25T10:00:00.200Z",
            50.0,
            "GET",
            &format!("{base}/api"),
            200,
        ),
        |e| {
            e["_resourceType"] = json!("xhr");
        },
    );
    let m = model(
        &har(vec![
            nav("2026-11-25T10:00:00Z", "/a"),
            xhr,
            nav("2026-11-25T10:00:01.750Z", "/b"),
        ]),
        &Options::default(),
    )
    .unwrap();
    assert_eq!((m.steps, m.pages), (3, 2), "{}", m.yaml);
    assert!(m.yaml.contains("- think: 1500ms"), "{}", m.yaml);
    assert!(
        m.yaml.contains("# page 2: GET http://127.0.0.1:8080/b"),
        "{}",
        m.yaml
    );
}

#[test]
fn bodies_keep_their_kind_and_literal_braces() {
    let base = "http://127.0.0.1:9";
    let y = model(
        &har(vec![
            with(entry("p1", "2026-11-25T10:00:00Z", 1.0, "POST", &format!("{base}/api"), 201), |e| {
                e["request"]["postData"] = json!({"mimeType": "application/json",
                    "text": r#"{"name": "{{not a hole}}", "n": 1.5, "tags": ["a", null, true], "token": "t0ps3cr3t"}"#});
                e["response"]["headers"] = json!([{"name": "Location", "value": "/api/items/77a1"}]);
            }),
            with(entry("p1", "2026-11-25T10:00:01Z", 1.0, "PUT", &format!("{base}/api/items/77a1"), 200), |e| {
                e["request"]["postData"] = json!({"mimeType": "text/plain", "text": "line 1\nline 2"});
            }),
        ]),
        &Options::default(),
    )
    .unwrap()
    .yaml;
    assert!(y.contains(r#"json: {'name': '{{ concat("{", "{") }}not a hole}}', 'n': 1.5, 'tags': ['a', null, true], 'token': '{{env.HAR_TOKEN}}'}"#), "{y}");
    assert!(y.contains("location: { header: 'Location' }"), "{y}");
    assert!(y.contains("- put: '{{location}}'"), "{y}");
    assert!(y.contains(r#"body: "line 1\nline 2""#), "{y}");
    assert!(y.contains("'Content-Type': 'text/plain'"), "{y}");
    compiles(&y, &["HAR_TOKEN"]);
}

#[test]
fn damaged_files_get_a_clear_message() {
    let cases: [(&[u8], &str); 6] = [
        (b"", "not a HAR file: the file: EOF while parsing"),
        (b"{\"log\": {\"entries\": [{\"request\": {}}]}}", "log.entries[0]"),
        (b"{\"log\": {\"entries\": []}}", "holds no requests"),
        (
            br#"{"log": {"entries": [{"startedDateTime": "noon", "request": {"method": "GET", "url": "http://a/"}, "response": {"status": 200}}]}}"#,
            "log.entries[0].startedDateTime: `noon` is not an ISO 8601 date",
        ),
        (
            br#"{"log": {"entries": [{"startedDateTime": "2026-11-25T10:00:00Z", "request": {"method": "GET", "url": "ftp://a/"}, "response": {"status": 200}}]}}"#,
            "log.entries[0].request.url: `ftp://a/` is not an absolute http(s) URL",
        ),
        (
            br#"{"log": {"entries": [{"startedDateTime": "2026-11-25T10:00:00Z", "request": {"method": "GET", "url": "http://a/x.png"}, "response": {"status": 200}}]}}"#,
            "no request to http://a a workload can send (1 static files: --assets keeps them)",
        ),
    ];
    for (input, want) in cases {
        let e = model(input, &Options::default()).unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in {e:?}");
    }
    let o = Options {
        target: Some("shop.test".into()),
        ..Options::default()
    };
    let e = model(&session(), &o).unwrap_err().to_string();
    assert!(
        e.contains("--target: `shop.test` is not an http(s) URL"),
        "{e}"
    );
}
