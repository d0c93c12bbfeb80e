//! The batches of new streams, against nghttp2's own server session in memory: what one
//! write of the client carries is what the server reads in one go.

use super::H2;
use herd_engine::{Note, Parts, Request, Session, Ticket};
use herd_h2::{Event, ServerSession, Settings};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn get() -> Request {
    let mut req = Request::new(&b"GET / HTTP/1.1\r\nHost: mock.test\r\n\r\n"[..]);
    req.parts = Some(Arc::new(Parts {
        method: "GET".into(),
        scheme: "http".into(),
        authority: "mock.test".into(),
        path: "/".into(),
        ..Parts::default()
    }));
    req
}

fn ticket(slot: u32) -> Ticket {
    Ticket {
        slot,
        generation: 0,
    }
}

/// Moves the client's frames to the server: the stream ids of the requests it read.
fn deliver(client: &mut H2, server: &mut ServerSession) -> Vec<i32> {
    let mut wire = Vec::new();
    client.h2.send(&mut wire).unwrap();
    server.recv(&wire).unwrap();
    server
        .events()
        .events
        .filter_map(|e| match e {
            Event::Request { stream_id, .. } => Some(stream_id),
            _ => None,
        })
        .collect()
}

/// The server answers `streams`; the client reads the answers in one read.
fn answer(client: &mut H2, server: &mut ServerSession, streams: &[i32], now: Instant) -> usize {
    for &s in streams {
        server.respond(s, 200, &[], b"hello").unwrap();
    }
    let mut wire = Vec::new();
    server.send(&mut wire).unwrap();
    client.h2.recv(&wire).unwrap();
    let mut notes = Vec::new();
    client.settle(now, &mut notes);
    notes
        .iter()
        .filter(|n| matches!(n, Note::Response(..)))
        .count()
}

/// A connection of 10 streams refilled in batches, its first ten requests open at `now`
/// (nothing was open: they went at once): the client, the server and the streams it read.
fn opened(now: Instant) -> (H2, ServerSession, Vec<i32>) {
    let mut client = H2::new(&Settings::default(), 10, now, false);
    client.refill_in_batches();
    let mut server = ServerSession::new(&Settings::default()).unwrap();
    let req = get();
    for slot in 0..10 {
        client.submit(ticket(slot), &req, false);
    }
    assert!(client.due(now));
    client.release(now);
    let first = deliver(&mut client, &mut server);
    assert_eq!(first.len(), 10);
    (client, server, first)
}

#[test]
fn streams_answered_in_two_reads_are_opened_again_in_one_write() {
    let now = Instant::now();
    let (mut client, mut server, first) = opened(now);
    let req = get();

    // Three answers in one read, their users send again: they wait for their batch.
    assert_eq!(answer(&mut client, &mut server, &first[..3], now), 3);
    for slot in 10..13 {
        client.submit(ticket(slot), &req, false);
    }
    assert!(!client.due(now), "three of ten wait while seven are open");
    assert!(deliver(&mut client, &mut server).is_empty());
    // They would not wait past a millisecond (a slow server's next answer may be far off).
    assert!(client.due(now + Duration::from_millis(1)));

    // Two more: half the window waits, and the five open together, in one write.
    assert_eq!(answer(&mut client, &mut server, &first[3..5], now), 2);
    for slot in 13..15 {
        client.submit(ticket(slot), &req, false);
    }
    assert!(client.due(now));
    client.release(now);
    assert_eq!(deliver(&mut client, &mut server).len(), 5);
    assert_eq!(client.in_flight(), 10);
}

/// A connection of 10 streams, one answered and its user's next request waiting for its batch
/// from `now` on.
fn holding(now: Instant) -> H2 {
    let (mut client, mut server, first) = opened(now);
    assert_eq!(answer(&mut client, &mut server, &first[..1], now), 1);
    client.submit(ticket(10), &get(), false);
    assert!(!client.due(now), "one of ten waits while nine are open");
    client
}

#[test]
fn holds_begun_apart_end_together_so_the_loop_sets_its_alarm_once() {
    // Each hold's own end (`now + 1 ms`) set the loop's alarm again once per 13 requests (h2c
    // 10 x 10 against nginx: 1.14x the CPU per request); on a shared grid of half a
    // millisecond the holds of all connections end on the same instants.
    // The grid begins at the process's first hold (maybe another test's): begun before these.
    holding(Instant::now());
    let t0 = Instant::now();
    let ends: Vec<Instant> = [0, 90, 230, 410]
        .iter()
        .map(|&us| holding(t0 + Duration::from_micros(us)).wake_at().unwrap())
        .collect();
    let distinct: std::collections::BTreeSet<_> = ends.iter().collect();
    assert!(
        distinct.len() <= 2,
        "{} ends for 4 holds within half a millisecond",
        distinct.len()
    );
    for (&us, &end) in [0u64, 90, 230, 410].iter().zip(&ends) {
        let held = end - (t0 + Duration::from_micros(us));
        assert!(
            held >= Duration::from_micros(500) && held <= Duration::from_millis(1),
            "a hold of {held:?}"
        );
    }
    // The hold ends at that instant, not before.
    let begun = t0 + Duration::from_micros(90);
    let mut c = holding(begun);
    let end = c.wake_at().unwrap();
    assert!(!c.due(end - Duration::from_nanos(1)));
    assert!(c.due(end));
}

#[test]
fn without_batches_each_stream_opens_as_it_is_submitted() {
    // The open model: an arrival's stream opens when it is due.
    let now = Instant::now();
    let mut client = H2::new(&Settings::default(), 10, now, false);
    let mut server = ServerSession::new(&Settings::default()).unwrap();
    let req = get();
    client.submit(ticket(0), &req, false);
    client.submit(ticket(1), &req, false);
    let first = deliver(&mut client, &mut server);
    assert_eq!(first.len(), 2);
    assert_eq!(answer(&mut client, &mut server, &first[..1], now), 1);
    client.submit(ticket(2), &req, false);
    assert_eq!(deliver(&mut client, &mut server).len(), 1);
}

#[test]
fn a_connection_closed_under_many_streams_says_how_many_with_separators() {
    let f = super::closed_with(1_000);
    assert_eq!(f.kind, herd_metrics::ErrorKind::Eof);
    assert_eq!(
        f.message,
        "the server closed the connection with 1,000 streams open"
    );
}
