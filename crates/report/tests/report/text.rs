use crate::fixture;
use herd_report::render_text;
use herd_result::{GeneratorVerdict, Model, RunResult};

fn render(r: &RunResult) -> String {
    let mut s = String::new();
    render_text(r, &mut s).unwrap();
    s
}

fn assert_has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "missing {p:?} in\n{text}");
    }
}

#[test]
fn summary_shows_what_users_look_for() {
    let text = render(&fixture::result());
    println!("{text}");
    assert_has(
        &text,
        &[
            "herd run http://127.0.0.1:8080/  open model at 50.0 req/s, 4 connections, 1 thread, 2.50 s",
            "warm-up    1.00 s, 42 requests",
            "requests   110 scheduled   100 completed (90 ok, 10 failed)   5 errors   5 dropped",
            "throughput 40.0 req/s   net I/O 28.0 KB/s in, 4.00 KB/s out",
            "min 1.00 ms",
            "(responses, from the intended send time)",
            "p50 50.0 ms",
            "p90 90.0 ms",
            "p99 100 ms",
            "p99.9 100 ms",
            "error time p50 1.00 ms  p99 5.00 s  max 5.00 s   (5 requests without a response; not in latency)",
            "service    p50 ",
            "(from the actual send)",
            "connect    p50 200 us",
            "(4 connections)",
            "responses  min 612 B  mean 612 B  max 612 B   status 200: 90 503: 10",
            "errors     reset 3 (\"Connection reset by peer (os error 104)\")  timeout 2",
            "generator  cpu 30.0% (user 500 ms, sys 250 ms)  send lag p99 210 us  verdict: ok",
        ],
    );
    assert!(
        !text.contains("INTERRUPTED") && !text.contains("GENERATOR-LIMITED"),
        "{text}"
    );
}

#[test]
fn closed_model_header_names_it() {
    let mut r = fixture::result();
    r.config = fixture::config(Model::Closed);
    r.config.requests = Some(1_000);
    let text = render(&r);
    assert_has(
        &text,
        &["closed model, 4 connections, 1 thread, 1,000 requests, 2.50 s"],
    );
}

#[test]
fn interruption_and_a_limited_generator_are_shouted() {
    let mut r = fixture::result();
    r.interrupted = true;
    r.generator.verdict = GeneratorVerdict::GeneratorLimited;
    r.generator.reasons = vec![
        "cpu 99% of one core".to_owned(),
        "send lag p99 12 ms".to_owned(),
    ];
    let text = render(&r);
    assert_has(
        &text,
        &[
            "INTERRUPTED after 2.50 s",
            "verdict: generator-limited",
            "GENERATOR-LIMITED: cpu 99% of one core; send lag p99 12 ms",
        ],
    );
}

#[test]
fn ctrl_c_in_the_warmup_says_nothing_was_measured() {
    let mut r = fixture::result();
    r.interrupted = true;
    r.config.warmup_s = 30.0;
    r.warmup.duration_s = 1.5;
    let text = render(&r);
    assert_has(
        &text,
        &["INTERRUPTED during the warm-up, after 1.50 s of 30.0 s: nothing was measured"],
    );
    assert!(!text.contains("INTERRUPTED after"), "{text}");
}

#[test]
fn an_empty_run_says_so_instead_of_printing_zeros() {
    let text = render(&fixture::empty_result());
    println!("{text}");
    assert_has(
        &text,
        &[
            "latency    no responses",
            "service    no responses",
            "responses  none",
        ],
    );
    for absent in ["  warm-up", "  errors", "  connect"] {
        assert!(
            !text.lines().any(|l| l.starts_with(absent)),
            "{absent:?} in\n{text}"
        );
    }
}

