//! The one loop against a fake transport on a virtual clock: no sockets, no sleeps, no luck.

mod segment;

use herd_engine::fake::{FakeServer, Reply};
use herd_engine::metrics::ErrorKind;
use herd_engine::{
    run, Action, Control, Ctx, Last, Load, Plan, Request, RunOutput, Script, Single,
};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn go(plan: Plan, fake: &FakeServer) -> RunOutput {
    go_with(plan, fake, Arc::new(Control::new()))
}

fn go_with(plan: Plan, fake: &FakeServer, control: Arc<Control>) -> RunOutput {
    let script = Single(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]));
    go_script(plan, fake, control, move |_| script.clone())
}

fn go_script<S: Script>(
    plan: Plan,
    fake: &FakeServer,
    control: Arc<Control>,
    script: impl Fn(usize) -> S + Sync,
) -> RunOutput {
    let clock = Arc::clone(&fake.clock);
    run(
        &plan,
        clock,
        |_| Ok(fake.transport()),
        script,
        control,
        |_| {},
    )
    .unwrap()
}

fn assert_accounted(out: &RunOutput) {
    let t = &out.total;
    assert_eq!(
        out.scheduled,
        t.completed + t.errors.total() + out.dropped,
        "scheduled = completed + errors + dropped"
    );
}

#[test]
fn closed_model_runs_exactly_n_requests() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let plan = Plan {
        load: Load::Closed { users: 4 },
        duration: None,
        requests: Some(100),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.completed, 100);
    assert_eq!(out.total.ok, 100);
    assert_eq!(
        fake.connects.load(Relaxed),
        4,
        "keep-alive: one connection per user"
    );
    assert_accounted(&out);
    // 100 requests of 10 ms over 4 users: 25 rounds, 250 ms.
    let p50 = out.total.latency.value_at_quantile(0.5);
    assert!((9_900..=10_100).contains(&p50), "p50 {p50} us");
}

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
fn a_stalled_request_times_out_at_its_deadline_and_its_connection_is_replaced() {
    let fake = FakeServer::new(|_, uses| {
        if uses == 1 {
            Reply::Hang
        } else {
            Reply::After(ms(1), 200)
        }
    });
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        requests: Some(3),
        timeout: Duration::from_secs(2),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    // every fresh connection hangs on its first request
    assert_eq!(out.total.error_count(ErrorKind::Timeout), 3);
    assert_eq!(fake.connects.load(Relaxed), 3);
    let max = out.total.time_to_error.max();
    assert!(
        (1_990_000..=2_010_000).contains(&max),
        "timed out at {max} us, want 2 s"
    );
    assert_accounted(&out);
}

#[test]
fn failures_are_counted_by_class_and_the_run_goes_on() {
    let fake = FakeServer::new(|t, _| {
        if t.as_millis() % 2 == 0 {
            Reply::Fail(ms(1), ErrorKind::Reset)
        } else {
            Reply::After(ms(1), 503)
        }
    });
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(50),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.completed + out.total.errors.total(), 50);
    assert!(out.total.error_count(ErrorKind::Reset) > 0);
    assert_eq!(out.total.ok, 0, "503 is a completed but failed request");
    assert_eq!(out.total.failed, out.total.completed);
    assert_accounted(&out);
}

#[test]
fn refused_connections_are_errors_not_a_stop() {
    let mut fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    fake.refuse = true;
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(20),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.error_count(ErrorKind::ConnectRefused), 20);
    assert_eq!(out.total.sent, 0);
    assert_accounted(&out);
}

#[test]
fn calls_per_conn_one_opens_a_connection_per_request() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Closed { users: 3 },
        duration: None,
        requests: Some(30),
        calls_per_conn: Some(1),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(fake.connects.load(Relaxed), 30);
    assert_eq!(out.total.connect.len(), 30);
}

