//! A capacity search as a command line asks for it: the flags' values with their defaults,
//! checked all at once, into a [`CapacitySpec`].

use super::{CapacitySpec, SearchConfig};
use herd_result::capacity::Slo;
use herd_result::Model;
use std::time::Duration;

/// Requests a probe aims for at least, whatever the SLO (which may ask for more: a p99 needs
/// 1,000, see [`super::evidence`]).
const MIN_REQUESTS: u64 = 500;

/// The longest a probe is made, in probe durations, to get the requests a verdict needs.
const LONGEST_PROBE: u32 = 12;

/// `herd capacity`'s flags, `None` where not given.
#[derive(Clone, Debug)]
pub struct CapacityFlags {
    pub target: String,
    /// `--slo`, as written.
    pub slo: String,
    /// `--users`: the closed model, a number of users rather than a rate.
    pub users: bool,
    pub start: Option<f64>,
    pub max: Option<f64>,
    pub probe: Duration,
    pub max_probes: usize,
    /// `--precision`, in percent.
    pub precision: f64,
    pub cooldown: Duration,
}

/// Why a capacity search cannot be sharded (`--shard`, `--shard-from-env`, `--start-at`): each
/// probe's level follows from what the last measured, and a shard measures only its share, so
/// the shards would choose different levels and no merge adds them up.
pub const NOT_SHARDED: &str = "herd capacity cannot be sharded (--shard, --shard-from-env, --start-at): each shard would judge its own share and probe different levels; shard a sweep over the levels instead (herd sweep --rates ... --shard I/N, then herd merge)";

impl CapacityFlags {
    pub fn model(&self) -> Model {
        if self.users {
            Model::Closed
        } else {
            Model::Open
        }
    }

    /// The first level probed and the highest allowed: 50 req/s up to 1,000,000, or 1 user up
    /// to 10,000, unless given.
    pub fn range(&self) -> (f64, f64) {
        let (start, max) = if self.users {
            (1.0, 10_000.0)
        } else {
            (50.0, 1e6)
        };
        (self.start.unwrap_or(start), self.max.unwrap_or(max))
    }

    /// The search the flags describe, or every problem with them.
    pub fn spec(&self) -> Result<CapacitySpec, Vec<String>> {
        let mut problems = Vec::new();
        let slo = Slo::parse(&self.slo).map_err(|e| problems.push(format!("--slo: {e}")));
        let (start, max) = self.range();
        if !(start.is_finite() && start > 0.0 && max.is_finite() && max >= start) {
            problems.push(format!(
                "--start ({start}) must be above 0 and at most --max ({max})"
            ));
        }
        if self.max_probes == 0 {
            problems.push("--max-probes must be at least 1".to_owned());
        }
        if self.precision <= 0.0 {
            problems.push("--precision must be above 0%".to_owned());
        }
        let slo = match slo {
            Ok(slo) if problems.is_empty() => slo,
            _ => return Err(problems),
        };
        Ok(CapacitySpec {
            target: self.target.clone(),
            model: self.model(),
            search: SearchConfig {
                slo,
                start,
                max,
                min: 1.0,
                precision: self.precision / 100.0,
                max_probes: self.max_probes,
                probe: self.probe,
                min_requests: MIN_REQUESTS,
                longest: self.probe * LONGEST_PROBE,
                users: self.users,
            },
            cooldown: self.cooldown,
        })
    }
}
