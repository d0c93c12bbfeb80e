//! Connections apart from users: HTTP/1.1 pipelining (a sliding window on each connection,
//! responses matched in order, each timed against its own request) and users sharing fewer
//! connections; what a connection closed under a pipeline costs, counted once.

use crate::common::{assert_accounted, go, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::metrics::ErrorKind;
use herd_engine::{Load, Plan};
use std::sync::atomic::Ordering::Relaxed;

fn pipelined(users: u64, connections: u64, depth: usize, requests: u64) -> Plan {
    Plan {
        load: Load::Closed { users },
        connections: Some(connections),
        pipeline: depth,
        duration: None,
        requests: Some(requests),
        ..Plan::default()
    }
}

fn errors(out: &herd_engine::RunOutput, kind: ErrorKind) -> u64 {
    out.total
        .errors
        .iter()
        .filter(|(k, _, _)| *k == kind)
        .map(|(_, n, _)| n)
        .sum()
}

#[test]
fn a_connection_closed_with_ten_requests_pipelined_counts_each_once() {
    // The server takes ten requests written together, answers none and closes: each of them
    // is one error of its class, none is lost, none is sent again (the server may have acted
    // on any of them).
    let fake = FakeServer::new(|_, n| match n {
        1 => Reply::Fail(ms(5), ErrorKind::Eof),
        _ => Reply::Hang,
    });
    let out = go(pipelined(10, 1, 10, 10), &fake);
    assert_eq!(out.scheduled, 10);
    assert_eq!(errors(&out, ErrorKind::Eof), 10, "{:?}", out.total.errors);
    assert_eq!(out.total.completed, 0);
    assert_eq!(fake.connects.load(Relaxed), 1, "nothing was sent again");
    assert_eq!(fake.exchanges.load(Relaxed), 10);
    assert_accounted(&out);
}

#[test]
fn a_server_closing_after_keepalive_requests_loses_nothing() {
    // nginx's keepalive_requests: the 10th response says `Connection: close`, and the
    // requests pipelined behind it were never acted on: they go again on a new connection,
    // each counted once, when it is answered.
    let fake = FakeServer::new(|_, n| {
        if n % 10 == 0 {
            Reply::Closing(ms(1), 200)
        } else {
            Reply::After(ms(1), 200)
        }
    });
    let out = go(pipelined(16, 1, 16, 200), &fake);
    assert_eq!(out.total.ok, 200, "{:?}", out.total.errors);
    assert_eq!(out.total.errors.total(), 0);
    assert_eq!(
        fake.connects.load(Relaxed),
        20,
        "ten answers per connection"
    );
    let carried: u64 = out.generator.protocols.iter().map(|p| p.requests).sum();
    assert_eq!(
        carried, 200,
        "the tails that went again count on the connection that answered them, once"
    );
    assert_accounted(&out);
}

#[test]
fn each_pipelined_response_is_timed_against_its_own_request() {
    // One connection, a window of 4, a server answering one request every 10 ms in order:
    // the four written together are answered at 10, 20, 30 and 40 ms, and their times say
    // so (wrk's batches would give all four the last one's time).
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let out = go(pipelined(4, 1, 4, 4), &fake);
    assert_eq!(out.total.ok, 4);
    let h = &out.total.latency;
    let near = |v: u64, ms: u64| v.abs_diff(ms * 1000) <= 100;
    assert!(
        near(h.min(), 10) && near(h.max(), 40),
        "{} {}",
        h.min(),
        h.max()
    );
    assert_eq!(fake.connects.load(Relaxed), 1);
}

#[test]
fn a_window_keeps_k_requests_in_flight_on_each_connection() {
    // 2 connections x a window of 8, a server taking 10 ms per request in order: 16 requests
    // in flight, the connections each answering 100 a second.
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let out = go(pipelined(16, 2, 8, 400), &fake);
    assert_eq!(out.total.ok, 400);
    assert_eq!(fake.connects.load(Relaxed), 2);
    // 400 requests at 200 a second: 2 s, the first response after 10 ms.
    let took = out.total.latency.max();
    assert!(took >= 70_000, "queued in the window: {took} us");
    assert_accounted(&out);
}

#[test]
fn users_share_fewer_connections_and_wait_for_a_free_one() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let plan = Plan {
        load: Load::Closed { users: 8 },
        connections: Some(2),
        duration: None,
        requests: Some(80),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.ok, 80);
    assert_eq!(
        fake.connects.load(Relaxed),
        2,
        "the users shared two connections"
    );
    // Two at a time, 10 ms each: a request waits for a free connection up to 30 ms, and its
    // latency says so; the server's time (service) stays 10 ms.
    assert!(
        out.total.latency.max() >= 39_000,
        "{}",
        out.total.latency.max()
    );
    assert!(
        out.total.service.max() <= 10_100,
        "{}",
        out.total.service.max()
    );
    // The phases say where the time went: blocked waiting for a connection, then 10 ms to
    // the first byte, the whole answer in one piece.
    let blocked = out.total.blocked.max();
    assert!((29_000..=30_100).contains(&blocked), "blocked {blocked} us");
    assert!(out.total.waiting.min() >= 9_900 && out.total.waiting.max() <= 10_100);
    assert!(out.total.receiving.max() <= 10);
    assert_accounted(&out);
}

