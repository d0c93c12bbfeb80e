//! The load flags of a run (`-c`, `--rate`, `-d`, `-n`...), as plain data, and what they
//! refuse or become at a series' level.

use crate::{Length, Level};
use std::time::Duration;

/// The load flags of `herd run`, `None` where not given. Which apply to which kind of run is
/// `flags::TABLE`'s to say: a workload file takes its load from the file unless a level is
/// given (then `connections` is the open model's cap); `timeout`, `warmup` and `threads` win
/// over the file's.
#[derive(Clone, Debug, Default)]
pub struct LoadFlags {
    /// Closed model: users; open model: the cap on connections.
    pub connections: Option<u64>,
    /// Open model: arrivals per second.
    pub rate: Option<f64>,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub calls_per_conn: Option<u64>,
    /// HTTP/1.1 pipelining (`--pipeline K`): K requests in flight on each connection.
    pub pipeline: Option<Pipeline>,
    /// `None`: [`crate::DEFAULT_TIMEOUT`] for a URL, the file's `defaults: timeout` for a workload.
    pub timeout: Option<Duration>,
    /// `--event-timeout`: the longest wait for an event stream's next event; `None`: the
    /// file's `defaults: event_timeout` for a workload, else none.
    pub event_timeout: Option<Duration>,
    /// `None`: none for a URL, the file's for a workload.
    pub warmup: Option<Duration>,
    /// `None`: one per core (a workload file's own count wins over that default).
    pub threads: Option<usize>,
    /// Open model: how arrivals are spaced around the rate (`--arrivals`); `None`: evenly.
    pub arrivals: Option<herd_engine::Process>,
    /// What random arrivals draw from (`--seed`); `None`: the fixed default.
    pub seed: Option<u64>,
}

/// `--pipeline K` (h2load's `--h1 -m K`): each connection carries a window of K
/// requests; `-c` connections then carry `-c` x K users (closed model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub depth: usize,
    /// `--pipeline-any-method`: pipeline requests that are not idempotent (POST) too.
    pub any_method: bool,
}

impl LoadFlags {
    /// `--arrivals` spaces an open model's arrivals, and `--seed` draws random ones: either
    /// without what it acts on would be dropped, so it is refused.
    pub(crate) fn check_arrivals(&self, level: Option<Level>, problems: &mut Vec<String>) {
        use herd_engine::Process;
        let open = match level {
            Some(l) => matches!(l, Level::Rate(_)),
            None => self.rate.is_some(),
        };
        let random = self.arrivals.is_some_and(|p| p != Process::Constant);
        if self.arrivals.is_some() && !open {
            problems.push(match level {
                None => "--arrivals spaces the open model's arrivals: give --rate R as well",
                Some(_) => {
                    "--arrivals spaces the open model's arrivals: sweep with --rates, or search \
                     a rate (capacity without --users)"
                }
            }
            .to_owned());
        } else if self.seed.is_some() && !random {
            problems.push(
                "--seed draws random arrivals: give --arrivals poisson or --arrivals uniform"
                    .to_owned(),
            );
        }
    }

    /// The flags with a level and a length in place of their own load and length.
    pub(crate) fn at(&self, level: Option<Level>, length: Option<Length>) -> LoadFlags {
        let mut f = self.clone();
        match level {
            Some(Level::Rate(rate)) => f.rate = Some(rate),
            Some(Level::Users(users)) => {
                f.rate = None;
                f.connections = Some(users);
            }
            None => {}
        }
        match length {
            Some(Length::Time(d)) => (f.duration, f.requests) = (Some(d), None),
            Some(Length::Requests(n)) => (f.duration, f.requests) = (None, Some(n)),
            None => {}
        }
        f
    }
}
