//! The open model: arrivals on a schedule whatever the server does; drops, stages of rates,
//! replayed arrivals, and wrk2's stop-the-server experiment.

use crate::common::{assert_accounted, go, go_script, ms, stage};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::{Action, Control, Ctx, Last, Load, Plan, Request, Script};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn open_model_sends_rate_times_duration() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(2), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 500.0,
            max_connections: 100,
        },
        duration: Some(Duration::from_secs(2)),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.scheduled, 1000);
    assert_eq!(out.total.completed, 1000);
    assert_eq!(out.dropped, 0);
    assert_accounted(&out);
    assert_eq!(out.timeline.len(), 2);
    assert_eq!(out.timeline.iter().map(|s| s.requests()).sum::<u64>(), 1000);
}

#[test]
fn arrivals_that_find_no_connection_by_the_end_are_dropped_and_counted() {
    // 2 connections, each busy 1 s per request, 100 arrivals a second: most never leave.
    let fake = FakeServer::new(|_, _| Reply::After(Duration::from_secs(1), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 2,
        },
        duration: Some(Duration::from_secs(2)),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.scheduled, 200);
    assert!(out.dropped > 150, "dropped {}", out.dropped);
    assert_accounted(&out);
}

#[test]
fn open_stages_ramp_the_arrival_rate() {
    // 0 -> 100/s over 2 s (100 arrivals), 2 s at 100/s (200), 100 -> 0 over 2 s (100)
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 50,
        },
        duration: None,
        stages: vec![stage(2.0, 100.0), stage(2.0, 100.0), stage(2.0, 0.0)],
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.scheduled, 400);
    assert_eq!(out.total.ok, 400);
    let per_sec: Vec<u64> = out.timeline.iter().map(|s| s.requests()).collect();
    assert_eq!(per_sec.len(), 6);
    assert_eq!(per_sec[2] + per_sec[3], 200);
    assert!(per_sec[0] < per_sec[1], "ramping up: {per_sec:?}");
}

#[test]
fn an_impossible_rate_ends_on_time_and_counts_its_drops_in_one_step() {
    // 100 million requests a second for 100 ms on 10 connections: nearly all are dropped, and
    // the run still ends on time instead of dropping them one at a time for minutes.
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 1e8,
            max_connections: 10,
        },
        duration: Some(ms(100)),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.scheduled, 10_000_000, "every arrival is accounted for");
    assert!(out.dropped > 9_900_000, "dropped {}", out.dropped);
    assert_accounted(&out);
    assert!(
        fake.clock.elapsed() < ms(400),
        "ended {:?} after the start",
        fake.clock.elapsed()
    );
}

/// wrk2's stop-the-server experiment in virtual time: 1000 req/s for 10 s, the server stopped
/// for 1 s. Everything intended during the stop waits for it to end, so the latency from the
/// intended time is spread evenly over 0..1 s for 10% of the requests: p99 ~ 900 ms, p95 ~ 500 ms.
/// The service time, from the actual send, hides most of that: the difference is the point.
#[test]
fn stopped_server_shows_in_latency_not_just_service_time() {
    let mut fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    fake.stopped = Some((Duration::from_secs(4), Duration::from_secs(5)));
    let plan = Plan {
        load: Load::Open {
            rate: 1000.0,
            max_connections: 50,
        },
        duration: Some(Duration::from_secs(10)),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.completed, 10_000);
    let p = |q| out.total.latency.value_at_quantile(q) as f64 / 1000.0;
    let (p95, p99) = (p(0.95), p(0.99));
    assert!(
        (450.0..=550.0).contains(&p95),
        "latency p95 {p95} ms, want ~500"
    );
    assert!(
        (810.0..=990.0).contains(&p99),
        "latency p99 {p99} ms, want ~900"
    );
    let s99 = out.total.service.value_at_quantile(0.99) as f64 / 1000.0;
    assert!(
        s99 < p99 / 2.0,
        "service p99 {s99} ms should be far below latency p99 {p99} ms"
    );
}

