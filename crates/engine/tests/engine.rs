//! The engine against a fake transport under a paused clock: virtual time, no sockets, no luck.

use herd_engine::metrics::ErrorKind;
use herd_engine::{
    run_local, Control, Failure, Load, Plan, Request, Response, RunOutput, Single, Transport,
};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{sleep, sleep_until, Instant};

/// What the fake server does with a request arriving at `t` (since the fake's creation).
#[derive(Clone, Copy, Debug)]
enum Reply {
    After(Duration, u16),
    Fail(Duration, ErrorKind),
    Hang,
}

#[derive(Clone)]
struct Fake {
    epoch: Instant,
    behave: Rc<dyn Fn(Duration, u64) -> Reply>,
    /// The server is "stopped" (SIGSTOP) over this window: nothing it handles finishes before
    /// the window ends.
    stopped: Option<(Duration, Duration)>,
    connects: Rc<Cell<u64>>,
    exchanges: Rc<Cell<u64>>,
    connect_fails: bool,
}

impl Fake {
    fn new(behave: impl Fn(Duration, u64) -> Reply + 'static) -> Self {
        Fake {
            epoch: Instant::now(),
            behave: Rc::new(behave),
            stopped: None,
            connects: Rc::default(),
            exchanges: Rc::default(),
            connect_fails: false,
        }
    }
}

struct Conn {
    uses: u64,
}

impl Transport for Fake {
    type Conn = Conn;

    async fn connect(&self) -> Result<Conn, Failure> {
        self.connects.set(self.connects.get() + 1);
        if self.connect_fails {
            return Err(Failure::new(ErrorKind::ConnectRefused, "refused"));
        }
        Ok(Conn { uses: 0 })
    }

