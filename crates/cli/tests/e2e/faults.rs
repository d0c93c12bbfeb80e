//! Per-request failures are data: the run goes on and each class is counted under its JSON key.
//! Faults come from herd's mock server (in-process) and from a port nobody listens on.

use crate::common::*;

/// Runs `herd run -n 20` (unless `extra` sets -n) and returns the JSON result.
fn run_json(url: &str, extra: &[&str]) -> serde_json::Value {
    let dir = TempDir::new("fault");
    let json = dir.path("r.json");
    let n: &[&str] = if extra.contains(&"-n") {
        &[]
    } else {
        &["-n", "20"]
    };
    let ran = Herd::new(&["run", "-c", "2", "-t", "1"])
        .args(n)
        .args(extra)
        .args(&[url])
        .json(&json)
        .run();
    let r = ran.json();
    // Failures are data, not a failed run; but a run nothing answered measured no server.
    let answered = r["totals"]["completed"].as_u64().unwrap() > 0;
    ran.code(if answered { 0 } else { 6 });
    let t = &r["totals"];
    assert_eq!(
        t["scheduled"].as_u64().unwrap(),
        t["completed"].as_u64().unwrap()
            + t["errors"].as_u64().unwrap()
            + t["dropped"].as_u64().unwrap()
    );
    r
}

fn errors_of(r: &serde_json::Value, class: &str) -> u64 {
    r["errors"][class].as_u64().unwrap_or(0)
}

#[test]
fn refused() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let r = run_json(&url, &[]);
    assert_eq!(errors_of(&r, "connect_refused"), 20);
    // The summary says what that means.
    let out = run_herd(&["run", "-c", "2", "-t", "1", "-n", "20", &url]);
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "NOTHING LISTENS: every connection to {url} was refused"
        )),
        "{text}"
    );
}

#[test]
fn reset() {
    let s = mock(&["/* fault=reset"]);
    let r = run_json(&format!("http://{}/", s.local_addr()), &[]);
    assert_eq!(errors_of(&r, "reset"), 20, "{}", r["errors"]);
}

#[test]
fn stall_ends_as_timeout_at_the_deadline() {
    let s = mock(&["/* fault=stall"]);
    let r = run_json(
        &format!("http://{}/", s.local_addr()),
        &["--timeout", "200ms", "-n", "4"],
    );
    assert_eq!(errors_of(&r, "timeout"), 4, "{}", r["errors"]);
    // No response, so no latency: the wait until the deadline is the time to error.
    assert_eq!(r["latency_ms"]["count"], 0, "{}", r["latency_ms"]);
    assert_eq!(
        r["time_to_error_ms"]["count"], 4,
        "{}",
        r["time_to_error_ms"]
    );
    let max = r["time_to_error_ms"]["max"].as_f64().unwrap();
    assert!(
        max >= 199.0,
        "a timeout is measured at its deadline: max {max} ms"
    );
}

#[test]
fn garbage_is_a_protocol_error() {
    let s = mock(&["/* fault=garbage"]);
    let r = run_json(&format!("http://{}/", s.local_addr()), &[]);
    assert_eq!(errors_of(&r, "protocol"), 20, "{}", r["errors"]);
}

#[test]
fn truncated_body_is_eof() {
    let s = mock(&["/* fault=truncate size=1000"]);
    let r = run_json(&format!("http://{}/", s.local_addr()), &[]);
    assert_eq!(errors_of(&r, "eof"), 20, "{}", r["errors"]);
}

#[test]
fn close_without_answer_is_eof() {
    let s = mock(&["/* fault=close"]);
    let r = run_json(&format!("http://{}/", s.local_addr()), &[]);
    assert_eq!(errors_of(&r, "eof"), 20, "{}", r["errors"]);
}

#[test]
fn a_mix_of_errors_and_successes_is_split_correctly() {
    let s = mock(&["/* error-rate=0.5 fault=reset"]);
    let r = run_json(&format!("http://{}/", s.local_addr()), &["-n", "200"]);
    let resets = errors_of(&r, "reset");
    let ok = r["totals"]["ok"].as_u64().unwrap();
    assert_eq!(resets + ok, 200);
    assert!(resets > 20 && ok > 20, "resets {resets}, ok {ok}");
}
