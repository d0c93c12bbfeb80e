//! Reports for herd: what people read, rendered from results. Rendering only: the model, its
//! JSON and every reading of it (knees, conclusions, a capacity answer) are herd-result's, the
//! comparison of runs herd-compare's; nothing here decides, searches or runs.
//!
//! [`render_text`] writes the summary printed after a run and [`render_compare_text`] a
//! comparison; [`html`] renders any result as one self-contained page; [`figure`] is the chart
//! model of a sweep, a capacity search and a run, drawn as SVG by [`html`] and, with the `png`
//! feature, as PNG or SVG files by `plot` (plotters); with the `pdf` feature, `pdf` prints a page
//! to PDF with a headless Chromium.
//!
//! ```
//! use herd_metrics::{Outcome, Second, Stats, Verdict};
//! use herd_report::render_text;
//! use herd_result::{build_run, Generator, Model, RunConfig, RunInput};
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
//!
//! let mut text = String::new();
//! render_text(&result, &mut text).unwrap();
//! assert!(text.contains("1 completed (1 ok, 0 failed)"));
//! ```

mod compare_text;
mod connection_text;
pub mod figure;
mod grpc_text;
pub mod history_text;
pub mod html;
mod lines;
pub mod output;
#[cfg(feature = "pdf")]
pub mod pdf;
#[cfg(feature = "png")]
pub mod plot;
mod replay_text;
pub mod series_text;
mod server_text;
mod stream_text;
mod text;
mod websocket_text;
mod workload_text;

pub use compare_text::render_compare_text;
pub use replay_text::render_replay_comparison;
pub use text::render_text;

// The model is herd-result's. Rendering reads it under the names it had when it lived here, so
// `crate::RunResult` or `crate::sweep::Row` mean the same in every renderer.
pub(crate) use herd_result::*;
// The comparison is herd-compare's; its text and HTML are rendered here.
pub(crate) use herd_compare as compare;
pub(crate) use herd_compare::Comparison;
