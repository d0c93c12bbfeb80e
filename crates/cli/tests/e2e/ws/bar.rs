//! Issue 29's WebSocket bar: echo through nginx proxying the Upgrade to Python's websockets, N
//! sockets x 10 messages a second, every message answered and counted (herd's sent = its
//! replies = the server's own count), and the server stopped (SIGSTOP) for about a second in
//! the middle: the messages intended during the stop waited for it, so the replies' p99 from
//! their intended instant is most of the stop, as wrt2's stop-the-server experiment says.
//!
//! The CI size is 200 sockets for 6 s; `HERD_WS_BAR=full` plays the issue's 1,000 sockets for
//! 20 s (bench/RESULTS.md has its figures). The p99's tolerance leaves room for the drain:
//! after the stop the server answers the stalled second's messages (2,000 at CI size) as fast
//! as it can, which adds to the latencies of those behind them, never takes from them; so the
//! floor is tight (0.8 x stop) and the ceiling is the stop plus a second of drain.

use super::{all_answered, Echo};
use crate::common::*;
use std::time::{Duration, Instant};

#[test]
fn echo_behind_nginx_answers_every_message_and_a_server_stop_shows_in_the_p99() {
    let _turn = one_at_a_time();
    let full = std::env::var("HERD_WS_BAR").is_ok_and(|v| v == "full");
    let (sockets, seconds, stop_at) = if full { (1_000, 20, 8) } else { (200, 6, 2) };
    // At full size one Python process does not keep 10,000 messages a second with the drain
    // after a stop on this 2-core machine: two, behind nginx's upstream, share the sockets.
    let echoes: Vec<Echo> = (0..if full { 2 } else { 1 })
        .map(|_| Echo::start(0, 0))
        .collect();
    let servers: String = echoes
        .iter()
        .map(|e| format!("server 127.0.0.1:{};", e.port))
        .collect();
    let nginx = Nginx::start_configured(
        &format!("upstream echoes {{ {servers} }}"),
        r#"location /ws {
             proxy_pass http://echoes;
             proxy_http_version 1.1;
             proxy_set_header Upgrade $http_upgrade;
             proxy_set_header Connection "upgrade";
             proxy_read_timeout 60s;
           }"#,
        "",
    );
    let dir = TempDir::new("ws-bar");
    let json = dir.path("r.json");
    let url = nginx.url("/ws").replacen("http://", "ws://", 1);
    let child = Herd::new(&["run", &url, "--send", r#"{"op":"ping","id":"{{seq}}"}"#])
        .args(&["-c", &sockets.to_string(), "--message-rate", "10"])
        .args(&["-d", &format!("{seconds}s"), "--match", "id", "-q"])
        .args(&["-t", if full { "2" } else { "1" }, "--timeout", "10s"])
        .json(&json)
        .spawn();
    std::thread::sleep(Duration::from_secs(stop_at));
    let stopped = Instant::now();
    echoes.iter().for_each(|e| e.signal(SIGSTOP));
    std::thread::sleep(Duration::from_secs(1));
    echoes.iter().for_each(|e| e.signal(SIGCONT));
    let stop = stopped.elapsed().as_secs_f64() * 1000.0;
    let out = child.wait_with_output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 4)),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let r = read_json(&json);
    assert_matches_schema("result.schema.json", &r);
    let sent = all_answered(&r);
    assert_eq!(sent, sockets * 10 * seconds, "{}", r["totals"]);
    let counted: u64 = echoes.iter().map(Echo::count).sum();
    assert_eq!(counted, sent, "the servers' own count");
    assert_eq!(r["generator"]["connections_opened"], sockets);
    let lat = &r["latency_ms"];
    let p99 = lat["p99"].as_f64().unwrap();
    assert!(
        p99 >= 0.8 * stop && p99 <= stop + 1_000.0,
        "reply p99 {p99:.0} ms for a stop of {stop:.0} ms: {lat}"
    );
    // Most messages were neither in the stop nor in its drain.
    assert!(lat["p50"].as_f64().unwrap() < 0.25 * stop, "{lat}");
    eprintln!(
        "ws bar: {sockets} sockets x 10 msg/s x {seconds} s: {sent} sent, answered and counted \
         by the server; stop {stop:.0} ms; reply p50 {} ms, p99 {p99:.0} ms, max {} ms",
        lat["p50"], lat["max"]
    );
}
