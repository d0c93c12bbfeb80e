//! The shards of a sweep (`herd sweep --shard I/N`) added up step by step: each step's run of
//! each target is merged as a run's shards are, so the merged sweep is the single machine's,
//! judged (knees, the stop rule) on the whole.

use super::{Merge, MergeError};
use crate::sweep::{SweepResult, SweepStep};

/// Merges the sweeps read from the named files. They must be one sweep's shards: the same
/// model, targets and levels; the steps every shard completed are merged, and a shard that
/// ran fewer (interrupted) makes the merged sweep end there, saying so.
pub fn merge_sweeps(sweeps: Vec<(String, SweepResult)>) -> Result<SweepResult, MergeError> {
    let mut problems = Vec::new();
    let Some((first_name, first)) = sweeps.first() else {
        return Err(MergeError(vec!["no sweep to merge".to_owned()]));
    };
    let urls = |s: &SweepResult| s.targets.iter().map(|t| t.url.clone()).collect::<Vec<_>>();
    for (name, s) in &sweeps[1..] {
        if s.model != first.model
            || urls(s) != urls(first)
            || s.config.levels != first.config.levels
        {
            problems.push(format!(
                "{name} is not a shard of the same sweep as {first_name}: its model, targets or levels differ"
            ));
        }
    }
    if !problems.is_empty() {
        return Err(MergeError(problems));
    }
    let steps = sweeps.iter().map(|(_, s)| s.steps.len()).min().unwrap_or(0);
    let mut merged = first.clone();
    merged.steps = Vec::with_capacity(steps);
    merged.interrupted = sweeps.iter().any(|(_, s)| s.interrupted);
    for i in 0..steps {
        let level = first.steps[i].level;
        let mut runs = Vec::with_capacity(first.targets.len());
        for (t, target) in first.targets.iter().enumerate() {
            let mut m = Merge::new();
            for (name, s) in &sweeps {
                match s.steps[i].runs.get(t) {
                    Some(r) => m.add(
                        &format!("{name} (step {level}, {})", target.name),
                        r.clone(),
                    ),
                    None => problems.push(format!(
                        "{name}: step {level} has no run of {}",
                        target.name
                    )),
                }
            }
            match m.finish() {
                Ok(r) => runs.push(r),
                Err(e) => problems.extend(e.0),
            }
        }
        merged.steps.push(SweepStep { level, runs });
    }
    if !problems.is_empty() {
        return Err(MergeError(problems));
    }
    let longest = sweeps.iter().map(|(_, s)| s.steps.len()).max().unwrap_or(0);
    merged.stopped_early = if steps < longest {
        Some(format!(
            "a shard ran only {steps} of the steps the others ran: the merge ends there"
        ))
    } else {
        None
    };
    Ok(merged)
}
