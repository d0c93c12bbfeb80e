//! Credentials given on the command line never reach what people share: the summary, the JSON
//! result and the HTML page show a short hash in their place, unless `--show-secrets`.

use crate::common::*;

const TOKEN: &str = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-4f1ce56004dd";
const COOKIE: &str = "session=9d1e7b3a-private";
const API_KEY: &str = "ak_live_51HxYz-private";
const PASSWORD: &str = "hunter2-private";

fn run(dir: &TempDir, name: &str, extra: &[&str]) -> (String, String, String) {
    let server = mock(&[]);
    let json = dir.path(&format!("{name}.json"));
    let url = format!("http://{}/", server.local_addr());
    let mut args = vec![
        "run".to_owned(),
        url,
        "-n".into(),
        "20".into(),
        "-c".into(),
        "2".into(),
        "-t".into(),
        "1".into(),
        "-H".into(),
        format!("Authorization: {TOKEN}"),
        "-H".into(),
        format!("Cookie: {COOKIE}"),
        "-H".into(),
        format!("X-Api-Key: {API_KEY}"),
        "-H".into(),
        "Accept: text/plain".into(),
        "--redact".into(),
        "x-api-key".into(),
        "--json".into(),
        json.to_str().unwrap().into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_herd(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.shutdown().requests, 20);
    let shown = format!("{}{}", stdout(&out), stderr(&out));
    let page = html_report(&json);
    (shown, std::fs::read_to_string(&json).unwrap(), page)
}

#[test]
fn credentials_are_masked_in_the_summary_the_json_and_the_html_report() {
    let dir = TempDir::new("secrets");
    let (shown, json, page) = run(&dir, "masked", &[]);
    for (what, text) in [("output", &shown), ("JSON", &json), ("HTML", &page)] {
        for secret in [TOKEN, "c2VjcmV0LXRva2Vu", COOKIE, API_KEY] {
            assert!(
                !text.contains(secret),
                "the {what} holds `{secret}`:\n{text}"
            );
        }
    }
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let headers: Vec<&str> = r["config"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert_eq!(headers.len(), 4, "{headers:?}");
    for (h, name) in headers.iter().zip(["Authorization", "Cookie", "X-Api-Key"]) {
        assert!(h.starts_with(&format!("{name}: <redacted sha256:")), "{h}");
    }
    assert_eq!(
        headers[3], "Accept: text/plain",
        "other headers stay as given"
    );
    assert!(
        page.contains("Authorization: &lt;redacted sha256:"),
        "{page}"
    );
}

#[test]
fn show_secrets_writes_them_as_given() {
    let dir = TempDir::new("show-secrets");
    let (_, json, _) = run(&dir, "shown", &["--show-secrets"]);
    assert!(json.contains(TOKEN) && json.contains(API_KEY) && json.contains(COOKIE));
}

#[test]
fn a_url_with_a_password_is_refused_without_echoing_it() {
    let url = format!("http://bob:{PASSWORD}@127.0.0.1:9/");
    let out = refused(
        &["run", &url, "-n", "1"],
        "send an Authorization header instead",
    );
    assert!(!stderr(&out).contains(PASSWORD), "{}", stderr(&out));
}
