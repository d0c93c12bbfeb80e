//! The generator's verdict on itself, both ways: an impossible schedule is called out (exit 4,
//! with the reason), a modest run is not (exit 0). Everything is still printed and saved.

use crate::common::*;
use herd_mock::{Config, Server};

#[test]
fn an_impossible_rate_on_one_thread_is_generator_limited_and_exits_4() {
    // The impossible run pegs every core; the modest run must not share the machine with it, or
    // it would rightly be judged late.
    let _turn = one_at_a_time();
    let s = Server::start(Config {
        threads: 1,
        ..Config::default()
    })
    .unwrap();
    let dir = TempDir::new("impossible");
    let json = dir.path("r.json");
    let url = format!("http://{}/", s.local_addr());
    // A thousand connections for herd to hand arrivals to: it falls behind its own schedule.
    // (With a cap of 20 the arrivals would wait for connections the server holds: that is the
    // server's saturation, never herd's.)
    let ran = Herd::new(&[
        "run", "-t", "1", "--rate", "5000000", "-c", "1000", "-d", "2s",
    ])
    .args(&["-q", &url])
    .json(&json)
    .run();
    let r = ran.code(4).json();
    assert_eq!(r["generator"]["verdict"], "generator-limited");
    let reasons = r["generator"]["reasons"].to_string();
    assert!(
        reasons.contains("send lag") || reasons.contains("% busy"),
        "{reasons}"
    );
    assert!(
        r["totals"]["ok"].as_u64().unwrap() > 0,
        "what was measured is still saved"
    );
    let text = ran.stdout();
    assert!(text.contains("GENERATOR-LIMITED"), "{text}");
}

#[test]
fn a_modest_run_is_not_a_false_alarm_and_samples_every_second() {
    let _turn = one_at_a_time();
    let s = Server::start(Config {
        threads: 1,
        ..Config::default()
    })
    .unwrap();
    let dir = TempDir::new("modest");
    let json = dir.path("r.json");
    let url = format!("http://{}/", s.local_addr());
    let ran = Herd::new(&["run", "-t", "2", "--rate", "200", "-d", "3s", "-q", &url])
        .json(&json)
        .run();
    let r = ran.code(0).json();
    let g = &r["generator"];
    assert_eq!(g["verdict"], "ok", "{g}");
    assert_eq!(g["reasons"].as_array().unwrap().len(), 0);
    let timeline = g["timeline"]
        .as_array()
        .expect("per-second generator samples");
    assert!(timeline.len() >= 2, "{timeline:?}");
    assert_eq!(
        timeline[0]["cpu_percent"].as_array().unwrap().len(),
        2,
        "one figure per worker thread"
    );
    assert!(g["fds_peak"].as_u64().unwrap() >= 3);
    assert!(
        g["fd_limit"].as_u64().unwrap() > 1000,
        "raised to the hard limit"
    );
}

#[test]
fn a_short_run_with_a_thousand_connections_reports_a_thousand_descriptors_at_peak() {
    let _turn = one_at_a_time();
    // 1,000 arrivals in half a second, each held 800 ms by the server: 1,000 connections open
    // at once, between two of the once-a-second samples. It reported "fds 12 of 20,000".
    let server = mock(&["/* latency=fixed:800ms"]);
    let dir = TempDir::new("fds-peak");
    let json = dir.path("r.json");
    let url = format!("http://{}/", server.local_addr());
    let ran = Herd::new(&[
        "run", "--rate", "2000", "-c", "1000", "-d", "500ms", "-q", &url,
    ])
    .json(&json)
    .run();
    let r = ran.json();
    let peak_conns = r["generator"]["peak_connections"].as_u64().unwrap();
    assert!(peak_conns >= 900, "{}", r["generator"]);
    let fds = r["generator"]["fds_peak"].as_u64().unwrap();
    assert!(
        fds >= peak_conns,
        "fds {fds} at peak for {peak_conns} connections"
    );
    server.shutdown();
}
