//! `herd run` end to end against a real nginx: what a user sees, and the JSON contract.

use crate::common::*;

fn assert_accounted(r: &serde_json::Value) {
    let t = &r["totals"];
    let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("totals.{k}"));
    assert_eq!(
        n("scheduled"),
        n("completed") + n("errors") + n("dropped"),
        "scheduled = completed + errors + dropped: {t}"
    );
    assert_eq!(n("completed"), n("ok") + n("failed"));
}

#[test]
fn closed_model_n_requests_against_nginx_all_ok_and_json_matches_schema() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("closed");
    let json = dir.path("r.json");
    let ran = Herd::new(&["run", "-c", "10", "-n", "2000", "-t", "1", &nginx.url("/")])
        .json(&json)
        .run();
    let r = ran.code(0).json();
    assert_accounted(&r);
    assert_eq!(r["kind"], "run");
    assert_eq!(r["totals"]["completed"], 2000);
    assert_eq!(r["totals"]["ok"], 2000);
    assert_eq!(r["status"]["200"], 2000);
    assert_eq!(
        r["response_bytes"]["max"].as_f64(),
        Some(17.0),
        "body is 'hello from nginx\\n'"
    );
    assert_eq!(r["interrupted"], false);
    // the summary a user reads
    let text = ran.stdout();
    for want in ["p50", "p99", "p99.9", "200", "throughput"] {
        assert!(text.contains(want), "summary lacks {want}:\n{text}");
    }
    // the histograms are there to merge later, exactly
    let h = r["histograms"]["latency"]
        .as_str()
        .expect("latency histogram");
    assert!(h.len() > 20);
}

#[test]
fn the_one_loop_counts_every_exchange_in_both_models() {
    // Every run takes the same loop; against nginx it must count exactly the exchanges asked
    // for, their bytes, and each once in the timeline, in both load models.
    let nginx = Nginx::start("");
    let dir = TempDir::new("loop");
    let run = |name: &str, load: &[&str]| {
        let r = Herd::new(&["run"])
            .args(load)
            .args(&["-t", "2", &nginx.url("/")])
            .json(&dir.path(&format!("{name}.json")))
            .run()
            .code(0)
            .json();
        assert_accounted(&r);
        r
    };
    let timeline = |r: &serde_json::Value| {
        r["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["requests"].as_u64().unwrap())
            .sum::<u64>()
    };
    let closed = ["-c", "8", "-n", "3000"];
    let open = ["--rate", "2000", "-n", "1000"];
    let mut per_request = Vec::new();
    for (name, load, n) in [("closed", &closed[..], 3000), ("open", &open[..], 1000)] {
        let r = run(name, load);
        assert_eq!(r["generator"]["worker"], "loop", "{load:?}");
        assert_eq!(r["totals"]["ok"], n, "{load:?}");
        assert_eq!(r["status"]["200"], n, "{load:?}");
        assert_eq!(r["totals"]["dropped"], 0, "{load:?}");
        if load == closed {
            assert_eq!(r["generator"]["connections_opened"], 8);
        }
        assert_eq!(timeline(&r), n, "every request in the timeline once");
        let sent = r["totals"]["bytes_sent"].as_u64().unwrap();
        let received = r["totals"]["bytes_received"].as_u64().unwrap();
        per_request.push((sent / n, received / n));
    }
    assert_eq!(
        per_request[0], per_request[1],
        "the same exchange in both models"
    );
}

#[test]
fn open_model_delivers_exactly_rate_times_duration() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("open");
    let json = dir.path("r.json");
    let ran = Herd::new(&[
        "run",
        "--rate",
        "2000",
        "-d",
        "2s",
        "-t",
        "1",
        &nginx.url("/"),
    ])
    .json(&json)
    .run();
    let r = ran.code(0).json();
    assert_accounted(&r);
    assert_eq!(r["totals"]["scheduled"], 4000);
    assert_eq!(r["totals"]["ok"], 4000);
    assert_eq!(r["config"]["model"], "open");
    assert!(
        ran.stdout().contains("intended"),
        "open-model latency says it is from the intended send time"
    );
}

#[test]
fn statuses_are_counted_and_4xx_is_failed_not_error() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("404");
    let json = dir.path("r.json");
    let r = Herd::new(&["run", "-c", "2", "-n", "100", &nginx.url("/404")])
        .json(&json)
        .run()
        .code(0)
        .json();
    assert_eq!(r["status"]["404"], 100);
    assert_eq!(r["totals"]["failed"], 100);
    assert_eq!(r["totals"]["errors"], 0);
}

#[test]
fn calls_per_conn_one_opens_a_connection_per_request() {
    let nginx = Nginx::start("");
    let dir = TempDir::new("cpc");
    let json = dir.path("r.json");
    let r = Herd::new(&["run", "-c", "4", "-n", "200", "--calls-per-conn", "1"])
        .args(&[&nginx.url("/")])
        .json(&json)
        .run()
        .code(0)
        .json();
    assert_eq!(r["totals"]["ok"], 200);
    // a connect time for every request
    assert!(r["connect_ms"]["max"].as_f64().unwrap() > 0.0);
}

#[test]
fn post_with_headers_and_body_reaches_the_server() {
    // nginx answers 405 to POST on a static return? No: `return` works for any method.
    let nginx = Nginx::start(
        "location = /echo { return 200 \"$request_method $http_x_test $content_length\"; }",
    );
    let dir = TempDir::new("post");
    let json = dir.path("r.json");
    let r = Herd::new(&[
        "run",
        "-n",
        "5",
        "-c",
        "1",
        "-m",
        "PUT",
        "-H",
        "X-Test: yes",
    ])
    .args(&["--body", "0123456789", &nginx.url("/echo")])
    .json(&json)
    .run()
    .code(0)
    .json();
    // "PUT yes 10" is 10 bytes: the method, header and body length made it to nginx
    assert_eq!(r["response_bytes"]["max"].as_f64(), Some(10.0));
    assert_eq!(r["totals"]["ok"], 5);
    assert_eq!(r["totals"]["bytes_sent"].as_u64().unwrap() % 5, 0);
}
