//! Where a request's time went: a connection's set-up split into its TCP connect and its TLS
//! handshake, however the handshake's events fall.

use crate::common::{assert_accounted, go, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::{Load, Plan};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

fn run_with_tls(tls: Duration) -> herd_engine::RunOutput {
    let mut fake = FakeServer::new(|_, _| Reply::After(ms(5), 200));
    fake.connect_time = ms(2);
    fake.tls_time = Some(tls);
    let plan = Plan {
        load: Load::Closed { users: 3 },
        duration: None,
        requests: Some(30),
        calls_per_conn: Some(2),
        ..Plan::default()
    };
    let out = go(plan, &fake);
    assert_eq!(out.total.completed, 30);
    assert_eq!(
        fake.connects.load(Relaxed),
        15,
        "a new connection every 2 requests"
    );
    assert_accounted(&out);
    out
}

#[test]
fn every_tls_connection_has_a_connect_and_a_tls_phase() {
    let out = run_with_tls(ms(3));
    let (connect, tls) = (&out.total.connect, &out.total.tls);
    assert_eq!((connect.len(), tls.len()), (15, 15));
    // The set-up (TCP then TLS) is 5 ms, 3 of them the handshake.
    assert!(
        (4_990..=5_010).contains(&connect.min()),
        "{}",
        connect.min()
    );
    assert!(
        (4_990..=5_010).contains(&connect.max()),
        "{}",
        connect.max()
    );
    assert!((2_990..=3_010).contains(&tls.min()), "{}", tls.min());
    assert!((2_990..=3_010).contains(&tls.max()), "{}", tls.max());
}

#[test]
fn a_handshake_done_in_the_connects_own_event_still_has_a_tls_phase() {
    // The server's handshake flight is there as soon as TCP is: the session sees the connection
    // open in one step, and the TLS phase must not fold into the connect phase.
    let out = run_with_tls(Duration::ZERO);
    let (connect, tls) = (&out.total.connect, &out.total.tls);
    assert_eq!((connect.len(), tls.len()), (15, 15));
    assert!(
        (1_990..=2_010).contains(&connect.max()),
        "{}",
        connect.max()
    );
    assert!(tls.max() <= 10, "{}", tls.max());
}
