//! A short run of every fuzz target in the test suite: each corpus input and 500 mutants of
//! them end without a panic. The long runs are `cargo run --release -p herd-fuzz`.

use herd_fuzz::mutate::mutate;
use herd_fuzz::{corpus, Target};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[test]
fn every_target_survives_its_corpus_and_500_mutants() {
    for &t in Target::all() {
        let seeds = corpus(t.name());
        assert!(!seeds.is_empty(), "fuzz/corpus/{} is empty", t.name());
        let mut rng = SmallRng::seed_from_u64(42);
        for s in &seeds {
            t.run(s);
        }
        for _ in 0..500 {
            let seed = &seeds[rng.gen_range(0..seeds.len())];
            let other = &seeds[rng.gen_range(0..seeds.len())];
            t.run(&mutate(&mut rng, seed, other, t.dictionary()));
        }
    }
}

/// The inputs fuzzing found, kept as regression seeds: each once made a target panic or hang.
#[test]
fn what_fuzzing_found_stays_fixed() {
    let found = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("found");
    for &t in Target::all() {
        let dir = found.join(t.name());
        for f in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let input = std::fs::read(f.path()).unwrap();
            let started = std::time::Instant::now();
            t.run(&input);
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "{} took {:?}",
                f.path().display(),
                started.elapsed()
            );
        }
    }
}
