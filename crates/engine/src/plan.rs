use crate::process::{Process, DEFAULT_SEED};
use crate::segment::Shard;
use crate::stages::{Profile, Stage};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// The longest drain after a run's duration (see [`Plan::drain`]).
pub const DRAIN: Duration = Duration::from_secs(2);

/// Rates above this are refused: no machine sends them, and a run asked for them would only
/// count drops.
pub const MAX_RATE: f64 = 1e8;

/// Random arrivals above this rate are refused: each thread draws every gap of the plan.
pub const MAX_RANDOM_RATE: f64 = 1e7;

/// How load is offered.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    /// N users, each starting its next iteration when the last one ended (each on a
    /// connection of its own unless `Plan::connections` or `Plan::pipeline` says otherwise).
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
    /// The longest wait for an event stream's next event (`--event-timeout`): from the send
    /// to its first event, then from each event to the next. A stream that waits longer ends
    /// as `sse_stalled`; `None`: only `timeout` bounds it.
    pub event_timeout: Option<Duration>,
    /// Requests per connection before it is replaced (httperf's --num-calls); `None` = unlimited.
    pub calls_per_conn: Option<u64>,
    /// Closed model: the users share this many connections (h2load's `-c` apart from its
    /// users), each request going to the user's last connection when it has room, else the
    /// least busy one; `None`: as many as the users need (one each without pipelining). The
    /// open model's cap is `Load::Open::max_connections`.
    pub connections: Option<u64>,
    /// Requests in flight on one HTTP/1.1 connection (`--pipeline`, h2load's `--h1 -m`):
    /// refilled a whole window at a time in the closed model, sliding in the open model; 1
    /// sends one at a time.
    pub pipeline: usize,
    /// Number of distinct request names (1 for a plain run).
    pub names: usize,
    /// When not empty, the load follows these stages from 0: the closed model ramps the number of
    /// active users to each stage's target, the open model the arrival rate. The run lasts as
    /// long as the stages (the warm-up is their first part; `duration` must be `None`).
    pub stages: Vec<Stage>,
    /// Play only this shard's share of the plan (`--shard I/N`): the open model's arrivals,
    /// the closed model's users, `-n` and the connection cap, each split exactly (k6's
    /// execution segments), so the shards' union is the whole plan.
    pub shard: Option<Shard>,
    /// The run's instant 0 was this long ago (a shard ready after `--start-at`, with
    /// `--late skip`): it plays the rest of the plan, each arrival at its own instant, and
    /// the arrivals before now are missed, not sent (see [`Plan::missed`]).
    pub late: Duration,
    /// Open model: arrivals at these offsets from the start (ascending) instead of at `rate`,
    /// e.g. a web log replayed with its own timing; the script learns each arrival's index
    /// ([`crate::Ctx::arrival`]).
    pub arrivals: Option<Arc<[Duration]>>,
    /// With `arrivals`: play them again every this long (`herd replay --loop`), until the
    /// duration ends; the script's arrival index keeps counting.
    pub arrivals_period: Option<Duration>,
    /// Open model: how arrivals are spaced around the rate (`--arrivals`): evenly, Poisson or
    /// uniform gaps, drawn from `seed`.
    pub process: Process,
    /// What a random process draws from (`--seed`): the same seed, the same instants.
    pub seed: u64,
    /// Open model: every user (connection) is made before any is reused, and free users take
    /// arrivals in turn, so each connection carries its share of the schedule (a WebSocket's
    /// messages at `--message-rate` on each of `-c` sockets) instead of the fewest connections
    /// the rate needs.
    pub in_turn: bool,
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
            event_timeout: None,
            calls_per_conn: None,
            connections: None,
            pipeline: 1,
            names: 1,
            stages: Vec::new(),
            shard: None,
            late: Duration::ZERO,
            arrivals: None,
            arrivals_period: None,
            process: Process::Constant,
            seed: DEFAULT_SEED,
            in_turn: false,
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
                } else if rate > MAX_RATE {
                    problems.push(format!(
                        "a rate of {rate} requests per second is more than any machine sends \
                         (herd refuses more than {MAX_RATE}); give a rate the target could \
                         answer, or split the load over machines with --shard"
                    ));
                }
                if max_connections == 0 {
                    problems.push("the connection cap must be at least 1".to_owned());
                }
                if self.process != Process::Constant && rate > MAX_RANDOM_RATE {
                    problems.push(format!(
                        "{} arrivals above {MAX_RANDOM_RATE} requests per second are refused \
                         (every thread draws every gap); use --arrivals constant, or split the \
                         load over machines with --shard",
                        self.process.name()
                    ));
                }
            }
            _ => {}
        }
        if !self.stages.is_empty() {
            if self.duration.is_some() {
                problems.push("give either stages or a duration, not both".to_owned());
            }
            for (i, s) in self.stages.iter().enumerate() {
                if !(s.target.is_finite() && s.target >= 0.0) {
                    problems.push(format!(
                        "stage {}: target must be 0 or more, not {}",
                        i + 1,
                        s.target
                    ));
                }
            }
            let p = Profile::new(&self.stages);
            if p.total().is_zero() {
                problems.push("the stages last 0s: give them durations".to_owned());
            } else if self.warmup >= p.total() {
                problems.push(format!(
                    "the warm-up ({:?}) is as long as all stages ({:?}): nothing would be measured",
                    self.warmup,
                    p.total()
                ));
            }
            if p.max() <= 0.0 {
                problems.push("every stage has target 0: nothing would run".to_owned());
            }
        } else if self.duration.is_none() && self.requests.is_none() {
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
        if self.event_timeout.is_some_and(|t| t.is_zero()) {
            problems.push(
                "the event timeout must be longer than 0s (leave it out to wait on a stream's \
                 events as long as the request timeout allows)"
                    .to_owned(),
            );
        }
        if self.calls_per_conn == Some(0) {
            problems.push("calls per connection must be at least 1".to_owned());
        }
        if self.connections == Some(0) {
            problems.push("the number of connections must be at least 1".to_owned());
        }
        if self.pipeline == 0 {
            problems.push("the pipeline depth must be at least 1".to_owned());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(PlanError(problems))
        }
    }

    /// After the run's duration, requests in flight get this long to finish (their time counts
    /// in the measured window); those still unanswered then are counted as `unfinished`. The
    /// request timeout, at most 2 s: `-d` bounds the run, not the server.
    pub fn drain(&self) -> Duration {
        self.timeout.min(DRAIN)
    }

    /// The most connections this plan (this shard of it) can hold open at once.
    pub fn max_connections(&self) -> u64 {
        match self.load {
            Load::Closed { users } => {
                let users = if self.profile().is_some() {
                    self.max_stage_users()
                } else {
                    self.share(users)
                };
                // Users share connections when the plan says so, or a pipeline carries several.
                match self.connections {
                    Some(c) => self.share_limit(c).min(users),
                    None => users.div_ceil(self.pipeline.max(1) as u64),
                }
            }
            Load::Open {
                max_connections, ..
            } => self.share_limit(max_connections),
        }
    }

    /// Users the closed-model stages need at their peak (0 without stages): this shard's.
    pub fn max_stage_users(&self) -> u64 {
        match self.profile() {
            Some(p) => self.share(p.max().ceil() as u64),
            None => 0,
        }
    }

    /// This shard's exact share of a count (users, requests): the whole without a shard.
    pub fn share(&self, v: u64) -> u64 {
        self.shard.as_ref().map_or(v, |s| s.stripe().scale(v))
    }

    /// This shard's share of a limit (a connection cap): at least 1 where the whole had any.
    pub fn share_limit(&self, v: u64) -> u64 {
        self.shard.as_ref().map_or(v, |s| s.stripe().scale_limit(v))
    }

    /// Open model: the arrivals of this shard that a late start ([`Plan::late`]) misses.
    pub fn missed(&self) -> u64 {
        match self.load {
            Load::Open { rate, .. } if !self.late.is_zero() && rate > 0.0 => {
                self.share(self.open_schedule(rate).due_before(self.late))
            }
            _ => 0,
        }
    }

    /// The open model's arrivals: at `rate`, or following the stages, spaced by the plan's
    /// process; `-n` counts after the warm-up.
    pub(crate) fn open_schedule(&self, rate: f64) -> crate::schedule::Schedule {
        use crate::schedule::Schedule;
        let spaced = |s: Schedule| s.spaced(self.process, self.seed);
        if let Some(p) = self.profile() {
            let warm = spaced(Schedule::staged(p.clone(), None)).count_before(self.warmup);
            return spaced(Schedule::staged(p, self.requests.map(|n| warm + n)));
        }
        let end = self.duration.map(|d| self.warmup + d);
        if let Some(offsets) = &self.arrivals {
            let warm = offsets.partition_point(|o| *o < self.warmup) as u64;
            return Schedule::repeating(
                offsets.clone(),
                self.arrivals_period,
                end,
                self.requests.map(|n| warm + n),
            );
        }
        let warm = spaced(Schedule::new(rate, None, None)).count_before(self.warmup);
        spaced(Schedule::new(rate, end, self.requests.map(|n| warm + n)))
    }

    /// The global index of this shard's `j`th user or arrival.
    pub fn global(&self, j: u64) -> u64 {
        self.shard.as_ref().map_or(j, |s| s.stripe().nth(j))
    }

    /// The profile of the stages, if any.
    pub fn profile(&self) -> Option<Profile> {
        (!self.stages.is_empty()).then(|| Profile::new(&self.stages))
    }

    /// From the run's start to the end of its schedule (warm-up included), when known.
    pub fn length(&self) -> Option<Duration> {
        match self.profile() {
            Some(p) => Some(p.total()),
            None => self.duration.map(|d| self.warmup + d),
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
    fn stages_are_checked_and_set_the_length() {
        let stage = |secs, target| Stage {
            duration: Duration::from_secs(secs),
            target,
        };
        let plan = Plan {
            duration: None,
            warmup: Duration::from_secs(5),
            stages: vec![stage(10, 50.0), stage(60, 50.0), stage(10, 0.0)],
            ..Plan::default()
        };
        assert_eq!(plan.validate(), Ok(()));
        assert_eq!(plan.length(), Some(Duration::from_secs(80)));
        assert_eq!(plan.max_connections(), 50);
        let bad = Plan {
            duration: Some(Duration::from_secs(1)),
            warmup: Duration::from_secs(90),
            ..plan
        };
        assert_eq!(bad.validate().unwrap_err().0.len(), 2);
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
