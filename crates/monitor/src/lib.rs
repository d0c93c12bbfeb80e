//! Watching the server under test while herd loads it: "don't fall prey to measuring client
//! performance instead of server performance" (httperf's author) starts with seeing the server.
//!
//! Two sources, sampled once a second on the run's time axis by a [`Watcher`] on its own
//! threads:
//! - **processes**, from `/proc` ([`ProcessSampler`]): CPU %, resident memory, threads, open
//!   file descriptors and context switches of one pid, or of every process of a name (nginx's
//!   master and workers) summed; a process that exits ends its series with a note;
//! - **Prometheus endpoints** ([`ExporterSampler`]): node_exporter or an application's own
//!   `/metrics`, parsed ([`exposition::parse`]) and filtered by [`Selector`]s; counters are kept
//!   as per-second rates, gauges as values; a failed scrape is a gap with its error.
//!
//! Beside the watch, [`system`] reads the machine's limits for a load generator (open files,
//! local ports, TIME_WAIT reuse) with the one rule `herd doctor` and the generator's verdict
//! share, [`doctor`] judges them (and the target's answer) with a fix for each problem, and
//! [`tree`] groups the processes of a name into trees.
//!
//! Depends on none of herd's crates but herd-spill (where a long watch's old readings wait) and
//! herd-result's number formats: the CLI turns [`Observations`] into the report's types.
//!
//! ```no_run
//! use herd_monitor::{prepare, ProcessTarget, WatchPlan};
//! use std::time::{Duration, Instant};
//!
//! let plan = WatchPlan {
//!     processes: vec![ProcessTarget::Name("nginx".into())],
//!     exporters: vec!["http://127.0.0.1:9100/metrics".into()],
//!     metrics: vec![r#"node_cpu_seconds_total{mode="idle"}"#.into()],
//!     ..WatchPlan::default()
//! };
//! // Every problem at once, before any load is sent.
//! let ready = match prepare(&plan) {
//!     Ok(ready) => ready,
//!     Err(problems) => {
//!         problems.iter().for_each(|p| eprintln!("{p}"));
//!         std::process::exit(2);
//!     }
//! };
//! let watcher = ready.start(Instant::now())?;
//! std::thread::sleep(Duration::from_secs(3)); // the load runs here
//! let seen = watcher.stop();
//! for p in &seen.processes {
//!     for s in &p.samples {
//!         println!("t={:.1} cpu {:.0}%", seen.t(s.gauges.at), s.cpu_percent);
//!     }
//! }
//! # Ok::<(), herd_monitor::MonitorError>(())
//! ```

pub mod doctor;
mod error;
mod exporter;
pub mod exposition;
mod kept;
mod observations;
mod process;
pub mod procfs;
mod reading;
mod scrape;
mod selector;
pub mod system;
pub mod tree;
mod watcher;

pub use error::MonitorError;
pub use exporter::{ExporterSampler, Gap, Series, DEFAULT_METRICS, MAX_SERIES};
pub use exposition::MetricKind;
pub use observations::{seconds_since, ExporterSeries, Observations, ProcessSeries};
pub use process::{Gauges, Note, ProcessSample, ProcessSampler, ProcessTarget};
pub use scrape::{fetch, HttpUrl, ScrapeError};
pub use selector::Selector;
pub use watcher::{prepare, Ready, WatchPlan, Watcher};
