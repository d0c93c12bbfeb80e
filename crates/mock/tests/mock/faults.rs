//! Latency and injected failures: each fault looks to a client like what it is named after,
//! and seeded error rates repeat exactly.

use std::io::ErrorKind;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::common::{serve, serve_seeded, Client, TIMEOUT};
use herd_mock::Server;

/// Shuts the server down on another thread and fails the test if that takes too long.
fn shutdown_within_timeout(server: Server) {
    let (done, finished) = mpsc::channel();
    thread::spawn(move || done.send(server.shutdown()).unwrap());
    finished
        .recv_timeout(TIMEOUT)
        .expect("shutdown did not finish");
}

#[test]
fn reset_fault_makes_the_read_fail_with_connection_reset() {
    let server = serve(&["/r fault=reset"]);
    let mut client = Client::connect(server.local_addr());
    client.send_get("/r", "");
    let err = client.try_response(false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
}

#[test]
fn close_fault_gives_end_of_file_without_a_byte() {
    let server = serve(&["/c fault=close"]);
    let mut client = Client::connect(server.local_addr());
    client.send_get("/c", "");
    assert_eq!(client.read_to_end().unwrap(), b"");
}

#[test]
fn garbage_fault_sends_bytes_that_are_not_http() {
    let server = serve(&["/g fault=garbage"]);
    let mut client = Client::connect(server.local_addr());
    client.send_get("/g", "");
    let bytes = client.read_to_end().unwrap();
    assert!(!bytes.is_empty());
    let mut headers = [httparse::EMPTY_HEADER; 8];
    assert!(
        httparse::Response::new(&mut headers).parse(&bytes).is_err(),
        "{bytes:?}"
    );
}

#[test]
fn truncate_fault_sends_less_body_than_content_length_then_closes() {
    let server = serve(&["/t size=1000 fault=truncate"]);
    let mut client = Client::connect(server.local_addr());
    client.send_get("/t", "");
    let bytes = client.read_to_end().unwrap();
    let mut headers = [httparse::EMPTY_HEADER; 8];
    let mut response = httparse::Response::new(&mut headers);
    let head = response.parse(&bytes).unwrap().unwrap();
    let declared: usize = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .map(|h| std::str::from_utf8(h.value).unwrap().parse().unwrap())
        .unwrap();
    assert_eq!(declared, 1000);
    assert_eq!(bytes.len() - head, 500);
}

#[test]
fn stall_fault_never_answers_and_does_not_block_shutdown() {
    let server = serve(&["/s fault=stall"]);
    let mut client = Client::connect(server.local_addr());
    client.send_get("/s", "");
    client
        .stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let err = client.try_response(false).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{err}"
    );
    shutdown_within_timeout(server);
    client.stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    assert_eq!(
        client.read_to_end().unwrap(),
        b"",
        "shutdown closes the stalled connection"
    );
}

#[test]
fn error_rate_without_fault_answers_500_and_a_seed_repeats_the_mix() {
    let statuses = |seed| {
        let server = serve_seeded(&["/e error-rate=0.5"], seed);
        let mut client = Client::connect(server.local_addr());
        let statuses: Vec<u16> = (0..200).map(|_| client.get("/e").status).collect();
        let failed = statuses.iter().filter(|&&s| s == 500).count() as u64;
        assert_eq!(server.shutdown().injected, failed);
        statuses
    };
    let first = statuses(42);
    assert!(first.iter().all(|&s| s == 200 || s == 500));
    let failed = first.iter().filter(|&&s| s == 500).count();
    assert!(
        (60..=140).contains(&failed),
        "{failed} of 200 failed at rate 0.5"
    );
    assert_eq!(statuses(42), first, "same seed, same sequence");
    assert_ne!(statuses(43), first, "another seed, another sequence");
}

#[test]
fn fault_rate_is_seeded_across_reconnections() {
    let outcomes = |seed| {
        let server = serve_seeded(&["/f error-rate=0.3 fault=close"], seed);
        let mut client = Client::connect(server.local_addr());
        let mut outcomes = Vec::new();
        for _ in 0..50 {
            client.send_get("/f", "");
            match client.try_response(false).unwrap() {
                Some(response) => outcomes.push(response.status),
                None => {
                    outcomes.push(0);
                    client = Client::connect(server.local_addr());
                }
            }
        }
        outcomes
    };
    let first = outcomes(7);
    assert!(first.contains(&0) && first.contains(&200), "{first:?}");
    assert_eq!(outcomes(7), first);
}

#[test]
fn fixed_latency_delays_the_answer_at_least_that_long() {
    let server = serve(&["/slow latency=50ms"]);
    let mut client = Client::connect(server.local_addr());
    for _ in 0..3 {
        let sent = Instant::now();
        assert_eq!(client.get("/slow").status, 200);
        assert!(
            sent.elapsed() >= Duration::from_millis(50),
            "{:?}",
            sent.elapsed()
        );
    }
}

#[test]
fn a_delayed_answer_does_not_hold_up_other_connections_or_earlier_answers() {
    // One thread, so the slow and fast requests share an event loop: a sleeping thread
    // would answer nothing until the minute is over.
    let server = serve(&["/slow latency=60s", "/fast"]);
    let mut slow = Client::connect(server.local_addr());
    slow.send(b"GET /fast?first HTTP/1.1\r\n\r\nGET /slow HTTP/1.1\r\n\r\n");
    assert_eq!(
        slow.response().status,
        200,
        "the answer pipelined before the slow one is not held back"
    );
    let mut fast = Client::connect(server.local_addr());
    assert_eq!(fast.get("/fast").status, 200);
    shutdown_within_timeout(server);
}

#[test]
fn close_after_answers_n_then_closes_under_the_next_request_without_a_word() {
    let server = serve(&["/* close-after=2"]);
    let mut client = Client::connect(server.local_addr());
    for _ in 0..2 {
        let r = client.get("/");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("connection"), None, "the close is not announced");
    }
    client.send_get("/", "");
    assert_eq!(client.read_to_end().unwrap(), b"");
}
