//! How a run ended, decided once for every command (`run`, `replay`, `demo`, a shard, a merge;
//! a series' own in herd-series, in the same words); the CLI maps each to its exit code.

use herd_result::{GeneratorVerdict, RunResult};

/// How a result ends, most important first; the CLI maps each to its documented exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conclusion {
    /// The run completed and measured the server (errors from it are data).
    Ok,
    /// The run completed but a threshold failed.
    ThresholdsFailed,
    /// The measurement is invalid: herd, not the server, was the limit.
    GeneratorLimited,
    /// No request got a response: the run measured no server at all.
    NothingAnswered,
    /// Ctrl-C: the run is incomplete.
    Interrupted,
    /// A shard whose share of the run is empty (fewer users or requests than shards): it sent
    /// nothing, rightly; `herd merge` counts it.
    NoShare,
    /// A merge with shards missing: its numbers cover only the shards present.
    Partial,
    /// A capacity search could not decide (noisy, the SLO never broke, too few requests, out
    /// of probes).
    Undecided,
    /// A capacity search found no level that meets the SLO, not even the lowest.
    SloUnmet,
}

/// Responses that arrived, those a script could not judge (its `lua` errors) included: a
/// broken script is not a server that answered nothing.
fn answered(result: &RunResult) -> u64 {
    result.totals.completed + result.errors.get("lua").copied().unwrap_or(0)
}

/// Interrupted beats everything (the run is incomplete); then a run nothing answered (it
/// measured no server at all); then an invalid measurement (the generator was the limit) beats
/// thresholds, which would judge the wrong thing. A shard's thresholds judge a part of the
/// load, so they decide nothing: `herd merge` judges the whole.
pub fn conclude(result: &RunResult) -> Conclusion {
    let sharded = result.shard.as_ref().is_some_and(|h| h.count > 1);
    let t = &result.totals;
    if result.interrupted {
        Conclusion::Interrupted
    } else if sharded && t.completed == 0 && t.errors == 0 && t.dropped == 0 {
        Conclusion::NoShare
    } else if herd_result::answers::nothing_answered(answered(result)) {
        Conclusion::NothingAnswered
    } else if result.generator.verdict == GeneratorVerdict::GeneratorLimited {
        Conclusion::GeneratorLimited
    } else if !sharded && thresholds_failed(result) {
        Conclusion::ThresholdsFailed
    } else {
        Conclusion::Ok
    }
}

/// How a merge of shards ended: interrupted, then generator-limited (naming the shards), then
/// a shard missing, then thresholds, which judge the whole load here.
pub fn conclude_merged(merged: &RunResult) -> Conclusion {
    if merged.interrupted {
        Conclusion::Interrupted
    } else if merged.generator.verdict == GeneratorVerdict::GeneratorLimited {
        Conclusion::GeneratorLimited
    } else if merged.shard.as_ref().is_some_and(|h| h.is_partial()) {
        Conclusion::Partial
    } else if thresholds_failed(merged) {
        Conclusion::ThresholdsFailed
    } else {
        Conclusion::Ok
    }
}

/// A threshold of the run, or of one of its fault windows, failed.
fn thresholds_failed(result: &RunResult) -> bool {
    let windows = result.faults.iter().flat_map(|w| &w.thresholds);
    result.thresholds.iter().chain(windows).any(|t| !t.pass)
}
