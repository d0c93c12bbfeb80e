use std::time::Duration;
use thiserror::Error;

/// How load is offered.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    /// N users (connections), each starting its next iteration when the last one ended.
    Closed { users: u64 },
    /// Iterations start on a fixed schedule, `rate` per second, whatever the server does; at most
    /// `max_connections` connections are opened, as the schedule needs them.
    Open { rate: f64, max_connections: u64 },
}

/// Everything a run needs, as plain data: flags and workload files both compile to this.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub load: Load,
    /// Measured time after the warm-up; `None` means run until `requests` is reached.
    pub duration: Option<Duration>,
    /// Measured iterations to run (wrk/ab `-n`); `None` means no count limit.
    pub requests: Option<u64>,
    /// Run this long first; outcomes of iterations intended during it are excluded.
    pub warmup: Duration,
    /// Worker threads, each with its own event loop, connections and recorder.
    pub threads: usize,
    /// A real per-request deadline, connect included.
    pub timeout: Duration,
    /// Requests per connection before it is replaced (httperf's --num-calls); `None` = unlimited.
    pub calls_per_conn: Option<u64>,
    /// Number of distinct request names (1 for a plain run).
    pub names: usize,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            load: Load::Closed { users: 10 },
            duration: Some(Duration::from_secs(10)),
            requests: None,
            warmup: Duration::ZERO,
            threads: 1,
            timeout: Duration::from_secs(10),
            calls_per_conn: None,
            names: 1,
        }
    }
}

/// A plan that cannot run. Validation lists every problem, not just the first.
#[derive(Debug, Error, PartialEq)]
#[error("{}", .0.join("; "))]
pub struct PlanError(pub Vec<String>);

impl Plan {
    /// Checks the plan, reporting every problem at once.
    pub fn validate(&self) -> Result<(), PlanError> {
        let mut problems = Vec::new();
        match self.load {
            Load::Closed { users: 0 } => problems.push("connections must be at least 1".to_owned()),
            Load::Open {
                rate,
                max_connections,
            } => {
                if !(rate.is_finite() && rate > 0.0) {
                    problems.push(format!(
                        "rate must be a positive number of requests per second, not {rate}"
                    ));
                }
                if max_connections == 0 {
                    problems.push("the connection cap must be at least 1".to_owned());
                }
            }
            _ => {}
        }
        if self.duration.is_none() && self.requests.is_none() {
            problems.push(
                "give a duration (-d) or a number of requests (-n) so the run can end".to_owned(),
            );
        }
        if self.duration == Some(Duration::ZERO) {
            problems.push("duration must be longer than 0s".to_owned());
        }
        if self.requests == Some(0) {
            problems.push("the number of requests must be at least 1".to_owned());
        }
        if self.threads == 0 {
            problems.push("threads must be at least 1".to_owned());
        }
        if self.timeout.is_zero() {
            problems.push("timeout must be longer than 0s".to_owned());
        }
        if self.calls_per_conn == Some(0) {
            problems.push("calls per connection must be at least 1".to_owned());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(PlanError(problems))
        }
    }

    /// The most connections this plan can hold open at once.
    pub fn max_connections(&self) -> u64 {
        match self.load {
            Load::Closed { users } => users,
            Load::Open {
                max_connections, ..
            } => max_connections,
        }
    }

    /// Threads actually used: never more than there are connections to spread over them.
    pub fn effective_threads(&self) -> usize {
        (self.threads as u64).min(self.max_connections()).max(1) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_reports_every_problem() {
        let plan = Plan {
            load: Load::Open {
                rate: -1.0,
                max_connections: 0,
            },
            duration: None,
            requests: None,
            threads: 0,
            ..Plan::default()
        };
        let err = plan.validate().unwrap_err();
        assert_eq!(err.0.len(), 4, "{err}");
    }

    #[test]
    fn threads_never_exceed_connections() {
        let plan = Plan {
            load: Load::Closed { users: 3 },
            threads: 8,
            ..Plan::default()
        };
        assert_eq!(plan.effective_threads(), 3);
    }
}
