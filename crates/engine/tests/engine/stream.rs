//! The one stream of records: every second the collector closes reaches the caller once, in
//! order, while the run goes on, with the same counts the final timeline has.

use crate::common::ms;
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::{run, Control, Load, Plan, Request, Single};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn each_closed_second_is_one_record_in_order_with_the_timeline_counts() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 200.0,
            max_connections: 20,
        },
        duration: Some(Duration::from_secs(5)),
        threads: 2,
        ..Plan::default()
    };
    let script = Single(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]));
    let mut records = Vec::new();
    let out = run(
        &plan,
        fake.clock.clone(),
        |_| Ok(fake.transport()),
        |_| script.clone(),
        Arc::new(Control::new()),
        |p| records.extend(p.closed.iter().cloned()),
    )
    .unwrap();
    let indices: Vec<u64> = records.iter().map(|r| r.index()).collect();
    let every: Vec<u64> = out.timeline.iter().map(|s| s.index).collect();
    assert_eq!(indices, every, "every second once, in order");
    // Answers still in flight at 5 s stretch the measurement into a sixth, partial second.
    assert!((5..=6).contains(&every.len()), "{every:?}");
    for r in &records[..5] {
        let second = &out.timeline[r.index() as usize];
        assert_eq!(
            r.second.requests(),
            second.requests(),
            "second {}",
            r.index()
        );
        assert_eq!(r.target, Some(200.0));
        assert!(r.whole, "a 5 s run has five whole seconds");
        // The generator's health rides along with every second it was sampled in (on the
        // virtual clock a worker's tick can skip a second the loop slept through).
        let sampled = out.generator.timeline.iter().find(|h| h.t == r.index());
        assert_eq!(
            r.health.as_ref().map(|h| h.t),
            sampled.map(|h| h.t),
            "second {}: the health the run reports for it",
            r.index()
        );
        if let Some(health) = &r.health {
            assert_eq!(health.cpu_percent.len(), 2, "one CPU figure per worker");
        }
    }
    assert!(
        records.iter().any(|r| r.health.is_some()),
        "the generator's health rides along"
    );
    assert!(
        records[5..].iter().all(|r| !r.whole),
        "the drain is not a whole second"
    );
}

/// What a dashboard or a metrics endpoint adds up second by second is what the run reports at
/// its end: requests scheduled and dropped, and the requests waiting at each second's close.
#[test]
fn records_carry_the_seconds_scheduled_dropped_and_in_flight_requests() {
    // 2 connections, each busy 500 ms per request, 50 arrivals a second: most are dropped.
    let fake = FakeServer::new(|_, _| Reply::After(ms(500), 200));
    let plan = Plan {
        load: Load::Open {
            rate: 50.0,
            max_connections: 2,
        },
        duration: Some(Duration::from_secs(3)),
        threads: 2,
        ..Plan::default()
    };
    let script = Single(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]));
    let mut records = Vec::new();
    let out = run(
        &plan,
        fake.clock.clone(),
        |_| Ok(fake.transport()),
        |_| script.clone(),
        Arc::new(Control::new()),
        |p| records.extend(p.closed.iter().cloned()),
    )
    .unwrap();
    let dropped: u64 = records.iter().map(|r| r.load.dropped).sum();
    let scheduled: u64 = records.iter().map(|r| r.load.scheduled).sum();
    assert_eq!(dropped, out.dropped, "every drop lands in some second");
    assert_eq!(scheduled, out.scheduled, "every scheduled request too");
    assert!(out.dropped > 100, "dropped {}", out.dropped);
    // Both connections stay busy; a second can close between one answer and the next send.
    for r in &records[1..3] {
        let busy = r.load.in_flight;
        assert!(
            (1..=2).contains(&busy),
            "second {}: {busy} in flight",
            r.index()
        );
    }
    for r in &records {
        let (ended, service) = (r.second.requests(), r.second.service.len());
        assert_eq!(
            service,
            ended,
            "second {}: a service time per response",
            r.index()
        );
    }
}

/// A day-long run must hold what a five-minute one does: seconds older than the window wait on
/// disk, and the result still has every one of them, with the generator's health beside them.
#[test]
fn a_long_run_keeps_only_the_window_in_memory_and_reports_every_second() {
    let fake = FakeServer::new(|_, _| Reply::After(ms(5), 200));
    let length = herd_engine::KEPT_S + 100;
    let plan = Plan {
        load: Load::Open {
            rate: 20.0,
            max_connections: 4,
        },
        duration: Some(Duration::from_secs(length)),
        threads: 1,
        ..Plan::default()
    };
    let script = Single(Request::new(&b"GET / HTTP/1.1\r\n\r\n"[..]));
    let (mut held, mut records) = (Vec::new(), 0u64);
    let out = run(
        &plan,
        fake.clock.clone(),
        |_| Ok(fake.transport()),
        |_| script.clone(),
        Arc::new(Control::new()),
        |p| {
            held.push(p.held);
            records += p.closed.len() as u64;
        },
    )
    .unwrap();
    // The last report comes with the result, every second back in memory. (On the virtual
    // clock the workers may run ahead of the collector's reports; how the spilled seconds come
    // back is pinned in herd-metrics' timeline tests.)
    assert_eq!(held.pop(), Some(length as usize));
    let most = held.iter().copied().max().unwrap_or(0);
    assert!(
        most as u64 <= herd_engine::KEPT_S + 5,
        "{most} seconds held in memory: {held:?}"
    );
    assert_eq!(out.timeline.len() as u64, length);
    assert_eq!(records, length, "every second was handed out once");
    let indices: Vec<u64> = out.timeline.iter().map(|s| s.index).collect();
    assert_eq!(indices, (0..length).collect::<Vec<_>>());
    assert_eq!(
        out.timeline.iter().map(|s| s.requests()).sum::<u64>(),
        out.total.ended()
    );
    assert!(
        out.timeline[10].latency.len() >= 19,
        "the early seconds kept their latency"
    );
    let health: Vec<u64> = out.generator.timeline.iter().map(|h| h.t).collect();
    assert!(
        health.windows(2).all(|w| w[0] < w[1]),
        "health in order, once each"
    );
    assert!(
        health.len() as u64 >= length - 10,
        "{} samples",
        health.len()
    );
}

/// The generator's charts end at the same second as the throughput's: the last whole second
/// of a run, in progress when the duration ends, has its health too, and a cut-short one none.
#[test]
fn the_last_whole_second_has_the_generators_health_and_a_cut_short_one_none() {
    for (duration, whole) in [(ms(3_000), 3), (ms(2_500), 2)] {
        let fake = FakeServer::new(|_, _| Reply::After(ms(10), 200));
        let plan = Plan {
            load: Load::Closed { users: 2 },
            duration: Some(duration),
            threads: 1,
            ..Plan::default()
        };
        let out = crate::common::go(plan, &fake);
        let seconds: Vec<u64> = out.generator.timeline.iter().map(|h| h.t).collect();
        assert_eq!(seconds, (0..whole).collect::<Vec<_>>(), "-d {duration:?}");
    }
}
