//! What the tests share: runs made from a real recorded result (`herd run` against the mock),
//! and a throwaway PostgreSQL cluster.

use herd_result::{decode_histogram, encode_histogram, summarize_us, RunResult};
use std::collections::BTreeMap;

/// A 4-second open-model run against `herd serve`, with its per-second histograms.
pub fn recorded() -> RunResult {
    let json = include_str!("../fixtures/run-mock.json");
    herd_result::parse_json(json, "run-mock.json").unwrap()
}

fn scaled(text: &str, factor: f64) -> (String, hdrhistogram::Histogram<u64>) {
    let h = decode_histogram(text).unwrap();
    let mut out = herd_metrics::new_histogram();
    for v in h.iter_recorded() {
        let x = ((v.value_iterated_to() as f64) * factor).round().max(1.0) as u64;
        out.record_n(x, v.count_at_value()).unwrap();
    }
    (encode_histogram(&out), out)
}

/// Run `i` of a series: the recorded run started `i` hours later, labelled `commit=cNN`,
/// with every latency (whole run, per second, per name) multiplied by `factor`.
pub fn variant(base: &RunResult, i: usize, factor: f64) -> RunResult {
    let mut r = base.clone();
    let (text, h) = scaled(&r.histograms.latency, factor);
    r.histograms.latency = text;
    r.latency_ms = summarize_us(&h);
    for e in &mut r.timeline {
        e.p50_ms *= factor;
        e.p90_ms *= factor;
        e.p99_ms *= factor;
        e.max_ms *= factor;
        if let Some(t) = &e.latency_histogram {
            e.latency_histogram = Some(scaled(t, factor).0);
        }
    }
    let start = r.timeline_start_unix_s.unwrap_or(1_700_000_000) + 3600 * i as u64;
    r.timeline_start_unix_s = Some(start);
    r.started_at = time::OffsetDateTime::from_unix_timestamp(start as i64)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    r.config.labels = BTreeMap::from([
        ("branch".to_owned(), "main".to_owned()),
        ("commit".to_owned(), format!("c{i:02}")),
    ]);
    r
}

/// A series of `n` runs, the latencies of runs `from` on (counting from 1) raised by
/// `raise`, each run a little off its level (a seeded ±`jitter`).
pub fn series(n: usize, from: usize, raise: f64, jitter: f64, seed: u64) -> Vec<RunResult> {
    use rand::{Rng, SeedableRng};
    let base = recorded();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let level = if i + 1 >= from { 1.0 + raise } else { 1.0 };
            variant(&base, i, level * (1.0 + rng.gen_range(-jitter..=jitter)))
        })
        .collect()
}

pub use herd_testkit::Postgres as Pg;
