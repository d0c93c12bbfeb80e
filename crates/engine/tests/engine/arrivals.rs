//! Random arrival processes (`--arrivals poisson|uniform`) through the whole loop, in virtual
//! time: the count over a long window, the spread of the gaps, one seed one run, and a
//! Poisson plan split into shards that is still the single plan.

use crate::common::{assert_accounted, go, ms};
use herd_engine::fake::{FakeServer, Reply};
use herd_engine::{Load, Plan, Process, Shard};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// When the server received each request of a run of `plan`, in order.
fn received(plan: Plan) -> (herd_engine::RunOutput, Vec<Duration>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let fake = FakeServer::new(move |t, _| {
        log.lock().unwrap().push(t);
        Reply::After(ms(1), 200)
    });
    let out = go(plan, &fake);
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    (out, seen)
}

fn open(rate: f64, secs: u64, process: Process, seed: u64) -> Plan {
    Plan {
        load: Load::Open {
            rate,
            max_connections: 200,
        },
        duration: Some(Duration::from_secs(secs)),
        process,
        seed,
        ..Plan::default()
    }
}

/// The gaps' coefficient of variation (standard deviation over mean).
fn spread(times: &[Duration]) -> f64 {
    let gaps: Vec<f64> = times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
    var.sqrt() / mean
}

#[test]
fn poisson_arrivals_keep_the_rate_with_exponential_gaps() {
    // 200/s for 60 s: 12,000 expected, a standard deviation of 110.
    let (out, times) = received(open(200.0, 60, Process::Poisson, 1));
    assert!(
        (11_560..=12_440).contains(&out.scheduled),
        "{}",
        out.scheduled
    );
    assert_eq!(out.total.completed, out.scheduled);
    assert_accounted(&out);
    let cv = spread(&times);
    assert!(
        (cv - 1.0).abs() < 0.05,
        "exponential gaps have CV 1, not {cv}"
    );
}

#[test]
fn uniform_gaps_spread_less_and_constant_not_at_all() {
    let (_, times) = received(open(200.0, 30, Process::Uniform, 1));
    let cv = spread(&times);
    assert!((cv - 0.577).abs() < 0.05, "uniform on [0, 2/rate]: {cv}");
    let (out, times) = received(open(200.0, 30, Process::Constant, 1));
    assert_eq!(out.scheduled, 6000);
    assert!(spread(&times) < 0.01);
}

#[test]
fn one_seed_one_run_another_seed_another() {
    let a = received(open(100.0, 5, Process::Poisson, 9)).1;
    let b = received(open(100.0, 5, Process::Poisson, 9)).1;
    let c = received(open(100.0, 5, Process::Poisson, 10)).1;
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn a_poisson_plan_split_into_shards_is_the_single_plan() {
    let single = open(100.0, 20, Process::Poisson, 5);
    let (whole, want) = received(single.clone());
    let mut got = Vec::new();
    let mut scheduled = 0;
    for i in 0..3 {
        let plan = Plan {
            shard: Some(Shard::new(i, 3).unwrap()),
            ..single.clone()
        };
        let (out, times) = received(plan);
        scheduled += out.scheduled;
        got.extend(times);
    }
    got.sort();
    assert_eq!(
        scheduled, whole.scheduled,
        "the shards play every arrival once"
    );
    // Each request leaves at its arrival's instant, give or take the loop's shortest wake-up
    // (the exact instants are `open.rs`'s unit test).
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!(
            g.abs_diff(*w) <= Duration::from_micros(200),
            "{g:?} vs {w:?}"
        );
    }
}