#[test]
fn a_window_refills_in_batches_not_a_write_per_response() {
    // A server answering one request per millisecond, each answer on its own: a window that
    // refilled each place as it freed would write one request per response (a system call and
    // a TCP segment each, the generator's CPU on loopback). Refilled once all of it is free,
    // as wrk's pipelining script refills its batch, 16 places take 16 requests a write.
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let out = go(pipelined(16, 1, 16, 1600), &fake);
    assert_eq!(out.total.ok, 1600);
    let writes = fake.writes.load(Relaxed);
    assert!(
        // One write per 16 requests, within a tenth (a first request goes alone when nothing is
        // in flight, and batches realign); three quarters took 1,600 / 12.
        writes <= 1600 / 16 * 11 / 10,
        "{writes} writes for 1,600 requests"
    );
    assert_accounted(&out);
}

#[test]
fn a_batch_leaves_whole_with_the_request_of_the_user_its_last_answer_freed() {
    // Each answer on its own, one per millisecond: when a batch's last answer comes, fifteen
    // requests wait for it and the sixteenth is its user's next. Written at once, the batch
    // left without that one, which then waited behind it for the next, and so every batch
    // after: two writes per 16 requests where wrk's script makes one (and nginx answered each
    // batch in two pieces). Once the answered users have submitted, all 16 leave together.
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let out = go(pipelined(16, 1, 16, 1600), &fake);
    assert_eq!(out.total.ok, 1600);
    let writes = fake.writes.load(Relaxed);
    // The first request goes alone (nothing in flight), then one write per 16.
    assert!(
        writes <= 1600 / 16 + 1,
        "{writes} writes for 1,600 requests"
    );
    assert_accounted(&out);
}

#[test]
fn a_batch_submitted_request_by_request_is_pumped_once() {
    // A server answering a batch at once, its answers in one read: the users they free hand
    // their next requests to the connection one by one, and one pump after them writes the
    // batch. A pump per request found nothing due 15 times in 16 (a third of herd's
    // instructions per pipelined request on nginx's static file went there).
    let fake = FakeServer::new(|_, _| Reply::After(ms(0), 200));
    let out = go(pipelined(16, 1, 16, 1600), &fake);
    assert_eq!(out.total.ok, 1600);
    let flushes = fake.flushes.load(Relaxed);
    assert!(
        flushes <= 1600 / 16 + 1,
        "{flushes} pumps for nothing, 1,600 requests"
    );
    assert_accounted(&out);
}

#[test]
fn a_request_held_for_its_batch_is_timed_from_its_write() {
    // A window of 4, a server answering one request every 10 ms: the first four go at 0 and
    // are answered at 10, 20, 30 and 40 ms. The requests freed at 10, 20 and 30 wait for the
    // last answer of the window (40), the three leave at 40 and are answered at 50, 60 and
    // 70. Latency counts the wait from each user's intended time (40 ms each); service time
    // starts at the write (10, 20 and 30 ms), so the server is not charged with herd's
    // batching.
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let out = go(pipelined(4, 1, 4, 7), &fake);
    assert_eq!(out.total.ok, 7);
    assert_eq!(fake.writes.load(Relaxed), 2);
    let latency = out.total.latency.to_histogram();
    let service = out.total.service.to_histogram();
    let near = |v: f64, ms: f64| (v - ms * 1000.0).abs() <= 100.0;
    assert!(
        near(latency.mean(), 220.0 / 7.0),
        "latency mean {}",
        latency.mean()
    );
    assert!(
        near(service.mean(), 160.0 / 7.0),
        "service mean {}",
        service.mean()
    );
    assert_accounted(&out);
}

#[test]
fn a_request_held_for_its_batch_waits_in_blocked_so_its_phases_add_up_to_its_latency() {
    // As above: the requests freed at 10, 20 and 30 ms wait for the answer at 40 ms, 30, 20
    // and 10 ms before their send. That wait is in `blocked`: every response's latency is the sum of
    // its phases (connect, blocked, waiting, receiving), where it once left 30 of the 220 ms
    // in no phase.
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let out = go(pipelined(4, 1, 4, 7), &fake);
    let t = &out.total;
    assert_eq!(t.ok, 7);
    let total = |h: &herd_engine::metrics::CompactHistogram| {
        let h = h.to_histogram();
        h.mean() * h.len() as f64
    };
    let phases = total(&t.connect) + total(&t.blocked) + total(&t.waiting) + total(&t.receiving);
    let latency = total(&t.latency);
    // Whole microseconds per phase (a response read at once receives for 1 us), and the
    // histograms' 3 digits.
    assert!(
        (phases - latency).abs() <= 7.0 * 3.0 + latency * 0.002,
        "phases {phases} us, latency {latency} us"
    );
    assert_eq!(t.blocked.len(), 3, "the three requests held for the batch");
    let held = t.blocked.to_histogram();
    assert!((held.mean() - 20_000.0).abs() <= 50.0, "{}", held.mean());
}