    async fn exchange(
        &self,
        conn: &mut Conn,
        _req: &Request,
        resp: &mut Response,
    ) -> Result<(), Failure> {
        let n = self.exchanges.get();
        self.exchanges.set(n + 1);
        conn.uses += 1;
        let t = self.epoch.elapsed();
        let reply = (self.behave)(t, conn.uses);
        let wait = |d: Duration| {
            let mut until = Instant::now() + d;
            if let Some((from, to)) = self.stopped {
                let (from, to) = (self.epoch + from, self.epoch + to);
                if until >= from && Instant::now() < to {
                    until = until.max(to);
                }
            }
            until
        };
        match reply {
            Reply::After(d, status) => {
                sleep_until(wait(d)).await;
                resp.status = status;
                resp.keep_alive = true;
                resp.bytes_received = 100;
                resp.body_len = 10;
                Ok(())
            }
            Reply::Fail(d, kind) => {
                sleep_until(wait(d)).await;
                Err(Failure::new(kind, format!("fake {kind}")))
            }
            Reply::Hang => {
                sleep(Duration::from_secs(3600)).await;
                unreachable!("the engine's deadline ends this first")
            }
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

async fn go(plan: Plan, fake: Fake) -> RunOutput {
    go_with(plan, fake, Arc::new(Control::new())).await
}

async fn go_with(plan: Plan, fake: Fake, control: Arc<Control>) -> RunOutput {
    let script = Single(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]));
    tokio::task::LocalSet::new()
        .run_until(run_local(&plan, fake, script, control))
        .await
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

#[tokio::test(start_paused = true)]
async fn closed_model_runs_exactly_n_requests() {
    let fake = Fake::new(|_, _| Reply::After(ms(10), 200));
    let plan = Plan {
        load: Load::Closed { users: 4 },
        duration: None,
        requests: Some(100),
        ..Plan::default()
    };
    let out = go(plan, fake.clone()).await;
    assert_eq!(out.total.completed, 100);
    assert_eq!(out.total.ok, 100);
    assert_eq!(
        fake.connects.get(),
        4,
        "keep-alive: one connection per user"
    );
    assert_accounted(&out);
    // 100 requests of 10 ms over 4 users: 25 rounds, 250 ms.
    let p50 = out.total.latency.value_at_quantile(0.5);
    assert!((9_900..=10_100).contains(&p50), "p50 {p50} us");
}

#[tokio::test(start_paused = true)]
async fn open_model_sends_rate_times_duration() {
    let fake = Fake::new(|_, _| Reply::After(ms(2), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 500.0,
            max_connections: 100,
        },
        duration: Some(Duration::from_secs(2)),
        ..Plan::default()
    };
    let out = go(plan, fake).await;
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
#[tokio::test(start_paused = true)]
async fn stopped_server_shows_in_latency_not_just_service_time() {
    let mut fake = Fake::new(|_, _| Reply::After(ms(1), 200));
    fake.stopped = Some((Duration::from_secs(4), Duration::from_secs(5)));
    let plan = Plan {
        load: Load::Open {
            rate: 1000.0,
            max_connections: 50,
        },
        duration: Some(Duration::from_secs(10)),
        ..Plan::default()
    };
    let out = go(plan, fake).await;
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

#[tokio::test(start_paused = true)]
async fn arrivals_that_find_no_connection_by_the_end_are_dropped_and_counted() {
    // 2 connections, each busy 1 s per request, 100 arrivals a second: most never leave.
    let fake = Fake::new(|_, _| Reply::After(Duration::from_secs(1), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 2,
        },
        duration: Some(Duration::from_secs(2)),
        ..Plan::default()
    };
    let out = go(plan, fake).await;
    assert_eq!(out.scheduled, 200);
    assert!(out.dropped > 150, "dropped {}", out.dropped);
    assert_accounted(&out);
}

#[tokio::test(start_paused = true)]
async fn a_stalled_request_times_out_at_its_deadline_and_its_connection_is_replaced() {
    let fake = Fake::new(|_, uses| {
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
    let out = go(plan, fake.clone()).await;
    // every fresh connection hangs on its first request
    assert_eq!(out.total.error_count(ErrorKind::Timeout), 3);
    assert_eq!(fake.connects.get(), 3);
    let max = out.total.time_to_error.max();
    assert!(
        (1_990_000..=2_010_000).contains(&max),
        "timed out at {max} us, want 2 s"
    );
    assert_accounted(&out);
}

#[tokio::test(start_paused = true)]
async fn failures_are_counted_by_class_and_the_run_goes_on() {
    let fake = Fake::new(|t, _| {
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
    let out = go(plan, fake).await;
    assert_eq!(out.total.completed + out.total.errors.total(), 50);
    assert!(out.total.error_count(ErrorKind::Reset) > 0);
    assert_eq!(out.total.ok, 0, "503 is a completed but failed request");
    assert_eq!(out.total.failed, out.total.completed);
    assert_accounted(&out);
}

#[tokio::test(start_paused = true)]
async fn refused_connections_are_errors_not_a_stop() {
    let mut fake = Fake::new(|_, _| Reply::After(ms(1), 200));
    fake.connect_fails = true;
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(20),
        ..Plan::default()
    };
    let out = go(plan, fake).await;
    assert_eq!(out.total.error_count(ErrorKind::ConnectRefused), 20);
    assert_eq!(out.total.sent, 0);
    assert_accounted(&out);
}

#[tokio::test(start_paused = true)]
async fn calls_per_conn_one_opens_a_connection_per_request() {
    let fake = Fake::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Closed { users: 3 },
        duration: None,
        requests: Some(30),
        calls_per_conn: Some(1),
        ..Plan::default()
    };
    let out = go(plan, fake.clone()).await;
    assert_eq!(fake.connects.get(), 30);
    assert_eq!(out.total.connect.len(), 30);
}

#[tokio::test(start_paused = true)]
async fn a_stale_keepalive_connection_is_retried_once_on_a_fresh_one() {
    // One arrival every 4 s, each answered in 2 s, so a connection sits idle 2 s between uses;
    // every connection's second use fails at once with nothing received, like a server whose
    // keep-alive timeout closed the idle connection.
    let fake = Fake::new(|_, uses| {
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
    let out = go(plan, fake.clone()).await;
    assert_eq!(out.total.ok, 3);
    assert_eq!(out.total.errors.total(), 0);
    assert_eq!(fake.connects.get(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_connection_in_steady_use_that_fails_counts_as_an_error() {
    let fake = Fake::new(|_, uses| {
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
    let out = go(plan, fake).await;
    assert_eq!(
        out.total.error_count(ErrorKind::Reset),
        2,
        "the 2nd use of each connection"
    );
    assert_eq!(out.total.ok, 3);
}

#[tokio::test(start_paused = true)]
async fn warmup_is_run_but_excluded() {
    let fake = Fake::new(|_, _| Reply::After(ms(5), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 10,
        },
        duration: Some(Duration::from_secs(1)),
        warmup: Duration::from_secs(1),
        ..Plan::default()
    };
    let out = go(plan, fake.clone()).await;
    assert_eq!(out.warmup_requests, 100);
    assert_eq!(out.total.completed, 100);
    assert_eq!(fake.exchanges.get(), 200);
    assert_eq!(out.timeline.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn cancel_stops_sending_and_cuts_off_in_flight_after_a_grace() {
    let fake = Fake::new(|t, _| {
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
    let c = Arc::clone(&control);
    let canceller = async move {
        sleep(Duration::from_secs(2)).await;
        c.cancel();
    };
    let started = Instant::now();
    let (out, ()) = tokio::join!(go_with(plan, fake, control), canceller);
    assert!(out.interrupted);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "stopped within the grace"
    );
    assert_eq!(
        out.total.error_count(ErrorKind::Other),
        2,
        "the two hung requests are recorded"
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

#[tokio::test(start_paused = true)]
async fn closed_stages_ramp_users_up_hold_and_down() {
    // 0 -> 4 users over 10 s, hold 10 s, 4 -> 0 over 10 s, each request 100 ms. User u joins when
    // the target passes u + 1 and leaves when it falls below: 70 user-seconds, 700 requests.
    let fake = Fake::new(|_, _| Reply::After(ms(100), 200));
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        stages: vec![stage(10.0, 4.0), stage(10.0, 4.0), stage(10.0, 0.0)],
        ..Plan::default()
    };
    let out = go(plan, fake.clone()).await;
    assert!((695..=705).contains(&out.total.ok), "ok {}", out.total.ok);
    assert_eq!(
        fake.connects.get(),
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

#[tokio::test(start_paused = true)]
async fn open_stages_ramp_the_arrival_rate() {
    // 0 -> 100/s over 2 s (100 arrivals), 2 s at 100/s (200), 100 -> 0 over 2 s (100)
    let fake = Fake::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 50,
        },
        duration: None,
        stages: vec![stage(2.0, 100.0), stage(2.0, 100.0), stage(2.0, 0.0)],
        ..Plan::default()
    };
    let out = go(plan, fake).await;
    assert_eq!(out.scheduled, 400);
    assert_eq!(out.total.ok, 400);
    let per_sec: Vec<u64> = out.timeline.iter().map(|s| s.requests()).collect();
    assert_eq!(per_sec.len(), 6);
    assert_eq!(per_sec[2] + per_sec[3], 200);
    assert!(per_sec[0] < per_sec[1], "ramping up: {per_sec:?}");
}

/// Two requests per iteration; counts iterations measured and not.
struct TwoSteps(Rc<Cell<(u64, u64)>>);

impl herd_engine::Script for TwoSteps {
    type User = ();
    fn new_user(&self, _id: u64) {}
    async fn iterate<'a, T: Transport>(
        &'a self,
        _: &'a mut (),
        ctx: &'a mut herd_engine::UserCtx<T>,
    ) {
        let req = Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]);
        let _ = ctx.exchange(&req).await;
        let _ = ctx.exchange(&req).await;
        let (m, w) = self.0.get();
        self.0.set(if ctx.measured() {
            (m + 1, w)
        } else {
            (m, w + 1)
        });
    }
}

#[tokio::test(start_paused = true)]
async fn an_iteration_that_began_in_the_warmup_is_left_out_whole() {
    // 80 ms iterations, warm-up 100 ms: the iteration starting at 80 ms sends its second request
    // at 120 ms, after the warm-up; it still belongs to the warm-up with its iteration.
    let fake = Fake::new(|_, _| Reply::After(ms(40), 200));
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: Some(ms(300)),
        warmup: ms(100),
        ..Plan::default()
    };
    let counted = Rc::new(Cell::new((0, 0)));
    let out = tokio::task::LocalSet::new()
        .run_until(run_local(
            &plan,
            fake,
            TwoSteps(Rc::clone(&counted)),
            Arc::new(Control::new()),
        ))
        .await
        .unwrap();
    let (measured, warm) = counted.get();
    assert_eq!(warm, 2, "iterations at 0 and 80 ms");
    assert_eq!(
        out.warmup_requests, 4,
        "both requests of both warm-up iterations"
    );
    assert_eq!(out.total.completed, 2 * measured, "whole iterations only");
}
