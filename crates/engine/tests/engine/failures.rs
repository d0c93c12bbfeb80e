//! What a server does wrong: failures counted by class, refused connections, deadlines to the
//! microsecond, and which closed keep-alive connections are retried and which are errors.

use crate::common::{assert_accounted, go, go_script, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::metrics::ErrorKind;
use herd_engine::{Control, Load, Plan, Request, Single};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
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
    // POSTs: a reset on a reused connection is not sent again, it is counted.
    let post = Single(Request::new(&b"POST / HTTP/1.1\r\n\r\n"[..]));
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
    let out = go_script(plan, &fake, Arc::new(Control::new()), move |_| post.clone());
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

/// The reply of a server (a proxy like tinyproxy) that closes every connection after its
/// first answer without saying so: a reused connection's request meets its close.
fn closes_after_each_answer(_: Duration, uses: u64) -> Reply {
    if uses == 1 {
        Reply::After(ms(1), 200)
    } else {
        Reply::Fail(ms(0), ErrorKind::Eof)
    }
}

#[test]
fn a_get_closed_under_on_a_reused_connection_goes_once_more_on_a_new_one() {
    let fake = FakeServer::new(closes_after_each_answer);
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        requests: Some(5),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    // One request, one result: five answered, none failed, none counted twice.
    assert_eq!(out.total.ok, 5);
    assert_eq!(out.total.completed, 5);
    assert_eq!(out.total.errors.total(), 0);
    assert_accounted(&out);
    // Requests 2 to 5 each met a close on the reused connection and went again on a new one.
    assert_eq!(fake.exchanges.load(Relaxed), 9);
    assert_eq!(fake.connects.load(Relaxed), 5);
}

#[test]
fn a_post_closed_under_in_steady_use_counts_as_an_error() {
    // A POST may have been acted on before the close: it is not sent twice.
    let fake = FakeServer::new(closes_after_each_answer);
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        requests: Some(5),
        ..Plan::default()
    };
    let post = Single(Request::new(&b"POST /order HTTP/1.1\r\n\r\n"[..]));
    let out = go_script(plan, &fake, Arc::new(Control::new()), move |_| post.clone());
    assert_eq!(
        out.total.error_count(ErrorKind::Eof),
        2,
        "the 2nd use of each connection"
    );
    assert_eq!(out.total.ok, 3);
    assert_eq!(fake.exchanges.load(Relaxed), 5);
}

#[test]
fn a_retry_that_fails_too_is_one_error_never_retried_again() {
    // After the first answer the server fails everything with nothing sent: the request on
    // the reused connection goes once more, on a new one, and that failure is its result.
    let answered = AtomicBool::new(false);
    let fake = FakeServer::new(move |_, _| {
        if !answered.swap(true, Relaxed) {
            Reply::After(ms(1), 200)
        } else {
            Reply::Fail(ms(0), ErrorKind::Eof)
        }
    });
    let plan = Plan {
        load: Load::Closed { users: 1 },
        duration: None,
        requests: Some(2),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.ok, 1);
    assert_eq!(out.total.error_count(ErrorKind::Eof), 1);
    assert_accounted(&out);
    assert_eq!(fake.exchanges.load(Relaxed), 3, "sent twice, not more");
}

/// One iteration: a socket's Upgrade, a message on it, then a plain request.
struct SocketThenRequest;

impl herd_engine::Script for SocketThenRequest {
    type User = u8;
    type Report = ();
    fn new_user(&self, _id: u64) -> u8 {
        0
    }
    fn next(
        &self,
        step: &mut u8,
        last: herd_engine::Last<'_>,
        _: herd_engine::Ctx,
    ) -> herd_engine::Action {
        use herd_engine::{Action, Last, SocketRole};
        if let Last::Start = last {
            *step = 0;
        }
        *step += 1;
        let mut req = Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]);
        req.socket = match *step {
            1 => SocketRole::Open,
            2 => SocketRole::Message,
            3 => SocketRole::None,
            _ => return Action::Done,
        };
        Action::Send(req)
    }
}

#[test]
fn a_socket_no_transport_can_open_fails_its_upgrade_and_messages_and_requests_go_on() {
    // The fake's connections cannot carry a WebSocket: the Upgrade fails as a handshake, the
    // message after it finds no socket, and the plain request after them goes as ever.
    let fake = FakeServer::new(|_, _| Reply::After(ms(1), 200));
    let plan = Plan {
        load: Load::Closed { users: 2 },
        duration: None,
        requests: Some(6),
        ..Plan::default()
    };
    let out = go_script(plan, &fake, Arc::new(Control::new()), |_| SocketThenRequest);
    assert_eq!(out.total.error_count(ErrorKind::WsHandshake), 6);
    assert_eq!(out.total.error_count(ErrorKind::WsClosed), 6);
    assert_eq!(out.total.ok, 6);
    assert_eq!(out.total.completed, 6);
}
