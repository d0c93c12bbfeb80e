//! What a server does wrong: failures counted by class, refused connections, deadlines to the
//! microsecond, and which closed keep-alive connections are retried and which are errors.

use crate::common::{assert_accounted, go, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::metrics::ErrorKind;
use herd_engine::{Load, Plan};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

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
