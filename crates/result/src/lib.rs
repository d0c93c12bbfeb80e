//! What herd measured, as data: the result of a run, a sweep and a capacity search, their JSON
//! contract (`schema/*.json`), and the pure readings of them that every consumer shares.
//!
//! [`build_run`] turns the merged metrics of a run ([`herd_metrics::Stats`] and the per-second
//! [`herd_metrics::Second`]s) into a [`RunResult`]. [`write_json`] and [`read_json`] store and
//! load it (reading says plainly when a file is not a herd result or comes from a herd this one
//! cannot read), and [`read_document`] reads any of the three kinds. The full histograms travel
//! in the result, so runs merge exactly later ([`merge::Merge`], [`decode_histogram`]).
//!
//! Beside the model: [`criteria`] (one grammar for thresholds, `--slo` and the sweep's stop
//! rule), [`units`] (one rule for durations, sizes, rates and percentages), and the readings
//! that a series computes and a report shows alike: a sweep's table and autobench's TSV
//! ([`sweep::write_table`], [`sweep::read_table`]), a throughput curve's [`knee`], a capacity
//! answer's sentence ([`capacity::sentence`]). Searching, running and rendering live elsewhere
//! (herd-series, herd-run, herd-report); nothing here sees the engine, a clock or a socket.
//!
//! ```
//! use herd_metrics::{Outcome, Second, Stats, Verdict};
//! use herd_result::{build_run, parse_json, write_json, Generator, Model, RunConfig, RunInput};
//! use std::time::{Duration, SystemTime};
//!
//! let mut stats = Stats::default();
//! let ms = Duration::from_millis;
//! stats.record(&Outcome::completed(0, ms(3), ms(2), 200, Verdict::Ok));
//! let config = RunConfig {
//!     url: "http://127.0.0.1:8080/".into(),
//!     method: "GET".into(),
//!     model: Model::Closed,
//!     connections: 1,
//!     rate: None,
//!     duration_s: Some(1.0),
//!     requests: None,
//!     warmup_s: 0.0,
//!     threads: 1,
//!     timeout_s: 10.0,
//!     calls_per_conn: None,
//!     pipeline: None,
//!     streams: None,
//!     proxy: None,
//!     headers: vec![],
//!     body_bytes: 0,
//!     secrets_shown: false,
//!     labels: Default::default(),
//!     arrivals: None,
//! };
//! let result = build_run(RunInput {
//!     target: config.url.clone(),
//!     config,
//!     started_at: SystemTime::now(),
//!     duration: Duration::from_secs(1),
//!     offered: None,
//!     interrupted: false,
//!     stats: &stats,
//!     timeline: &[Second::new(0)],
//!     dropped: 0,
//!     warmup_requests: 0,
//!     warmup_duration: Duration::ZERO,
//!     generator: Generator::default(),
//! });
//! assert_eq!(result.totals.scheduled, 1);
//!
//! let mut json = Vec::new();
//! write_json(&result, &mut json).unwrap();
//! let back = parse_json(std::str::from_utf8(&json).unwrap(), "example").unwrap();
//! assert_eq!(back, result);
//! ```

pub mod answers;
pub mod backlog;
mod build;
pub mod capacity;
pub mod criteria;
mod document;
mod error;
pub mod fault;
mod fault_window;
#[cfg(test)]
mod fixture;
pub mod format;
pub mod frame;
mod grpc;
mod histogram;
mod json;
pub mod knee;
pub mod merge;
mod phases;
pub mod redact;
mod result;
mod second_streams;
pub mod sections;
pub mod server;
mod shard;
pub mod stream;
mod stream_parts;
mod streams;
mod summary;
pub mod sweep;
pub mod units;
mod websocket;
mod workload;

pub use build::{build_run, name_result, scenario_result, RunInput};
pub use criteria::{Criteria, Criterion, Diagnostic};
pub use document::{parse_document, read_document, Document};
pub use error::ReportError;
pub use fault_window::{FaultWindow, Recovery};
pub use grpc::{Grpc, GrpcMethod, StatusLatency};
pub use histogram::{
    decode_histogram, encode_histogram, summarize_us, Histograms, PhaseHistograms,
};
pub use json::{parse_json, parse_json_kind, read_json, write_json, write_json_file};
pub use phases::Phases;
pub use result::{
    Arrivals, Exchange, Generator, GeneratorSample, GeneratorVerdict, HandshakeTimes, Handshakes,
    Kind, Model, Naps, ProtocolUse, RequestsLogged, RunConfig, RunResult, TimelineEntry,
    TimelineStreams, TlsUse, Warmup,
};
pub use server::{
    Exporter, Gap, Note, ProcessSample, ProcessState, PromSeries, SeriesKind, SeriesStats, Server,
    WatchedProcess,
};
pub use shard::{ShardHeader, ShardInstance};
pub use streams::{Counts, StreamHistograms, Streams};
pub use summary::{SizeSummary, Summary, Totals};
pub use websocket::{Close, SendBacklog, Sockets, SocketsSecond};
pub use workload::{CheckResult, NameResult, ScenarioResult, ThresholdResult};

/// The herd version written into results, and the one [`read_json`] checks files against.
pub const HERD_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version of the result formats (run, sweep, capacity, compare) within this herd series,
/// written as `schema_version` and bounded by the schemas in `schema/`. Every key added to a
/// result, at any depth, adds one here and to every schema's `schema_version.maximum`: the
/// schemas are closed, so a validator meets the new key only with a schema that knows it.
/// herd reads files of any `schema_version` of its series (docs/results.md, "Versions").
pub const SCHEMA_VERSION: u32 = 3;

/// `schema_version` of a file written before it was: the first.
pub(crate) fn first_schema_version() -> u32 {
    1
}
