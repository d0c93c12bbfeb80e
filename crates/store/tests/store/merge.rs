//! Runs read back and merged from the store are exact: the same result, the same buckets.

use super::common::{recorded, series};
use herd_result::decode_histogram;
use herd_store::{merge_runs, Store};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path().join("runs.db").to_str().unwrap()).unwrap();
    (dir, s)
}

#[test]
fn a_run_read_back_is_the_run_stored() {
    let (_d, mut s) = store();
    let r = recorded();
    let id = s.add(&r, "test").unwrap().id();
    let back = s.run(id).unwrap();
    assert_eq!(back, r);
    let merged = merge_runs(vec![(id, back)]).unwrap();
    assert_eq!(merged.latency_ms.count, r.latency_ms.count);
    assert_eq!(merged.latency_ms.max, r.latency_ms.max);
    assert_eq!(merged.latency_ms.p99, r.latency_ms.p99);
}

#[test]
fn runs_merged_from_the_store_add_their_histograms_bucket_for_bucket() {
    let (_d, mut s) = store();
    let runs = series(3, 2, 0.5, 0.0, 1);
    let mut ids = Vec::new();
    let mut sum = herd_metrics::new_histogram();
    for r in &runs {
        ids.push(s.add(r, "test").unwrap().id());
        sum.add(decode_histogram(&r.histograms.latency).unwrap())
            .unwrap();
    }
    let back: Vec<_> = ids.iter().map(|&id| (id, s.run(id).unwrap())).collect();
    let m = merge_runs(back).unwrap();
    let h = decode_histogram(&m.histograms.latency).unwrap();
    assert_eq!(h, sum);
    assert_eq!(
        m.latency_ms.count,
        runs.iter().map(|r| r.latency_ms.count).sum::<u64>()
    );
    assert_eq!(m.latency_ms.p99, sum.value_at_quantile(0.99) as f64 / 1e3);
    assert_eq!(m.latency_ms.max, sum.max() as f64 / 1e3);
    assert_eq!(
        m.totals.completed,
        runs.iter().map(|r| r.totals.completed).sum::<u64>()
    );
    // The rate is the runs' rate, not three runs' at once; their seconds are all samples.
    let rate = runs[0].throughput_rps;
    assert!(
        (m.throughput_rps / rate - 1.0).abs() < 0.05,
        "{} vs {rate}",
        m.throughput_rps
    );
    let whole: usize = runs.iter().map(|r| r.samples().count()).sum();
    assert_eq!(m.samples().count(), whole);
}

#[test]
fn the_store_grows_by_less_than_a_run_json_per_run() {
    let (d, s) = store();
    let runs = series(50, 51, 0.0, 0.05, 2);
    let json = serde_json::to_vec_pretty(&runs[0]).unwrap().len() as u64;
    let size = |d: &tempfile::TempDir| {
        ["runs.db", "runs.db-wal"]
            .iter()
            .filter_map(|f| std::fs::metadata(d.path().join(f)).ok())
            .map(|m| m.len())
            .sum::<u64>()
    };
    // Closed, the store's log is checkpointed into its file: sizes compare.
    drop(s);
    let before = size(&d);
    let mut s = Store::open(d.path().join("runs.db").to_str().unwrap()).unwrap();
    for r in &runs {
        s.add(r, "test").unwrap();
    }
    drop(s);
    let per_run = size(&d).saturating_sub(before) / 50;
    assert!(
        per_run <= json,
        "{per_run} bytes a run against its JSON's {json}"
    );
}
