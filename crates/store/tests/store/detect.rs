//! Change points as a table of series: a step is found where it is, a flat series and a
//! single noisy run give none.

use super::common::{self, series};
use herd_store::detect::{detect, Options, Point};
use herd_store::{Filter, RunRow, Store};

fn points(values: &[f64], noise: f64) -> Vec<Point> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Point {
            run: RunRow {
                id: i as i64 + 1,
                started_unix: i as i64,
                started_at: String::new(),
                target: String::new(),
                workload: String::new(),
                workload_hash: String::new(),
                herd_version: String::new(),
                machine: String::new(),
                json_bytes: 0,
                labels: Default::default(),
            },
            value: *v,
            noise: Some(noise),
        })
        .collect()
}

/// A level with a seeded wobble of ±`j`.
fn wobbly(n: usize, j: f64, seed: u64) -> Vec<f64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|_| 10.0 * (1.0 + rng.gen_range(-j..=j)))
        .collect()
}

#[test]
fn a_step_is_found_at_its_first_run() {
    for seed in 1..6 {
        let mut v = wobbly(40, 0.03, seed);
        for x in &mut v[25..] {
            *x *= 1.2;
        }
        let d = detect(points(&v, 0.1), &Options::default());
        let at: Vec<usize> = d.changes.iter().map(|c| c.index).collect();
        assert_eq!(at.len(), 1, "seed {seed}: {at:?}");
        assert!((24..=26).contains(&at[0]), "seed {seed}: {at:?}");
        let c = &d.changes[0];
        assert!((c.size - 0.2).abs() < 0.05, "size {}", c.size);
        assert!(c.confidence > 0.99);
    }
}

#[test]
fn a_flat_series_has_no_change() {
    for seed in 1..11 {
        let d = detect(points(&wobbly(40, 0.03, seed), 0.1), &Options::default());
        assert!(d.changes.is_empty(), "seed {seed}: {:?}", d.changes);
    }
}

#[test]
fn one_noisy_run_is_not_a_change() {
    for at in [0, 5, 20, 38, 39] {
        let mut v = wobbly(40, 0.03, 7);
        v[at] *= 3.0;
        let d = detect(points(&v, 0.1), &Options::default());
        assert!(d.changes.is_empty(), "outlier at {at}: {:?}", d.changes);
    }
}

#[test]
fn a_step_smaller_than_the_runs_own_noise_is_not_a_change() {
    let mut v = wobbly(40, 0.01, 3);
    for x in &mut v[20..] {
        *x *= 1.05;
    }
    // Each run's own per-second error is three times the step: twenty runs a side cannot
    // tell it.
    assert!(detect(points(&v, 1.5), &Options::default())
        .changes
        .is_empty());
    // With runs as steady as their spread, the same step is a change.
    assert_eq!(
        detect(points(&v, 0.01), &Options::default()).changes.len(),
        1
    );
}

#[test]
fn the_same_seed_gives_the_same_answer() {
    let mut v = wobbly(30, 0.05, 9);
    for x in &mut v[15..] {
        *x *= 1.1;
    }
    let a = detect(points(&v, 0.1), &Options::default());
    let b = detect(points(&v, 0.1), &Options::default());
    assert_eq!(a, b);
}

/// The bar: 40 runs made from a real recorded run, p99 (every latency) 20% higher from run
/// 26 on, stored and read back: run 26 (±1) is named, with its commit, and nothing else.
#[test]
fn stored_runs_with_p99_raised_from_run_26_name_run_26() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.db");
    let mut store = Store::open(path.to_str().unwrap()).unwrap();
    for r in series(40, 26, 0.20, 0.02, 11) {
        store.add(&r, "test").unwrap();
    }
    let points = store.series(&Filter::default(), "p99", "").unwrap();
    assert_eq!(points.len(), 40);
    assert!(
        points.iter().all(|p| p.noise.is_some()),
        "each run's own noise is kept"
    );
    let d = detect(points, &Options::default());
    assert_eq!(d.changes.len(), 1, "{:?}", d.changes);
    let c = &d.changes[0];
    assert!((25..=27).contains(&(c.index + 1)), "run {}", c.index + 1);
    assert!(c.run.labels["commit"].starts_with('c'));
    assert!(c.size > 0.1 && c.size < 0.3, "size {}", c.size);

    let mut flat = Store::open(dir.path().join("flat.db").to_str().unwrap()).unwrap();
    for r in series(40, 41, 0.0, 0.02, 12) {
        flat.add(&r, "test").unwrap();
    }
    let d = detect(
        flat.series(&Filter::default(), "p99", "").unwrap(),
        &Options::default(),
    );
    assert!(d.changes.is_empty(), "{:?}", d.changes);
    let _ = common::recorded();
}
