use crate::fake::{Server, Told};
use herd_engine::Control;
use herd_result::capacity::{Outcome, Slo};
use herd_result::Model;
use herd_series::capacity::{capacity, CapacitySpec, SearchConfig};
use std::sync::Arc;
use std::time::Duration;

fn spec(users: bool) -> CapacitySpec {
    CapacitySpec {
        target: "http://127.0.0.1/".into(),
        model: if users { Model::Closed } else { Model::Open },
        search: SearchConfig {
            slo: Slo::parse("p99 < 100ms, errors < 1%").unwrap(),
            start: if users { 1.0 } else { 50.0 },
            max: 1e6,
            min: 1.0,
            precision: 0.05,
            max_probes: 30,
            probe: Duration::from_secs(5),
            min_requests: 500,
            longest: Duration::from_secs(60),
            users,
        },
        cooldown: Duration::ZERO,
    }
}

#[test]
fn the_capacity_loop_finds_the_level_the_server_holds_and_tells_every_probe() {
    let server = Server::new(400.0);
    let mut told = Told::default();
    let (r, error) = capacity(spec(false), &server, &Arc::new(Control::new()), &mut told);
    assert!(error.is_none());
    assert_eq!(r.outcome, Outcome::Found, "{}", r.sentence);
    let found = r.capacity_rps.unwrap();
    assert!((380.0..=400.0).contains(&found), "{found}");
    assert!(r.sentence.contains("sustains"), "{}", r.sentence);
    assert_eq!(told.probed.len(), r.probes.len());
    assert_eq!(server.runs.get(), r.probes.len(), "a probe per run");
    for (i, (n, level, held)) in told.probed.iter().enumerate() {
        assert_eq!(*n, i + 1);
        assert_eq!(*level, r.probes[i].level);
        assert_eq!(*held, r.probes[i].held);
    }
}

#[test]
fn the_closed_model_answers_in_users() {
    let (r, _) = capacity(
        spec(true),
        &Server::new(8.0),
        &Arc::new(Control::new()),
        &mut (),
    );
    assert_eq!(r.capacity_users, Some(8), "{}", r.sentence);
    assert_eq!(r.capacity_rps, None);
}

#[test]
fn a_failed_probe_ends_the_search_with_the_probes_before_it() {
    let mut server = Server::new(400.0);
    server.fail_at = Some(3);
    let (r, error) = capacity(spec(false), &server, &Arc::new(Control::new()), &mut ());
    assert!(error.is_some());
    assert_eq!(r.probes.len(), 2);
    assert_eq!(r.capacity_rps, None);
}

#[test]
fn ctrl_c_ends_the_search_without_an_answer() {
    let mut server = Server::new(400.0);
    server.cancel_at = Some(2);
    let (r, error) = capacity(spec(false), &server, &Arc::new(Control::new()), &mut ());
    assert!(error.is_none());
    assert!(r.interrupted);
    assert_eq!(r.outcome, Outcome::Interrupted);
    assert_eq!(
        r.probes.len(),
        1,
        "the probe Ctrl-C cut short is not judged"
    );
}
