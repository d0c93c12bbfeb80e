//! Reports for herd: pure functions from what was measured to what people and tools read.
//!
//! [`build_run`] turns the merged metrics of a run ([`herd_metrics::Stats`] and the per-second
//! [`herd_metrics::Second`]s) into a [`RunResult`], the public JSON contract described by
//! `schema/result.schema.json`. [`write_json`] and [`read_json`] store and load it (reading says
//! plainly when a file is not a herd result or comes from a herd this one cannot read), and
//! [`render_text`] writes the summary printed after a run. The full histograms travel in the
//! result, so runs can be merged exactly later with [`decode_histogram`].
//!
//! A sweep ([`sweep::SweepResult`], autobench's TSV in [`sweep::write_table`]), a capacity
//! search ([`capacity::Search`], a pure state machine) and the charts of both ([`figure`], drawn
//! by [`html`] and, with the `png` feature, by `plot`) build on the same results.
//!
//! Nothing here sees the engine, a clock or a socket.
//!
//! ```
//! use herd_metrics::{Outcome, Second, Stats, Verdict};
//! use herd_report::{build_run, render_text, Generator, Model, RunConfig, RunInput};
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
//!     headers: vec![],
//!     body_bytes: 0,
//! };
//! let result = build_run(RunInput {
//!     target: config.url.clone(),
//!     config,
//!     started_at: SystemTime::now(),
//!     duration: Duration::from_secs(1),
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
//! let mut text = String::new();
//! render_text(&result, &mut text).unwrap();
//! assert!(text.contains("1 completed (1 ok, 0 failed)"));
//! ```

pub mod answers;
pub mod backlog;
mod build;
pub mod capacity;
pub mod compare;
mod compare_text;
pub mod criteria;
mod document;
mod error;
pub mod figure;
pub mod format;
pub mod frame;
mod histogram;
pub mod html;
mod json;
pub mod knee;
pub mod merge;
mod noise;
#[cfg(feature = "png")]
pub mod plot;
mod result;
pub mod sections;
mod server;
mod server_text;
mod shard;
pub mod significance;
pub mod sweep;
mod text;
pub mod units;
mod workload;
mod workload_text;

pub use build::{build_run, RunInput};
pub use compare::{compare, CompareDocument, Comparison};
pub use compare_text::render_compare_text;
pub use criteria::{Criteria, Criterion, Diagnostic};
pub use document::{parse_document, read_document, Document};
pub use error::ReportError;
pub use histogram::{decode_histogram, encode_histogram, summarize_us};
pub use json::{parse_json, parse_json_kind, read_json, write_json};
pub use result::{
    Generator, GeneratorSample, GeneratorVerdict, Histograms, Kind, Model, RunConfig, RunResult,
    SizeSummary, Summary, TimelineEntry, Totals, Warmup,
};
pub use server::{
    Exporter, Gap, Note, ProcessSample, ProcessState, PromSeries, SeriesKind, SeriesStats, Server,
    WatchedProcess,
};
pub use shard::{ShardHeader, ShardInstance};
pub use text::render_text;
pub use workload::{
    name_result, scenario_result, CheckResult, NameResult, ScenarioResult, ThresholdResult,
};

/// The herd version written into results, and the one [`read_json`] checks files against.
pub const HERD_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version of the result formats (run, sweep, capacity, compare) within this herd series,
/// written as `schema_version` and bounded by the schemas in `schema/`. Every key added to a
/// result, at any depth, adds one here and to every schema's `schema_version.maximum`: the
/// schemas are closed, so a validator meets the new key only with a schema that knows it.
/// herd reads files of any `schema_version` of its series (docs/results.md, "Versions").
pub const SCHEMA_VERSION: u32 = 1;

/// `schema_version` of a file written before it was: the first.
pub(crate) fn first_schema_version() -> u32 {
    1
}
