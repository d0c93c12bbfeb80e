//! Web server access logs for herd: read them fast, say what is in them, model a workload from
//! them, compare a run with what the server logged, and yield their requests for replay.
//!
//! Lines are matched against a format's parts with byte scans ([`parse`]), never a regex per
//! line; records borrow from the line; everything is folded into counters and HdrHistograms as
//! it streams by ([`analysis::Analyzer`]), so a month of logs reads in constant memory.
//!
//! ```
//! use herd_logs::{analysis::Analyzer, source::{read_logs, FormatSpec}};
//! let dir = std::env::temp_dir().join(format!("herd-logs-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let log = dir.join("access.log");
//! std::fs::write(&log, "1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /items/7 HTTP/1.1\" 200 512 \"-\" \"curl\"\n").unwrap();
//! let mut a = Analyzer::new(&[], 1800);
//! let stats = read_logs(&[log], &FormatSpec::Auto, None, |r| a.add(r)).unwrap();
//! let report = a.finish(&stats);
//! assert_eq!(report.types[0].name, "GET /items/{id}");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

pub mod against;
pub mod analysis;
pub mod distinct;
mod error;
pub mod format;
pub mod html;
pub mod input;
pub mod json;
pub mod model;
pub mod params;
pub mod parse;
pub mod pattern;
pub mod rate;
mod read_stats;
pub mod record;
pub mod replay;
pub mod replay_preview;
mod run_side;
pub mod session;
pub mod source;
pub mod summary;
pub mod text;
pub mod time;
pub mod zipf;

pub use error::LogError;
