//! Several stored runs as one: herd-result's exact merge of shards, the runs laid end to end
//! in time so their seconds stay each run's own. Counts add, histograms add and every
//! percentile is computed again from the sum; the per-second samples of all the runs are the
//! merged run's, so a comparison against it judges noise on all of them.

use crate::error::StoreError;
use herd_result::{RunResult, ShardHeader, ShardInstance};

/// The runs (id, result) merged into one; a single run comes back as it is.
pub fn merge_runs(runs: Vec<(i64, RunResult)>) -> Result<RunResult, StoreError> {
    let n = runs.len();
    if n == 1 {
        return Ok(runs.into_iter().next().map(|(_, r)| r).expect("one run"));
    }
    if n == 0 {
        return Err(StoreError::NotFound("no runs to merge".to_owned()));
    }
    let ids: Vec<i64> = runs.iter().map(|(id, _)| *id).collect();
    let base = runs
        .iter()
        .filter_map(|(_, r)| r.timeline_start_unix_s)
        .min()
        .unwrap_or(0);
    let mut offset = 0u64;
    let mut timeline = Vec::new();
    let mut measured = 0.0;
    let mut merge = herd_result::merge::Merge::new();
    for (i, (id, mut r)) in runs.into_iter().enumerate() {
        // Each run's own slot of whole seconds; its drain's tail is in its totals, not here.
        let slot = (r.duration_s.round() as u64).max(1);
        let whole: Vec<u64> = r.samples().map(|e| e.t).collect();
        for e in r.timeline.iter().filter(|e| e.t < slot) {
            let mut e = e.clone();
            e.partial = !whole.contains(&e.t);
            e.t += offset;
            timeline.push(e);
        }
        measured += r.duration_s;
        r.shard = Some(ShardHeader {
            plan_hash: "herd store".to_owned(),
            count: n as u64,
            start_at: Some("herd store".to_owned()),
            instances: vec![ShardInstance {
                index: i as u64,
                host: format!("run #{id}"),
                herd_version: r.herd_version.clone(),
                start_lag_ms: 0.0,
                clock_synchronised: None,
                clock_max_error_ms: None,
                started_late: false,
                missed: 0,
            }],
            missing: Vec::new(),
        });
        r.timeline_start_unix_s = Some(base + offset);
        // A baseline is judged by the comparison's threshold, not by each run's own.
        r.thresholds.clear();
        merge.add(&format!("run #{id}"), r);
        offset += slot;
    }
    let mut merged = merge
        .finish()
        .map_err(|e| StoreError::Bad(format!("the runs cannot be merged: {e}")))?;
    merged.duration_s = offset as f64;
    merged.throughput_rps = if measured > 0.0 {
        merged.totals.completed as f64 / measured
    } else {
        0.0
    };
    merged.timeline = timeline;
    merged.shard = None;
    merged.warnings.push(format!(
        "{n} stored runs merged: {}",
        ids.iter()
            .map(|i| format!("#{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(merged)
}