#[test]
fn a_run_that_was_only_refused_says_nothing_listens() {
    let mut r = fixture::empty_result();
    r.totals.scheduled = 500;
    r.totals.errors = 500;
    r.errors.insert("connect_refused".to_owned(), 500);
    let text = render(&r);
    assert!(
        text.contains("NOTHING LISTENS: every connection to "),
        "{text}"
    );
    // Some answers, or other errors besides: the numbers speak for themselves.
    r.errors.insert("timeout".to_owned(), 1);
    r.totals.errors = 501;
    assert!(!render(&r).contains("NOTHING LISTENS"));
    let text = render(&fixture::result());
    assert!(!text.contains("NOTHING LISTENS"));
}

#[test]
fn long_error_samples_are_shortened() {
    let mut r = fixture::result();
    r.error_samples.insert("reset".to_owned(), "x".repeat(500));
    let text = render(&r);
    assert!(text.contains(&format!("{}…", "x".repeat(80))), "{text}");
    assert!(!text.contains(&"x".repeat(81)));
}

#[test]
fn phases_are_one_line_each_with_p50_and_p99_and_http2_says_streams() {
    let mut r = fixture::result();
    let ms = |count, p50, p99| herd_result::Summary {
        count,
        p50,
        p99,
        ..Default::default()
    };
    r.phases = Some(herd_result::Phases {
        dns_ms: Some(herd_result::Summary {
            max: 1.25,
            ..ms(1, 1.25, 1.25)
        }),
        tls_ms: ms(4, 8.0, 9.5),
        blocked_ms: ms(0, 0.0, 0.0),
        waiting_ms: ms(90, 1.5, 4.0),
        receiving_ms: ms(90, 0.02, 0.1),
    });
    r.config.streams = Some(10);
    let text = render(&r);
    assert_has(
        &text,
        &[
            "4 connections x 10 streams, 1 thread",
            "phases     dns        1.25 ms                       (the name looked up once, before the first request)",
            "           tls        p50 8.00 ms    p99 9.50 ms    (4 connections)",
            "           waiting    p50 1.50 ms    p99 4.00 ms    (90 requests)",
            "           receiving  p50 20.0 us    p99 100 us     (90 requests)",
        ],
    );
    assert!(
        !text.contains("blocked"),
        "a phase that never happened is left out:\n{text}"
    );
}

#[test]
fn counts_in_the_wire_lines_keep_their_thousands_separators() {
    let mut r = fixture::result();
    let times = |count| herd_result::HandshakeTimes {
        count,
        mean_ms: 2.0,
        max_ms: 3.0,
        total_ms: 2.0 * count as f64,
    };
    r.generator.protocols = vec![herd_result::ProtocolUse {
        protocol: "h2".into(),
        connections: 1_065,
        requests: 12_345,
        handshakes: Some(herd_result::Handshakes {
            full: times(1_065),
            resumed: times(2_000),
            early_data_accepted: 1_500,
            early_data_rejected: 1_200,
        }),
    }];
    let text = render(&r);
    assert_has(
        &text,
        &[
            "h2 1,065 connections, 12,345 streams (handshakes: 1,065 full 2.00 ms, 2,000 resumed \
             2.00 ms, 1,500 in 0-RTT, 1,200 0-RTT refused)",
        ],
    );
}

#[test]
fn a_check_that_never_ran_says_so_instead_of_ok() {
    let mut r = fixture::result();
    r.checks = vec![
        herd_result::CheckResult {
            name: "status is 200".into(),
            passes: 1_500,
            fails: 0,
            sample: None,
        },
        herd_result::CheckResult {
            name: "has a token".into(),
            passes: 0,
            fails: 0,
            sample: None,
        },
    ];
    let text = render(&r);
    assert_has(
        &text,
        &[
            "check ok   status is 200: 1,500 passed, 0 failed",
            "check --   has a token: never ran (no response reached it)",
        ],
    );
    assert!(!text.contains("has a token: 0 passed"), "{text}");
}

