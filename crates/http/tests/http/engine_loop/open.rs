//! The open model on the one loop: the whole schedule sent, arrivals that wait (measured from
//! their intended time) or are dropped at the end, Ctrl-C.

use crate::common::loop_server::{errors, open, run_plan, run_until_ctrl_c, server, Serve, ASK};
use herd_engine::metrics::ErrorKind;
use herd_engine::Plan;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn the_open_model_sends_the_whole_schedule() {
    let (addr, _) = server(Serve::Answer);
    // 400 req/s for 500 ms is 200 arrivals, whatever the server does.
    let out = run_plan(&open(400.0, 50, None), addr);
    assert_eq!(out.scheduled, 200);
    // All 200 are answered, unless the host stalled all 50 connections just before the end (an
    // arrival still waiting then is dropped, and counted so).
    assert_eq!(out.total.ok + out.dropped, 200);
    assert_eq!(out.total.bytes_sent, out.total.ok * ASK.len() as u64);
    assert!(out.generator.peak_connections <= 50);
    // With a request count instead of a duration: exactly that many, on two threads.
    let p = Plan {
        threads: 2,
        ..open(2_000.0, 8, Some(301))
    };
    let out = run_plan(&p, addr);
    assert_eq!((out.scheduled, out.total.ok, out.dropped), (301, 301, 0));
}

#[test]
fn open_arrivals_that_find_no_connection_wait_and_at_the_end_are_dropped() {
    // One connection to a server that never answers: the first arrival takes it and times out
    // after the end of the run; the other 49 of 500 ms at 100 req/s wait for it in vain.
    let (addr, accepted) = server(Serve::Stall);
    let p = Plan {
        timeout: Duration::from_millis(800),
        ..open(100.0, 1, None)
    };
    let out = run_plan(&p, addr);
    assert_eq!(
        out.scheduled, 50,
        "scheduled = completed + errors + dropped"
    );
    assert_eq!(errors(&out.total, ErrorKind::Timeout), 1);
    assert_eq!(out.dropped, 49);
    assert_eq!(out.total.completed, 0);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "never more than the cap"
    );
}

#[test]
fn an_arrival_that_waited_is_measured_from_its_intended_time() {
    // 10 arrivals 10 ms apart on one connection to a server that takes 20 ms: each waits for the
    // one before. The tenth, intended at 90 ms, cannot start before 9 x 20 ms, so its latency
    // from the schedule is at least 110 ms though the server took only 20 ms of it.
    let (addr, _) = server(Serve::Delay(20));
    let out = run_plan(&open(100.0, 1, Some(10)), addr);
    assert_eq!(out.total.ok, 10);
    let (lat, svc) = (&out.total.latency, &out.total.service);
    assert!(svc.min() >= 20_000, "service {} us", svc.min());
    assert!(
        lat.max() >= 110_000,
        "latency {} us: the wait counts",
        lat.max()
    );
    assert!(lat.min() >= svc.min());
}

#[test]
fn ctrl_c_ends_an_open_run_and_counts_what_was_left() {
    let p = Plan {
        duration: Some(Duration::from_secs(30)),
        ..open(1_000.0, 4, None)
    };
    let out = run_until_ctrl_c(&p);
    assert!(out.interrupted);
    assert!(out.total.ok > 0);
    assert_eq!(out.scheduled, out.total.ended() + out.dropped);
}