#[test]
fn a_stale_keepalive_connection_is_retried_once_on_a_fresh_one() {
    // One arrival every 4 s, each answered in 2 s, so a connection sits idle 2 s between uses;
    // every connection's second use fails at once with nothing received, like a server whose
    // keep-alive timeout closed the idle connection.
    let fake = FakeServer::new(|_, uses| {
        if uses == 2 {
            Reply::Fail(ms(0), ErrorKind::Eof)
        } else {
            Reply::After(ms(2000), 200)
        }
    });
    let plan = Plan {
        load: Load::Open {
            rate: 0.25,
            max_connections: 1,
        },
        duration: None,
        requests: Some(3),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.ok, 3);
    assert_eq!(out.total.errors.total(), 0);
    assert_eq!(fake.connects.load(Relaxed), 3);
}

#[test]
fn a_connection_in_steady_use_that_fails_counts_as_an_error() {
    let fake = FakeServer::new(|_, uses| {
        if uses == 2 {
            Reply::Fail(ms(0), ErrorKind::Reset)
        } else {
            Reply::After(ms(1), 200)
        }
    });
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        requests: Some(5),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(
        out.total.error_count(ErrorKind::Reset),
        2,
        "the 2nd use of each connection"
    );
    assert_eq!(out.total.ok, 3);
}

#[test]
fn warmup_is_run_but_excluded() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(5), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 10,
        },
        duration: Some(Duration::from_secs(1)),
        warmup: Duration::from_secs(1),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.warmup_requests, 100);
    assert_eq!(out.total.completed, 100);
    assert_eq!(fake.exchanges.load(Relaxed), 200);
    assert_eq!(out.timeline.len(), 1);
}

#[test]
fn cancel_stops_sending_and_cuts_off_in_flight_after_a_grace() {
    let fake = FakeServer::new(|t, _| {
        if t > Duration::from_secs(1) {
            Reply::Hang
        } else {
            Reply::After(ms(10), 200)
        }
    });
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: Some(Duration::from_secs(60)),
        timeout: Duration::from_secs(30),
        ..Plan::default()
    };
    let control = Arc::new(Control::new());
    let mut fake = fake;
    fake.cancel_at = Some((Duration::from_secs(2), Arc::clone(&control)));
    let out = go_with(plan, &fake, control);
    assert!(out.interrupted);
    assert!(
        fake.clock.elapsed() < Duration::from_millis(3_100),
        "stopped within the grace: {:?}",
        fake.clock.elapsed()
    );
    assert_eq!(
        out.total.error_count(ErrorKind::Unfinished),
        2,
        "the two hung requests are recorded"
    );
    // The window ends when Ctrl-C came, not after the grace.
    assert!(
        (out.duration.as_secs_f64() - 2.0).abs() < 0.02,
        "{:?}",
        out.duration
    );
    assert!(out.total.ok >= 190);
    assert_accounted(&out);
}

fn stage(secs: f64, target: f64) -> herd_engine::Stage {
    herd_engine::Stage {
        duration: Duration::from_secs_f64(secs),
        target,
    }
}

#[test]
fn closed_stages_ramp_users_up_hold_and_down() {
    // 0 -> 4 users over 10 s, hold 10 s, 4 -> 0 over 10 s, each request 100 ms. User u joins when
    // the target passes u + 1 and leaves when it falls below: 70 user-seconds, 700 requests.
    let fake = FakeServer::new(|_, _| Reply::After(ms(100), 200));
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        stages: vec![stage(10.0, 4.0), stage(10.0, 4.0), stage(10.0, 0.0)],
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert!((695..=705).contains(&out.total.ok), "ok {}", out.total.ok);
    assert_eq!(
        fake.connects.load(Relaxed),
        4,
        "one connection per user, kept while parked"
    );
    let per_sec: Vec<u64> = out.timeline.iter().map(|s| s.requests()).collect();
    assert_eq!(per_sec.len(), 30);
    assert_eq!(
        per_sec[15], 40,
        "4 users at 10 req/s each in the steady state"
    );
    assert!(
        per_sec[1] == 0 && per_sec[3] == 10,
        "one user from 2.5 s: {per_sec:?}"
    );
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

/// Two requests per iteration; counts iterations measured and not.
#[derive(Clone)]
struct TwoSteps(Arc<(AtomicU64, AtomicU64)>);

impl Script for TwoSteps {
    type User = u8;
    fn new_user(&self, _id: u64) -> u8 {
        0
    }
    fn next(&self, sent: &mut u8, last: Last<'_>, ctx: Ctx) -> Action {
        if let Last::Start = last {
            *sent = 0;
        }
        if *sent == 2 {
            let counter = if ctx.measured { &self.0 .0 } else { &self.0 .1 };
            counter.fetch_add(1, Relaxed);
            return Action::Done;
        }
        *sent += 1;
        Action::Send(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]))
    }
}

