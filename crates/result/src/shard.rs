//! The header of a result played as one shard of a run, or merged from several: what `herd
//! merge` checks before adding anything up (same plan, same shard count, no shard twice) and
//! what it reports after (which shards are missing, how late each started, whose clock drifted).

use serde::{Deserialize, Serialize};

/// Which run, which shards, and how each instance started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// SHA-256 of the plan every shard ran (hex): shards of different plans never merge.
    pub plan_hash: String,
    /// `N` of `--shard I/N`.
    pub count: u64,
    /// The shared start instant (`--start-at`), RFC 3339 UTC, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// The instances this result covers, by index: one for a shard's own file.
    pub instances: Vec<ShardInstance>,
    /// Shards of `0..count` this result does not cover. Non-empty means the numbers are
    /// partial: they are never scaled up to stand for the missing shards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u64>,
}

/// One instance of a sharded run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardInstance {
    /// `I` of `--shard I/N` (0-based).
    pub index: u64,
    /// The machine (host name) it ran on.
    pub host: String,
    pub herd_version: String,
    /// How late the instance began against the shared start instant, in ms (0 without one).
    pub start_lag_ms: f64,
    /// The kernel's clock status (adjtimex): `false` when it says the clock is unsynchronised,
    /// absent when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_synchronised: Option<bool>,
    /// The kernel's estimate of the clock's maximum error, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_max_error_ms: Option<f64>,
    /// `--late skip`: the instance was ready after the start and played only the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub started_late: bool,
    /// With `started_late`: the arrivals of its share intended before it started, neither sent
    /// nor counted as scheduled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ShardHeader {
    /// `I/N` of a shard's own file, or `I,J/N` of a merged one.
    pub fn label(&self) -> String {
        let ids: Vec<String> = self.instances.iter().map(|i| i.index.to_string()).collect();
        format!("{}/{}", ids.join(","), self.count)
    }

    /// Marks shards that no instance covers as missing.
    pub fn compute_missing(&mut self) {
        let have: std::collections::BTreeSet<u64> =
            self.instances.iter().map(|i| i.index).collect();
        self.missing = (0..self.count).filter(|i| !have.contains(i)).collect();
    }

    pub fn is_partial(&self) -> bool {
        !self.missing.is_empty()
    }
}