/// A schedule of messages (`Plan::in_turn`: each socket its share) against a server stopped
/// from 1 s to 3 s: each second closes with the messages due that wait for a free socket, 0
/// while the server keeps up, dozens while it is stopped, 0 again once it answers; a plan
/// without a schedule of messages records none.
#[test]
fn a_schedule_of_messages_records_its_send_backlog_as_each_second_closes() {
    let backlog = |in_turn: bool| {
        let mut fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
        fake.stopped = Some((Duration::from_secs(1), Duration::from_secs(3)));
        let plan = Plan {
            load: Load::Open {
                rate: 40.0,
                max_connections: 4,
            },
            duration: Some(Duration::from_secs(5)),
            in_turn,
            ..Plan::default()
        };
        let out = go(plan, &fake);
        assert_eq!(out.total.completed, 200);
        out.timeline
            .iter()
            .map(|s| s.ws.as_ref().and_then(|w| w.backlog).map(|b| b.messages))
            .collect::<Vec<_>>()
    };
    let seconds = backlog(true);
    assert_eq!(seconds[0], Some(0), "{seconds:?}");
    // Closing at 2 s, a second into the stop: 40 due, 4 of them on the sockets.
    let stopped = seconds[1].unwrap();
    assert!((30..=40).contains(&stopped), "{seconds:?}");
    assert!(seconds[2].unwrap() > stopped, "{seconds:?}");
    assert_eq!(seconds[3], Some(0), "{seconds:?}");
    assert!(backlog(false).iter().all(Option::is_none));
}

/// Sends one request per arrival, naming the arrival (a replayed log's line) in its bytes.
#[derive(Clone)]
struct Replay;

impl Script for Replay {
    type User = ();
    type Report = ();
    fn new_user(&self, _id: u64) {}
    fn next(&self, _: &mut (), last: Last<'_>, ctx: Ctx) -> Action {
        match last {
            Last::Start => {
                let line = ctx
                    .arrival
                    .expect("an open-model iteration answers an arrival");
                Action::Send(Request::new(
                    format!("GET /line/{line} HTTP/1.1\r\n\r\n").into_bytes(),
                ))
            }
            _ => Action::Done,
        }
    }
}

#[test]
fn a_replay_sends_each_line_once_at_its_own_offset() {
    let mut fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    fake.keep_requests = true;
    let offsets: Vec<Duration> = [0, 10, 10, 10, 250, 900].iter().map(|&m| ms(m)).collect();
    let plan = Plan {
        load: Load::Open {
            rate: 1.0,
            max_connections: 2,
        },
        duration: Some(ms(1_000)),
        arrivals: Some(offsets.into()),
        ..Plan::default()
    };
    let out = go_script(plan, &fake, Arc::new(Control::new()), |_| Replay);
    assert_eq!(out.scheduled, 6);
    assert_eq!(out.total.ok, 6);
    let mut lines: Vec<String> = fake.requests.lock().unwrap().clone();
    lines.sort();
    let want: Vec<String> = (0..6)
        .map(|i| format!("GET /line/{i} HTTP/1.1\r\n\r\n"))
        .collect();
    assert_eq!(lines, want, "each line once");
    // Three lines at 10 ms on two connections: the third waits for one, and its latency
    // counts from its own offset (1 ms service each, so at least 2 ms).
    assert!(
        out.total.latency.max() >= 2_000,
        "{}",
        out.total.latency.max()
    );
    // all six in the first second
    let per_sec: Vec<u64> = out.timeline.iter().map(|s| s.requests()).collect();
    assert_eq!(per_sec, vec![6]);
}

/// A schedule of messages on connections that each carry several sockets (a WebSocket over
/// HTTP/2's `--streams`): every user is made first and goes to the connection fewest users
/// share, so the cap's connections all open and carry their share, even when each message is
/// answered long before the next is due (the first idle connection would take them all).
#[test]
fn in_turn_users_spread_over_every_connection_of_several_places() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 2,
        },
        pipeline: 5,
        duration: Some(Duration::from_secs(2)),
        in_turn: true,
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.completed, 200);
    assert_eq!(out.generator.connections_opened, 2);
}
