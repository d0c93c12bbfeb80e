//! A sweep as a command line asks for it: its levels, each step's length and the stop rule,
//! with their defaults, and what a sharded sweep cannot do.

use crate::levels::parse_levels;
use herd_result::sweep::StopRule;
use herd_result::Model;
use herd_run::Length;
use std::time::Duration;

/// `herd sweep`'s flags that shape the series, `None` where not given.
#[derive(Clone, Debug, Default)]
pub struct SweepFlags {
    /// `--rates` (the open model) or `--connections` (closed), as written.
    pub rates: Option<String>,
    pub connections: Option<String>,
    pub step_duration: Option<Duration>,
    /// `--num-conns`: each step makes this many connections of `calls_per_conn` requests.
    pub num_conns: Option<u64>,
    pub calls_per_conn: Option<u64>,
    /// `--stop`: criteria of a healthy step, replacing the two below.
    pub stop: Option<String>,
    /// `--stop-errors`, in percent.
    pub stop_errors: f64,
    pub stop_p99: Option<Duration>,
    pub no_stop: bool,
    /// `--cooldown`: the pause between steps.
    pub cooldown: Duration,
}

impl SweepFlags {
    /// The model and its levels in order (the closed model's rounded to whole users, at least 1).
    pub fn levels(&self) -> Result<(Model, Vec<f64>), String> {
        match (&self.rates, &self.connections) {
            (Some(r), _) => Ok((Model::Open, parse_levels(r)?)),
            (None, Some(c)) => {
                let users = parse_levels(c)?;
                Ok((
                    Model::Closed,
                    users.iter().map(|u| u.round().max(1.0)).collect(),
                ))
            }
            (None, None) => Err("give --rates (open model) or --connections (closed)".to_owned()),
        }
    }

    /// Each step's length: `--num-conns` x `--calls-per-conn` requests, or a time (10 s).
    pub fn length(&self) -> Length {
        match self.num_conns {
            Some(n) => Length::Requests(n.saturating_mul(self.calls_per_conn.unwrap_or(1))),
            None => Length::Time(self.step_duration.unwrap_or(Duration::from_secs(10))),
        }
    }

    /// The stop rule the flags ask for.
    pub fn stop_rule(&self, sharded: bool) -> Result<StopRule, String> {
        Ok(match &self.stop {
            Some(text) => StopRule::parse(text).map_err(|e| format!("--stop: {e}"))?,
            // A shard sees only its share: the shards would stop apart, so a sharded sweep runs
            // every level and the stop rule is the merge's to judge.
            None if sharded => StopRule::default(),
            None => StopRule {
                max_error_percent: (!self.no_stop).then_some(self.stop_errors),
                max_p99_ms: self
                    .stop_p99
                    .filter(|_| !self.no_stop)
                    .map(|d| d.as_secs_f64() * 1e3),
                ..StopRule::default()
            },
        })
    }

    /// What a sharded sweep cannot do, each with what to do instead (`start_at`: the shards
    /// start on a shared instant).
    pub fn shard_problems(&self, start_at: bool) -> Vec<String> {
        let mut problems = Vec::new();
        if self.stop.is_some() || self.stop_p99.is_some() {
            problems.push(
                "--stop and --stop-p99 judge each step, but a shard sees only its share and the shards would stop apart: a sharded sweep runs every level; judge the merged sweep (herd merge)"
                    .to_owned(),
            );
        }
        if start_at && matches!(self.length(), Length::Requests(_)) {
            problems.push(
                "--start-at with --num-conns: a step ended by a request count has no known length, so the shards' later steps could not start together; give --step-duration"
                    .to_owned(),
            );
        }
        problems
    }
}

/// Targets whose open-model levels count different things (a URL's requests, a workload's
/// scenario iterations: each run's `rate_unit`) cannot share one row of rates.
pub fn mixed_units(model: Model, units: &[&str]) -> Option<String> {
    let first = units.first()?;
    (model == Model::Open && units.iter().any(|u| u != first)).then(|| {
        "URLs and workload files cannot be swept side by side at the same rates: a URL's rate \
         counts requests, a workload's scenario iterations; sweep them separately"
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_and_a_workload_share_users_but_not_rates() {
        let mixed = ["req/s", "iterations/s"];
        assert!(mixed_units(Model::Open, &mixed).is_some());
        assert_eq!(mixed_units(Model::Closed, &mixed), None);
        assert_eq!(mixed_units(Model::Open, &["req/s", "req/s"]), None);
        assert_eq!(mixed_units(Model::Open, &[]), None);
    }
}