#[test]
fn a_sweep_step_with_no_response_shows_no_latency() {
    use herd_result::sweep::{Extra, Row};
    let row = |ok| Row {
        req_rate: 100.0,
        con_rate: 100.0,
        min_rep_rate: 0.0,
        avg_rep_rate: 0.0,
        max_rep_rate: 0.0,
        stddev_rep_rate: 0.0,
        resp_time: 0.0,
        net_io: 0.0,
        errors: 100.0,
        extra: Some(Extra {
            p50: 0.0,
            p95: 0.0,
            p99: 0.0,
            p999: 0.0,
            ok,
            failed: 0,
            generator: GeneratorVerdict::Ok,
        }),
    };
    let none = herd_report::series_text::sweep_line(100.0, None, &row(0), false);
    assert!(!none.contains(" us"), "{none}");
    let cells: Vec<&str> = none.split_whitespace().collect();
    assert_eq!(cells.iter().filter(|c| **c == "-").count(), 3, "{none}");
    let some = herd_report::series_text::sweep_line(100.0, None, &row(10), false);
    assert!(some.contains("0 us"), "{some}");
}

#[test]
fn a_probe_with_no_response_shows_no_p99() {
    use herd_report::series_text::{probe_line, ProbeLine};
    let line = |p99_ms| {
        probe_line(&ProbeLine {
            n: 1,
            purpose: herd_result::capacity::Purpose::Ramp,
            level: "100 req/s",
            duration_s: 5.0,
            goodput: 0.0,
            error_percent: 100.0,
            p99_ms,
            verdict: "broke: errors 100%",
        })
    };
    let none = line(None);
    assert!(!none.contains(" us"), "{none}");
    assert!(none.split_whitespace().any(|c| c == "-"), "{none}");
    assert!(line(Some(1.5)).contains("1.50 ms"));
}

#[test]
fn a_websocket_run_counts_messages_and_their_replies_have_no_status() {
    let mut r = fixture::result();
    r.config = fixture::config(Model::Closed);
    r.config.url = "ws://127.0.0.1:8080/chat".into();
    r.target = r.config.url.clone();
    r.config.requests = Some(2_000);
    // What a WebSocket run records: the replies under no status, the Upgrades refused by theirs.
    r.status = [("403".to_owned(), 3)].into();
    r.phases = Some(herd_result::Phases {
        dns_ms: None,
        tls_ms: herd_result::Summary::default(),
        blocked_ms: herd_result::Summary::default(),
        waiting_ms: herd_result::Summary {
            count: 90,
            p50: 1.5,
            p99: 4.0,
            ..Default::default()
        },
        receiving_ms: herd_result::Summary::default(),
    });
    r.generator.protocols = vec![herd_result::ProtocolUse {
        protocol: "websocket".into(),
        connections: 4,
        requests: 1_990,
        handshakes: None,
    }];
    let text = render(&r);
    assert_has(
        &text,
        &[
            "closed model, 4 connections, 1 thread, 2,000 messages, 2.50 s",
            "warm-up    1.00 s, 42 messages",
            "messages   110 scheduled   100 completed",
            "throughput 40.0 msg/s",
            "(replies, from the intended send time)",
            "protocol   websocket 4 connections, 1,990 messages",
            "waiting    p50 1.50 ms    p99 4.00 ms    (90 messages)",
            "replies    min 612 B  mean 612 B  max 612 B   refused Upgrades' status 403: 3",
        ],
    );
    for said in ["requests", "req/s", "responses", "status 101"] {
        assert!(!text.contains(said), "{said:?} in\n{text}");
    }
}

#[test]
fn naps_are_told_on_the_generator_line_only_when_the_loop_napped() {
    let mut r = fixture::result();
    r.generator.naps = Some(herd_result::Naps {
        windows: 3_000,
        napping: 2_980,
        longest_us: 50,
    });
    assert_has(
        &render(&r),
        &["napped in 2,980 of 3,000 tenths of a second (naps up to 50 us: a response read up to that much later)"],
    );
    r.generator.naps = Some(herd_result::Naps {
        windows: 3_000,
        napping: 0,
        longest_us: 0,
    });
    assert!(!render(&r).contains("napped"));
}
