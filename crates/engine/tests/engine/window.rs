//! The measured window: the warm-up (run, left out by whole iterations), the end of a run (no
//! waiting for what is unanswered) and Ctrl-C (a grace, then `unfinished`).

use crate::common::{assert_accounted, go, go_script, go_with, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::metrics::ErrorKind;
use herd_engine::{Action, Control, Ctx, Last, Load, Plan, Request, Script};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

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

/// Two requests per iteration; counts iterations measured and not.
#[derive(Clone)]
struct TwoSteps(Arc<(AtomicU64, AtomicU64)>);

impl Script for TwoSteps {
    type User = u8;
    type Report = ();
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

/// Ctrl-C (or the dashboard's Stop) in the open model left its queued arrivals unsent, and the
/// summary called them "the server's saturation": an interrupt drops nothing.
#[test]
fn an_interrupt_in_the_open_model_is_not_saturation() {
    // 4 connections of 50 ms hold 80 a second of the 100 asked: ~20 a second wait in the
    // queue (far below its bound, so none is dropped while the run goes on).
    let mut fake = FakeServer::new(|_, _| Reply::After(ms(50), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 100.0,
            max_connections: 4,
        },
        duration: Some(Duration::from_secs(60)),
        threads: 1,
        ..Plan::default()
    };
    let control = Arc::new(Control::new());
    fake.cancel_at = Some((Duration::from_secs(2), Arc::clone(&control)));
    let out = go_with(plan, &fake, control);
    assert!(out.interrupted);
    assert!(out.total.ok >= 150, "{}", out.total.ok);
    assert_eq!(out.dropped, 0, "nothing was refused by the server");
    assert_accounted(&out);
}
