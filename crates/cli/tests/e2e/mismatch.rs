//! A protocol mismatch stops the run after the first connection proves it (exit 2, the whole
//! advice printed, nothing more sent): `--http2` against a server that speaks only HTTP/1.1,
//! over TLS (ALPN) and over plain TCP (h2c), and `https://` to a plain HTTP port. Counted in
//! nginx's own access log, which logs each connection's rejected request.

use crate::common::*;
use std::time::{Duration, Instant};

/// nginx with `listen_extra` on its `listen` line, its access log in `requests.log`.
fn logged_nginx(server_extra: &str, listen_extra: &str) -> Nginx {
    Nginx::start_configured(
        "",
        &format!("access_log requests.log; {server_extra}"),
        listen_extra,
    )
}

fn logged(nginx: &Nginx) -> usize {
    std::fs::read_to_string(nginx.dir.path("requests.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// Runs herd for up to 30 s (`-d`) with four connections; it must stop long before.
fn stopped_early(args: &[&str], url: &str) -> (Ran, Duration) {
    let t0 = Instant::now();
    let ran = Herd::new(&["run", "-c", "4", "-t", "1", "-d", "30s"])
        .args(args)
        .args(&[url])
        .run();
    (ran, t0.elapsed())
}

fn assert_stopped(ran: &Ran, took: Duration, advice: &[&str]) {
    ran.code(2);
    let err = ran.stderr();
    for a in advice {
        assert!(err.contains(a), "should say {a:?}:\n{err}");
    }
    assert!(
        took < Duration::from_secs(10),
        "a 30 s run stopped at the first proof, not after {took:?}"
    );
}

#[test]
fn http2_against_an_http1_only_server_stops_at_the_first_connection() {
    let _turn = one_at_a_time();
    // h2c: nginx without http2 on this port answers the preface with an HTTP/1.1 400.
    let plain = logged_nginx("", "");
    let (ran, took) = stopped_early(&["--http2"], &plain.url("/"));
    assert_stopped(
        &ran,
        took,
        &[
            "the server speaks HTTP/1.1 on this port, not HTTP/2 over plain TCP (h2c)",
            "HTTP/1.1 400 Bad Request",
            "run without --http2, or enable h2c on the server (nginx: `listen ... http2;`), or \
             use https:// where it offers HTTP/2 by ALPN",
        ],
    );
    assert!(
        !ran.stderr().contains("unexpected data"),
        "nghttp2's words are replaced:\n{}",
        ran.stderr()
    );
    let n = logged(&plain);
    assert!(
        (1..=4).contains(&n),
        "at most the 4 connections opened at once were sent anything: nginx logged {n}"
    );

    // TLS: the server chose http/1.1 by ALPN.
    let dir = TempDir::new("mismatch-alpn");
    let tls = logged_nginx(&nginx_tls(&dir, ""), "ssl");
    let url = format!("https://{}/", tls.addr);
    let (ran, took) = stopped_early(&["--http2", "-k"], &url);
    assert_stopped(
        &ran,
        took,
        &[
            "did not agree to HTTP/2 by ALPN (it chose http/1.1)",
            "run without --http2, or enable HTTP/2 on the server (nginx: `listen ... ssl http2;` \
             or `http2 on;`)",
        ],
    );
    assert_eq!(logged(&tls), 0, "no request went to an HTTP/1.1 server");
}

#[test]
fn https_to_a_plain_http_port_stops_at_the_first_handshake() {
    let _turn = one_at_a_time();
    let plain = logged_nginx("", "");
    let url = format!("https://{}/", plain.addr);
    let (ran, took) = stopped_early(&["-k"], &url);
    assert_stopped(
        &ran,
        took,
        &[&format!(
            "https://: the server at {} answered in plain HTTP, not TLS: use http:// instead of \
             https://, or the port that serves TLS",
            plain.addr
        )],
    );
    let n = logged(&plain);
    assert!(
        n <= 4,
        "at most the 4 connections opened at once made a handshake: nginx logged {n}"
    );
}
