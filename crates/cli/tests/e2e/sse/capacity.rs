//! A model server's capacity in concurrent chat users, judged on the time to first token and
//! the gaps between tokens; and `herd compare` on those figures. The target is herd serve's
//! llm route with a batch of 16 (`slots=16`): up to 16 users wait only the first token's 50 ms;
//! beyond, some wait for most of a stream (100 ms: the batch's streams, begun together, end
//! nearly together) before their own first token.

use crate::common::*;

const BATCH: &str = "/v1/chat/completions sse=llm ttft=50ms itl=10ms tokens=6 slots=16";

#[test]
fn capacity_on_ttft_and_itl_finds_how_many_streams_the_server_takes_at_once() {
    let _turn = one_at_a_time();
    let s = mock(&[BATCH]);
    let url = format!("http://{}/v1/chat/completions", s.local_addr());
    let dir = TempDir::new("sse-capacity");
    let json = dir.path("c.json");
    let ran = Herd::new(&["capacity", &url, "--sse", "llm", "--users"])
        .args(&["--slo", "ttft p99 < 90ms, itl p99 < 50ms"])
        .args(&["--start", "16", "--max-probes", "14", "-q"])
        // 16 users end ~155 streams a second: 7 s gets the 1,000 a p99 needs in one probe.
        .probes("7s")
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    let r = ran.json_of("capacity.schema.json");
    assert_eq!(r["capacity_users"].as_u64(), Some(16), "{text}");
    assert!(text.contains("sustains 16 concurrent users"), "{text}");
    assert!(text.contains("ttft p99 < 90.0 ms"), "{text}");
    // The probe that broke did so on the first token, not the gaps: a queue for the batch.
    let probes = r["probes"].as_array().unwrap();
    let broke = probes
        .iter()
        .find(|p| {
            p["level"].as_f64().unwrap() > 16.0
                && p["held"] == false
                && p["broke"] != serde_json::json!([])
        })
        .expect("a probe above 16 users that broke");
    let why = broke["broke"].to_string();
    assert!(why.contains("ttft p99"), "{why}");
    assert!(!why.contains("itl"), "{why}");
    let st = &broke["result"]["streams"];
    assert!(st["ttft_ms"]["p99"].as_f64().unwrap() > 90.0, "{st}");
    assert!(st["itl_ms"]["p99"].as_f64().unwrap() < 50.0, "{st}");
}

#[test]
fn compare_says_a_ttft_that_grew_regressed() {
    let _turn = one_at_a_time();
    let s = mock(&[BATCH]);
    let url = format!("http://{}/v1/chat/completions", s.local_addr());
    let dir = TempDir::new("sse-compare");
    // 16 users fit the batch; 32 wait for it: the first token comes a stream later.
    let run = |users: &str, name: &str| {
        let json = dir.path(name);
        Herd::new(&[
            "run", &url, "--sse", "llm", "-c", users, "-d", "4s", "-t", "1", "-q",
        ])
        .json(&json)
        .run()
        .measured();
        json
    };
    let (base, slow) = (run("16", "base.json"), run("32", "slow.json"));
    let out = run_herd(&["compare", base.to_str().unwrap(), slow.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    let verdict = text
        .lines()
        .find(|l| l.starts_with("REGRESSED"))
        .unwrap_or_else(|| panic!("no verdict line:\n{text}"));
    assert!(verdict.contains("ttft p99"), "{verdict}");
}

#[test]
fn a_sweep_stops_once_ttft_breaks_the_stop_rule_two_steps_in_a_row() {
    let _turn = one_at_a_time();
    let s = mock(&[BATCH]);
    let url = format!("http://{}/v1/chat/completions", s.local_addr());
    let dir = TempDir::new("sse-sweep-stop");
    let json = dir.path("s.json");
    // 8 and 16 users fit the batch (first token at 50 ms); 32 and 48 queue for it (a stream
    // later, ~150 ms); 64 never runs.
    let ran = Herd::new(&["sweep", &url, "--sse", "llm", "-c", "8,16,32,48,64"])
        .args(&["--stop", "ttft p99 < 90ms, itl p99 < 50ms"])
        .steps("3s")
        .json(&json)
        .run();
    let text = ran.code(0).stdout();
    let r = ran.json_of("sweep.schema.json");
    assert_eq!(r["config"]["stop"]["streams"][0]["of"], "ttft", "{text}");
    let steps = r["steps"].as_array().unwrap();
    let ttft = |s: &serde_json::Value| s["runs"][0]["streams"]["ttft_ms"]["p99"].as_f64().unwrap();
    for s in &steps[..2] {
        assert!(ttft(s) < 90.0, "{}: {text}", s["level"]);
    }
    // A step where herd itself was the bottleneck does not count (sweep/ends.rs): the sweep
    // stops right after the second counted step past the limit.
    let broke: Vec<usize> = steps
        .iter()
        .enumerate()
        .skip(2)
        .filter(|(_, s)| s["runs"][0]["generator"]["verdict"] == "ok")
        .map(|(i, _)| i)
        .collect();
    for s in &steps[2..] {
        assert!(ttft(s) > 90.0, "{}: {text}", s["level"]);
    }
    if broke.len() >= 2 {
        assert_eq!(steps.len(), broke[1] + 1, "{text}");
        let why = r["stopped_early"].as_str().unwrap();
        assert!(why.contains("ttft p99") && !why.contains("itl"), "{why}");
        assert!(
            text.contains("stopped early: every target broke the stop rule"),
            "{text}"
        );
    }
}
