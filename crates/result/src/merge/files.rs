//! `herd merge FILE...`: the shards' files read, runs and sweeps kept apart (a sweep's shards
//! merge only with each other), merged; and what a partial result says it lacks.

use super::{merge_sweeps, Merge};
use crate::sweep::SweepResult;
use crate::{Document, RunResult};
use std::path::PathBuf;

/// What the files added up to.
pub enum Merged {
    Run(Box<RunResult>),
    Sweep(Box<SweepResult>),
}

/// Reads and merges the files; every file that cannot take part is named at once.
pub fn merge_files(files: &[PathBuf]) -> Result<Merged, String> {
    let mut merge = Merge::new();
    let mut sweeps = Vec::new();
    let mut unreadable = Vec::new();
    for f in files {
        let name = f.display().to_string();
        match crate::read_document(f) {
            Ok(Document::Run(r)) => merge.add(&name, *r),
            Ok(Document::Sweep(s)) => sweeps.push((name, *s)),
            Ok(Document::Capacity(_)) => unreadable.push(format!(
                "{name} is a capacity search: its shards would have searched apart, so herd capacity is not sharded; merge runs or sweeps"
            )),
            Err(e) => unreadable.push(format!("{name}: {e}")),
        }
    }
    if !sweeps.is_empty() {
        if sweeps.len() != files.len() || !unreadable.is_empty() {
            unreadable.insert(0, "a sweep's shards merge only with each other: give the files of one herd sweep --shard I/N".to_owned());
            return Err(format!("nothing merged:\n{}", unreadable.join("\n")));
        }
        let merged = merge_sweeps(sweeps).map_err(|e| format!("nothing merged:\n{e}"))?;
        return Ok(Merged::Sweep(Box::new(merged)));
    }
    let merged = merge.finish();
    let mut problems = unreadable;
    if let Err(e) = &merged {
        problems.extend(e.0.iter().cloned());
    }
    if !problems.is_empty() {
        return Err(format!("nothing merged:\n{}", problems.join("\n")));
    }
    Ok(Merged::Run(Box::new(merged.expect("no problems"))))
}

/// A merged run some shards of which are missing: which, and that nothing stands for them.
pub fn partial_run(merged: &RunResult) -> Option<String> {
    let h = merged.shard.as_ref().filter(|h| h.is_partial())?;
    let missing: Vec<String> = h
        .missing
        .iter()
        .map(|i| format!("{i}/{}", h.count))
        .collect();
    Some(format!(
        "partial result: shard {} missing (nothing was scaled up to stand for it)",
        missing.join(", ")
    ))
}

/// A merged sweep some steps of which lack shards: the first such step's shards.
pub fn partial_sweep(merged: &SweepResult) -> Option<String> {
    let first = merged.steps.iter().flat_map(|s| &s.runs).find_map(|r| {
        r.shard
            .as_ref()
            .filter(|h| h.is_partial())
            .map(|h| h.label())
    })?;
    Some(format!("partial result: only shards {first} of some steps (nothing was scaled up to stand for the rest)"))
}
