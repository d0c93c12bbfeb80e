use crate::fake::{Server, Told};
use herd_engine::Control;
use herd_result::sweep::{StopRule, SweepTarget};
use herd_result::Model;
use herd_run::{Length, Runs};
use herd_series::sweep::{sweep, SweepSpec};
use std::sync::Arc;
use std::time::Duration;

fn spec(targets: &[&str]) -> SweepSpec {
    SweepSpec {
        model: Model::Open,
        targets: targets
            .iter()
            .map(|n| SweepTarget {
                name: (*n).to_owned(),
                url: format!("http://127.0.0.1/{n}"),
                named: true,
            })
            .collect(),
        levels: vec![100.0, 200.0, 300.0, 400.0, 500.0, 600.0],
        length: Length::Time(Duration::from_secs(1)),
        calls_per_conn: None,
        timeout: Duration::from_secs(10),
        cooldown: Duration::ZERO,
        stop: StopRule::default(),
    }
}

#[test]
fn a_sweep_stops_once_every_target_broke_the_stop_rule_two_steps_in_a_row() {
    let runs: Vec<Box<dyn Runs>> = vec![Box::new(Server::new(250.0)), Box::new(Server::new(350.0))];
    let mut told = Told::default();
    let (r, error) = sweep(
        spec(&["a", "b"]),
        &runs,
        &Arc::new(Control::new()),
        &mut told,
    );
    assert!(error.is_none());
    // a breaks from 300, b from 400: both two in a row at 500.
    let levels: Vec<f64> = r.steps.iter().map(|s| s.level).collect();
    assert_eq!(levels, [100.0, 200.0, 300.0, 400.0, 500.0]);
    assert!(r
        .stopped_early
        .as_deref()
        .unwrap()
        .contains("every target broke the stop rule"));
    assert!(!r.interrupted);
    assert_eq!(told.ran.len(), 10, "a line per target per step");
    assert_eq!(told.ran[0], (100.0, "a".to_owned()));
    assert_eq!(told.ran[1], (100.0, "b".to_owned()));
    assert_eq!(
        r.config.levels.len(),
        6,
        "the result keeps every level asked for"
    );
}

#[test]
fn a_sweep_that_breaks_only_at_its_last_level_did_not_stop_early() {
    let runs: Vec<Box<dyn Runs>> = vec![Box::new(Server::new(450.0))];
    let (r, _) = sweep(spec(&["a"]), &runs, &Arc::new(Control::new()), &mut ());
    assert_eq!(r.steps.len(), 6);
    assert_eq!(r.stopped_early, None);
}

#[test]
fn a_failed_run_ends_the_sweep_with_the_complete_steps_and_the_error() {
    let mut server = Server::new(1e6);
    server.fail_at = Some(2); // the second target at the second level
    let runs: Vec<Box<dyn Runs>> = vec![Box::new(Server::new(1e6)), Box::new(server)];
    let mut told = Told::default();
    let (r, error) = sweep(
        spec(&["a", "b"]),
        &runs,
        &Arc::new(Control::new()),
        &mut told,
    );
    assert_eq!(r.steps.len(), 1, "the incomplete step is not kept");
    assert!(error.unwrap().to_string().contains("cannot start"));
    assert!(!r.interrupted);
    assert_eq!(told.ran.len(), 3);
}

#[test]
fn ctrl_c_during_a_run_keeps_the_complete_step_and_says_interrupted() {
    let mut server = Server::new(1e6);
    server.cancel_at = Some(2);
    let runs: Vec<Box<dyn Runs>> = vec![Box::new(server)];
    let (r, error) = sweep(spec(&["a"]), &runs, &Arc::new(Control::new()), &mut ());
    assert!(error.is_none());
    assert!(r.interrupted);
    assert_eq!(
        r.steps.len(),
        2,
        "the run Ctrl-C ended is complete for one target"
    );
}

/// Everything a sink hears, in order: a series' steps and its runs' events are one stream.
#[derive(Default)]
struct Heard(Vec<String>);

impl herd_run::Sink for Heard {
    fn step(&mut self, n: usize, level: f64) {
        self.0.push(format!("step {n} at {level}"));
    }
    fn finished(&mut self) {
        self.0.push("run finished".to_owned());
    }
    fn stepped(&mut self, step: &herd_run::Stepped, _run: &mut herd_result::RunResult) {
        self.0.push(format!("stepped at {}", step.level()));
    }
    fn so_far(&mut self, series: herd_run::SoFar) {
        let herd_run::SoFar::Sweep(so_far) = series else {
            panic!("a sweep tells a sweep so far");
        };
        self.0
            .push(format!("so far {} steps", so_far().steps.len()));
    }
}

#[test]
fn a_series_tells_each_step_around_its_runs_events_to_the_one_sink() {
    let runs: Vec<Box<dyn Runs>> = vec![Box::new(Server::new(1e6)), Box::new(Server::new(1e6))];
    let mut heard = Heard::default();
    let mut spec = spec(&["a", "b"]);
    spec.levels.truncate(2);
    let (r, error) = sweep(spec, &runs, &Arc::new(Control::new()), &mut heard);
    assert!(error.is_none());
    assert_eq!(r.steps.len(), 2);
    assert_eq!(
        heard.0,
        [
            "step 1 at 100",
            "run finished",
            "stepped at 100",
            "step 2 at 100",
            "run finished",
            "stepped at 100",
            "so far 1 steps",
            "step 3 at 200",
            "run finished",
            "stepped at 200",
            "step 4 at 200",
            "run finished",
            "stepped at 200",
            "so far 2 steps",
        ]
    );
}
