//! Shards are merged before they are stored: a store keeps runs, not parts of them.

use crate::error::StoreError;
use herd_result::RunResult;
use std::collections::BTreeMap;

/// A run's shards share a plan hash, a shard count and a start.
type RunKey = (String, u64, Option<String>);

/// The results given (name, result) as whole runs: results without a shard header as they
/// are, the shards of each run (same plan hash, shard count and start) merged exactly into
/// one, named by their files.
pub fn whole_runs(
    results: Vec<(String, RunResult)>,
) -> Result<Vec<(String, RunResult)>, StoreError> {
    let mut out = Vec::new();
    let mut groups: BTreeMap<RunKey, Vec<(String, RunResult)>> = BTreeMap::new();
    for (name, r) in results {
        match &r.shard {
            Some(h) => groups
                .entry((h.plan_hash.clone(), h.count, h.start_at.clone()))
                .or_default()
                .push((name, r)),
            None => out.push((name, r)),
        }
    }
    for (_, shards) in groups {
        let names: Vec<String> = shards.iter().map(|(n, _)| n.clone()).collect();
        let merged = herd_result::merge::merge(shards)
            .map_err(|e| StoreError::Bad(format!("the shards cannot be merged: {e}")))?;
        out.push((names.join(" + "), merged));
    }
    Ok(out)
}
