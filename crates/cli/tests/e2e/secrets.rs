//! Credentials given on the command line never reach what people share: the summary, the JSON
//! result, the HTML page, the CSV, the HdrHistogram log, JUnit and Markdown show a short hash
//! in their place; with `--show-secrets` every one of them shows them as given.

use crate::common::*;

const TOKEN: &str = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.sig-4f1ce56004dd";
const COOKIE: &str = "session=9d1e7b3a-private";
const API_KEY: &str = "ak_live_51HxYz-private";
const PASSWORD: &str = "hunter2-private";

/// Every output of one run with secret headers: (what, its text), the JSON second.
fn run(dir: &TempDir, name: &str, extra: &[&str]) -> Vec<(&'static str, String)> {
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
        // Named like a credential: masked without `--redact` (it was written in clear).
        "--json".into(),
        json.to_str().unwrap().into(),
    ];
    let files =
        ["csv", "hlog", "junit", "summary-md"].map(|f| (f, dir.path(&format!("{name}.{f}"))));
    for (flag, path) in &files {
        args.push(format!("--{flag}"));
        args.push(path.to_str().unwrap().into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_herd(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.shutdown().requests, 20);
    let mut outputs = vec![
        ("output", format!("{}{}", stdout(&out), stderr(&out))),
        ("JSON", std::fs::read_to_string(&json).unwrap()),
        ("HTML", html_report(&json)),
    ];
    for (flag, path) in files {
        outputs.push((flag, std::fs::read_to_string(path).unwrap()));
    }
    outputs
}

/// The outputs that show the request's headers (the others show none at all).
const WITH_HEADERS: [&str; 2] = ["JSON", "HTML"];

#[test]
fn credentials_are_masked_in_the_summary_the_json_and_the_html_report() {
    let dir = TempDir::new("secrets");
    let outputs = run(&dir, "masked", &[]);
    let (json, page) = (&outputs[1].1, &outputs[2].1);
    for (what, text) in &outputs {
        for secret in [TOKEN, "c2VjcmV0LXRva2Vu", COOKIE, API_KEY] {
            assert!(
                !text.contains(secret),
                "the {what} holds `{secret}`:\n{text}"
            );
        }
    }
    for (what, text) in outputs.iter().filter(|(w, _)| WITH_HEADERS.contains(w)) {
        assert!(
            text.contains("<redacted sha256:") || text.contains("&lt;redacted sha256:"),
            "the {what} shows no masked header:\n{text}"
        );
    }
    let r: serde_json::Value = serde_json::from_str(json).unwrap();
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
    let outputs = run(&dir, "shown", &["--show-secrets"]);
    for (what, text) in &outputs {
        // Asked to show them, no output masks them again (the HTML page once did).
        assert!(
            !text.contains("redacted sha256"),
            "the {what} masks a header:\n{text}"
        );
        if WITH_HEADERS.contains(what) {
            for secret in [TOKEN, COOKIE, API_KEY] {
                assert!(
                    text.contains(secret),
                    "the {what} lacks `{secret}`:\n{text}"
                );
            }
        }
    }
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