#[test]
fn an_iteration_that_began_in_the_warmup_is_left_out_whole() {
    // 80 ms iterations, warm-up 100 ms: the iteration starting at 80 ms sends its second request
    // at 120 ms, after the warm-up; it still belongs to the warm-up with its iteration.
    let fake = FakeServer::new(|_, _| Reply::After(ms(40), 200));
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: Some(ms(300)),
        warmup: ms(100),
        ..Plan::default()
    };
    let counted = TwoSteps(Arc::default());
    let script = counted.clone();
    let out = go_script(plan, &fake, Arc::new(Control::new()), move |_| {
        script.clone()
    });
    let (measured, warm) = (counted.0 .0.load(Relaxed), counted.0 .1.load(Relaxed));
    assert_eq!(warm, 2, "iterations at 0 and 80 ms");
    assert_eq!(
        out.warmup_requests, 4,
        "both requests of both warm-up iterations"
    );
    assert_eq!(out.total.completed, 2 * measured, "whole iterations only");
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

#[test]
fn a_duration_bounds_the_run_and_what_is_unanswered_is_counted_not_waited_for() {
    // A server that stalls, -d 2 s, a 60 s timeout: the run ends after its drain (2 s), and
    // the two hung requests are `unfinished`, in the result.
    let fake = FakeServer::new(|_, _| Reply::Hang);
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: Some(Duration::from_secs(2)),
        timeout: Duration::from_secs(60),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert!(
        fake.clock.elapsed() < Duration::from_millis(4_100),
        "the run lasted {:?}",
        fake.clock.elapsed()
    );
    assert_eq!(out.total.error_count(ErrorKind::Unfinished), 2);
    assert_accounted(&out);
    assert_eq!(out.duration, Duration::from_secs(2));
}

#[test]
fn throughput_is_never_divided_by_less_time_than_it_took() {
    // 100 users on a 200 ms route for 2.1 s: each starts iterations at 0, 0.2, ..., 2.0 s; the
    // last ones end at 2.2 s, in the drain. 1,100 answers over 2.2 s: 500 a second, the
    // ceiling (not 1,100 / 2.1 = 524).
    let fake = FakeServer::new(|_, _| Reply::After(ms(200), 200));
    let plan = Plan {
        load: Load::Closed { users: 100 },
        duration: Some(ms(2_100)),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.ok, 1_100);
    let rate = out.total.ok as f64 / out.duration.as_secs_f64();
    assert!((499.0..=500.5).contains(&rate), "{rate} req/s");
}

#[test]
fn timeouts_fire_at_their_deadline_to_the_microsecond() {
    let fake = FakeServer::new(|_, _| Reply::Hang);
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        requests: Some(5),
        timeout: ms(1),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.error_count(ErrorKind::Timeout), 5);
    for q in [0.0, 1.0] {
        let at = out.total.time_to_error.value_at_quantile(q);
        assert!((1_000..=1_010).contains(&at), "timed out after {at} us");
    }
}

#[test]
fn ctrl_c_in_the_warmup_measures_nothing_and_says_how_much_warmup_ran() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let control = Arc::new(Control::new());
    let mut fake = fake;
    fake.cancel_at = Some((Duration::from_secs(1), Arc::clone(&control)));
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: Some(Duration::from_secs(10)),
        warmup: Duration::from_secs(5),
        ..Plan::default()
    };
    let out = go_with(plan, &fake, control);
    assert!(out.interrupted);
    assert_eq!(out.total.completed, 0);
    assert!(
        out.warmup < ms(1_100) && out.warmup >= ms(990),
        "{:?}",
        out.warmup
    );
}

/// Sends one request per arrival, naming the arrival (a replayed log's line) in its bytes.
#[derive(Clone)]
struct Replay;

impl Script for Replay {
    type User = ();
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
