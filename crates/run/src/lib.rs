//! A run, as an application sees it: a [`RunSpec`] (a URL with its flags, a URL file, a
//! workload file, a script or a log replay, as plain data, and the shard it plays) is checked
//! by [`RunSpec::prepare`], which reports every problem at once; the [`Prepared`] run then
//! plays on the engine at its own load or at a [`Level`] (what `herd sweep` and `herd capacity`
//! vary), a shard after waiting for its start instant, and returns the full `RunResult`.
//! [`conclude`] says how a result ended; the CLI maps that to exit codes. Nothing here exits:
//! progress and notes go to an [`Observer`], problems come back as a [`RunError`].
//!
//! ```no_run
//! use herd_run::{RunSpec, Source, Level};
//! let spec = RunSpec::new(Source::url("http://127.0.0.1:8080/"));
//! let prepared = spec.prepare().expect("a valid spec");
//! let control = std::sync::Arc::new(herd_engine::Control::new());
//! let result = prepared.run(Some(Level::Users(4)), &control, &mut ()).expect("a run");
//! println!("{} completed", result.totals.completed);
//! ```

mod body;
mod conclusion;
mod faults;
pub mod flags;
mod http;
mod labels;
mod level_plan;
mod limits;
mod load;
mod overrides;
mod prepare;
mod prepared;
mod refused;
mod replay;
mod replay_load;
mod result;
mod script;
pub mod shard;
mod shard_flags;
mod spec;
mod watch;
mod what;
mod ws;

pub use body::MAX_BODY;
pub use conclusion::{conclude, conclude_merged, Conclusion};
/// A gRPC call as ghz's flags give it (`RequestFlags::grpc`).
pub use herd_grpc::CallSpec as GrpcCall;
pub use http::HttpFlags;
pub use labels::Labels;
pub use limits::{ensure_fds, SPARE_FDS};
pub use load::{LoadFlags, Pipeline};
pub use prepare::{compile_workload, compile_workload_at, workload_path};
pub use prepared::Prepared;
pub use refused::nothing_listens;
pub use replay::p95_change;
pub use replay_load::{ReplayLogs, ReplayRead};
pub use result::{generator_sample, to_result};
pub use shard_flags::{parse_start_at, ShardFlags};
pub use spec::{ConnectFlags, RequestFlags, RunSpec, Source};
pub use ws::WsFlags;

use herd_engine::{Control, Progress};
use herd_result::RunResult;
use std::sync::Arc;
use std::time::Duration;

/// Default closed-model connections, as wrk's.
pub const DEFAULT_CONNECTIONS: u64 = 10;
/// Default connection cap in the open model: enough to hold most rates against a slow server.
pub const DEFAULT_OPEN_CAP: u64 = 1000;
/// The per-request deadline when neither `--timeout` nor a workload file sets one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a URL run lasts when neither a duration nor a request count is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// One load level: arrivals per second (open model) or concurrent users (closed model).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Level {
    Rate(f64),
    Users(u64),
}

impl Level {
    /// The level `x` of a series in `model`: arrivals per second (open), or users (closed,
    /// rounded, at least one).
    pub fn of(model: herd_result::Model, x: f64) -> Level {
        match model {
            herd_result::Model::Open => Level::Rate(x),
            herd_result::Model::Closed => Level::Users(x.round().max(1.0) as u64),
        }
    }
}

/// How long one run of a series lasts: a time, or a number of requests (of iterations, for a
/// workload).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Length {
    Time(Duration),
    Requests(u64),
}

/// How a run starts, told once before its first second: what runs, as its result will
/// describe it, and when its measurement starts by the engine's own instants.
#[derive(Clone, Debug)]
pub struct RunStart {
    pub config: herd_result::RunConfig,
    /// What the indices in the records name: request names, scenarios, checks.
    pub labels: Labels,
    /// When the measurement starts (the schedule's instant 0 plus the warm-up), as the engine
    /// placed it: in the past for a shard that started late.
    pub measure_start: std::time::SystemTime,
    /// A shard's header, and the absolute second its timeline starts in (the shared start
    /// instant), both `None` for a run that is not sharded.
    pub shard: Option<herd_result::ShardHeader>,
    pub timeline_start_unix_s: Option<u64>,
}

/// What a run reports while it goes on: the one stream of a run's events, in order. herd-live's
/// `Sinks` turns it into every output; `()` ignores it all.
pub trait Observer {
    /// Where each measured request goes (`--requests-log`), asked once before the engine
    /// starts; `labels` name the requests. herd-run hands it to the run's workers.
    fn requests_log(&mut self, _labels: &Labels) -> Option<Arc<herd_engine::RequestsLog>> {
        None
    }
    /// The run starts: told once, before its first [`Observer::record`].
    fn start(&mut self, _start: &RunStart) {}
    /// About once a second while the run goes on, the live numbers; the seconds closed in it
    /// follow as [`Observer::record`]s.
    fn progress(&mut self, _progress: &Progress) {}
    /// One closed second, in order, with the watched server's readings taken since the last
    /// second (`--watch-*`), joined here once.
    fn record(&mut self, _record: &herd_engine::Record, _server: Option<&herd_result::Server>) {}
    /// A workload's fault came into force (its `end_s` the planned end) or was removed (its
    /// `end_s` as it happened), told in the order the proxy's API confirmed them; `name` is the
    /// same in both. Thresholds and recovery come with the result.
    fn fault(&mut self, _window: &herd_result::FaultWindow) {}
    /// The engine has finished; the result is being built.
    fn finished(&mut self) {}
    /// A line for the person running herd (a shard's wait, a clock warning): on standard error
    /// unless the observer shows it its own way.
    fn note(&mut self, line: &str) {
        eprintln!("herd: {line}");
    }
}

impl Observer for () {}

/// Why a run could not be prepared or played. Nothing was sent in either case.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad input: every problem found, one message each.
    #[error("{}", .0.join("\n"))]
    Invalid(Vec<String>),
    /// The run could not start: the open-file limit, TLS set-up, worker threads.
    #[error("{0}")]
    Start(String),
    /// A shard was ready too late after its start instant (`--late fail`); nothing was sent.
    #[error("{0}")]
    Late(String),
    /// Ctrl-C before anything was sent (a shard's wait for its start instant).
    #[error("{0}")]
    Interrupted(String),
}

/// What a series runs at each level: check it and run it, never looking inside. A URL counts
/// requests, a workload scenario iterations. [`Prepared`] is the one implementation.
pub trait Runs {
    /// Every problem with a run at this level, before anything is sent.
    fn check(&self, level: Level, length: Length) -> Result<(), RunError>;
    /// Runs at this level and returns the full result.
    fn run(
        &self,
        level: Level,
        length: Length,
        control: &Arc<Control>,
        observer: &mut dyn Observer,
    ) -> Result<RunResult, RunError>;
    /// What one arrival of the open model is: `req/s` for a URL, `iterations/s` for a workload.
    fn rate_unit(&self) -> &'static str;
    /// The per-request deadline of every run: the flag's, else the file's, else the default.
    fn timeout(&self) -> Duration {
        DEFAULT_TIMEOUT
    }
    /// What the indices in its outcomes name (request names, scenarios, checks).
    fn labels(&self) -> Labels {
        Labels::default()
    }
}
