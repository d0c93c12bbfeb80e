//! The other ways a search ends: herd itself the bottleneck (no number), an SLO no rate meets
//! (its own outcome), Ctrl-C between probes; bad input and a mistyped output path refused
//! before the first request.

use crate::common::*;

#[test]
fn capacity_says_it_cannot_decide_when_herd_is_the_bottleneck() {
    let _turn = one_at_a_time();
    // Fifty million requests per second from one thread: herd cannot even hand out arrivals
    // that fast, so whatever it measured is herd, and no number may be printed.
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-limited");
    let json = dir.path("c.json");
    let ran = Herd::new(&["capacity", &url, "--slo", "errors<1%"])
        .args(&["--start", "50000000", "--max", "50000000"])
        .probes("100ms")
        .args(&["--max-connections", "1000", "-q"])
        .json(&json)
        .run();
    let text = ran.code(4).stdout();
    assert!(text.contains("cannot decide the capacity"), "{text}");
    assert!(text.contains("herd itself was the bottleneck"), "{text}");
    assert!(!text.contains("sustains"), "{text}");
    let r = ran.json_of("capacity.schema.json");
    assert!(r["capacity_rps"].is_null());
    assert_eq!(r["undecided"]["reason"], "generator-limited");
    assert_eq!(
        r["probes"].as_array().unwrap().len(),
        3,
        "probed twice more, then gave up"
    );
    let page = html_report(&json);
    assert!(page.contains(">NO ANSWER: HERD WAS THE BOTTLENECK<"));
    assert!(page.contains("3 probes limited by herd, run again"));
    server.shutdown();
}

#[test]
fn an_slo_no_rate_meets_is_its_own_outcome_not_noise() {
    let _turn = one_at_a_time();
    // p99 < 1 us: no response on earth is that fast, at any rate.
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-unmet");
    let json = dir.path("c.json");
    let ran = Herd::new(&["capacity", &url, "--slo", "p99<1us", "--start", "2"])
        .probes("1s")
        .args(&["-q"])
        .json(&json)
        .run();
    let text = ran.code(8).stdout();
    assert!(
        text.contains("does not meet the SLO (p99 < 1.00 us) at any rate tried (lowest probe 1.00 req/s: p99 "),
        "{text}"
    );
    let r = ran.json_of("capacity.schema.json");
    assert_eq!(r["outcome"], "unmet");
    assert!(r["undecided"].is_null());
    // Every verdict rests on at least ten responses past the limit.
    for p in r["probes"].as_array().unwrap() {
        let n = p["result"]["latency_ms"]["count"].as_u64().unwrap();
        if p["too_few"].is_null() {
            assert!(n >= 10, "a probe judged on {n} responses: {text}");
        }
    }
    server.shutdown();
}

#[test]
fn ctrl_c_in_the_cooldown_between_probes_is_an_interrupt() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-sigint");
    let json = dir.path("c.json");
    // Read until the first probe's line: herd then sits in the ten-minute cooldown.
    let (child, rx, _) = Herd::new(&["capacity", &url, "--slo", "errors<5%", "--start", "500"])
        .args(&[
            "--probe-duration",
            "500ms",
            "--cooldown",
            "10m",
            "-t",
            "1",
            "-q",
        ])
        .json(&json)
        .spawn_until(|l| l.contains("ramp"));
    let r = interrupt_series(child, rx, &json, "capacity.schema.json");
    assert_eq!(
        r["probes"].as_array().unwrap().len(),
        1,
        "the probe done is kept"
    );
    server.shutdown();
}

#[test]
fn capacity_refuses_bad_input_before_sending() {
    let url = "http://127.0.0.1:1/";
    let cases: &[(&[&str], &str)] = &[
        (&["capacity", url, "--slo", "p98<1ms"], "`p98<1ms`"),
        (
            &["capacity", url, "--slo", "p99<100, errors<5"],
            "column 5: in `p99<100`: `100` is not a duration (a bare number has no unit)",
        ),
        (
            &[
                "capacity",
                url,
                "--slo",
                "errors<1%",
                "--start",
                "10",
                "--max",
                "5",
            ],
            "--start",
        ),
        (&["capacity", "ftp://x/", "--slo", "errors<1%"], "scheme"),
    ];
    for (args, want) in cases {
        refused(args, want);
    }
}

#[test]
fn capacity_refuses_a_mistyped_output_directory_before_the_first_request() {
    let _turn = one_at_a_time();
    let server = mock(&[]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-outputs");
    let json = dir.path("no-such-dir/c.json");
    Herd::new(&["capacity", &url, "--slo", "errors<1%"])
        .args(&["--probe-duration", "10m"])
        .json(&json)
        .run()
        .refused_path(&json);
    assert_eq!(server.stats().requests, 0, "nothing was sent");
    server.shutdown();
}

#[test]
fn capacity_where_nothing_listens_says_so_at_once_and_exits_6() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let started = std::time::Instant::now();
    let ran = Herd::new(&["capacity", &url, "--slo", "errors<1%"]).run();
    let text = ran.code(6).stdout();
    assert!(text.contains("NOTHING LISTENS"), "{text}");
    assert!(!text.contains("too few"), "{text}");
    // It once probed for 22 s before saying "0 of 0 requests".
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn capacity_against_a_server_holding_every_allowed_connection_blames_the_server() {
    let _turn = one_at_a_time();
    // Four connections of 5 ms carry at most 800 req/s: beyond, arrivals wait for connections
    // the server holds. It once said "herd itself was the bottleneck" (exit 4) and advised -c,
    // which capacity does not accept.
    let server = mock(&["/* latency=fixed:5ms"]);
    let url = format!("http://{}/", server.local_addr());
    let dir = TempDir::new("capacity-held");
    let json = dir.path("c.json");
    let ran = Herd::new(&["capacity", &url, "--slo", "errors<5%", "--start", "400"])
        .probes("500ms")
        .args(&["--max-connections", "4", "--max-probes", "5", "-q"])
        .json(&json)
        .run();
    let text = ran.stdout();
    let r = ran.json_of("capacity.schema.json");
    for p in r["probes"].as_array().unwrap() {
        let reasons = p["result"]["generator"]["reasons"].to_string();
        assert!(!reasons.contains("never sent"), "{reasons}");
    }
    assert!(!text.contains("-c "), "{text}");
    assert!(!text.contains("raise -c"), "{text}");
    let broke = r["probes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["held"] == false);
    assert!(broke, "past 800 req/s the SLO breaks: {text}");
    server.shutdown();
}
