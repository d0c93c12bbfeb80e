//! Over HTTP/2 and HTTP/3 a closed level is connections, each carrying `--streams` requests at
//! once (h2load's `-c` and `-m`): the sweep's and the capacity search's sentences say so
//! instead of calling them users.

use super::fixtures::{capacity, sweep, CAPACITY_USERS, SWEEP_CLOSED};

#[test]
fn a_closed_sweep_over_streams_counts_connections_x_streams_not_users() {
    let mut s = sweep(SWEEP_CLOSED);
    assert_eq!(s.level_unit(), "users");
    for run in s.steps.iter_mut().flat_map(|st| &mut st.runs) {
        run.config.streams = Some(10);
    }
    assert_eq!(s.level_unit(), "connections x 10 streams");
    let said = s.knees()[0].sentence_in(&s.level_unit());
    assert!(said.contains("connections x 10 streams"), "{said}");
    assert!(!said.contains("users"), "{said}");
}

#[test]
fn a_capacity_over_streams_sustains_connections_x_streams() {
    let mut c = capacity(CAPACITY_USERS);
    assert!(herd_result::capacity::sentence(&c).contains("sustains 4 concurrent users"));
    for p in &mut c.probes {
        p.result.config.streams = Some(10);
    }
    let said = herd_result::capacity::sentence(&c);
    assert!(
        said.contains("sustains 4 connections x 10 streams"),
        "{said}"
    );
    assert!(!said.contains("users"), "{said}");
    assert_eq!(c.level_text(1.0), "1 connection x 10 streams");
}
