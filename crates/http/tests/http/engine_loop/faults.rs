//! A server that stalls, refuses, closes or answers ahead, met by the one loop: each costs what
//! it should (a timeout at the deadline, a retry of a GET closed under, of an idle connection).

use crate::common::loop_server::{errors, plan, run_plan, server, Serve, ANSWER};
use herd_engine::metrics::ErrorKind;
use herd_engine::Plan;
use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn a_stalled_server_times_out_at_the_deadline() {
    let (addr, _) = server(Serve::Stall);
    let p = Plan {
        timeout: Duration::from_millis(100),
        ..plan(2, 4)
    };
    let out = run_plan(&p, addr);
    assert_eq!(errors(&out.total, ErrorKind::Timeout), 4);
    assert_eq!(out.total.completed, 0);
    // The deadline is exact: not a 10 ms tick late (failures have their own histogram,
    // time to error).
    let p50 = Duration::from_micros(out.total.time_to_error.value_at_quantile(0.5));
    assert!(
        p50 >= Duration::from_millis(100) && p50 < Duration::from_millis(105),
        "timed out at {p50:?}"
    );
    let (kind, _, message) = out.total.errors.iter().next().unwrap();
    assert_eq!(kind, ErrorKind::Timeout);
    assert_eq!(message, Some("no complete response within 100ms"));
}

#[test]
fn refused_connections_are_counted_not_fatal() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let out = run_plan(&plan(3, 50), addr);
    assert_eq!(errors(&out.total, ErrorKind::ConnectRefused), 50);
    assert_eq!(out.scheduled, 50);
    assert_eq!(out.total.bytes_sent, 0, "nothing was sent");
    let (_, _, message) = out.total.errors.iter().next().unwrap();
    assert!(message.unwrap().starts_with(&format!("connect to {addr}:")));
}

#[test]
fn a_server_closing_mid_run_under_a_get_costs_a_new_connection_not_an_error() {
    let (addr, accepted) = server(Serve::CloseAfter(4));
    let out = run_plan(&plan(1, 50), addr);
    // Every fifth request meets the close on its reused connection with nothing received:
    // a GET goes once more on a new connection (as browsers and curl do), counted once.
    assert_eq!(out.total.ok, 50);
    assert_eq!(out.total.completed, 50);
    assert_eq!(errors(&out.total, ErrorKind::Eof), 0);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        13,
        "four answers a connection"
    );
}

#[test]
fn a_response_cut_short_by_a_close_is_eof_not_a_timeout() {
    // The bytes and the close arrive together, in one edge: the worker must read on to the
    // close rather than wait for an edge that never comes.
    let (addr, _) = server(Serve::Truncate);
    let p = Plan {
        timeout: Duration::from_secs(5),
        ..plan(2, 20)
    };
    let out = run_plan(&p, addr);
    assert_eq!(
        errors(&out.total, ErrorKind::Eof),
        20,
        "{:?}",
        out.total.errors
    );
    assert_eq!(out.total.bytes_received, 20 * 20);
}

#[test]
fn a_connection_closed_while_idle_is_retried_once_not_counted() {
    let (addr, accepted) = server(Serve::SlowThenGone);
    let out = run_plan(&plan(1, 2), addr);
    assert_eq!(out.total.ok, 2, "{:?}", out.total.errors);
    assert_eq!(out.total.errors.total(), 0);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "the retry opened a fresh connection"
    );
}

#[test]
fn an_answer_that_came_ahead_is_the_next_requests_response() {
    let (addr, _) = server(Serve::Twice);
    let out = run_plan(&plan(1, 10), addr);
    assert_eq!(out.total.ok, 10);
    assert_eq!(out.total.errors.total(), 0);
    // Each response counts its own bytes, whether it was read before or after its request.
    assert_eq!(out.total.bytes_received, 10 * ANSWER.len() as u64);
}
