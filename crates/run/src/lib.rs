//! A run, as an application sees it: a [`RunSpec`] (a URL with its flags, a URL file, a
//! workload file, a script or a log replay, as plain data, and the shard it plays) is checked
//! by [`RunSpec::prepare`], which reports every problem at once; the [`Prepared`] run then
//! plays on the engine at its own load or at a [`Level`] (what `herd sweep` and `herd capacity`
//! vary), a shard after waiting for its start instant, and returns the full `RunResult`.
//! [`conclude`] says how a result ended; the CLI maps that to exit codes. Nothing here exits:
//! progress and notes go to a [`Sink`], problems come back as a [`RunError`].
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
mod sink;
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
pub use sink::{tell, RunStart, Sink, SinkError, SoFar, Stepped};
pub use spec::{ConnectFlags, RequestFlags, RunSpec, Source};
pub use ws::WsFlags;

use herd_engine::Control;
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
        sink: &mut dyn Sink,
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
