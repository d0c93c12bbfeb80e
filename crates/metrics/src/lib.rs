//! Measurement for herd: what one request's outcome was, and the recorders that fold outcomes into
//! HdrHistograms and counters.
//!
//! Each worker thread owns a [`Recorder`]; nothing here is shared or locked on the hot path. At the
//! end the recorders are merged exactly ([`Stats::merge`] adds histograms, as wrk2's `hdr_add`), and
//! every second each recorder hands a [`Second`] to the collector, which merges the seconds of all
//! workers into the run's timeline. Samples are never kept in a vector: memory stays flat however
//! long the run.
//!
//! ```
//! use herd_metrics::{Outcome, Recorder, Verdict};
//! use std::time::Duration;
//! let mut rec = Recorder::new(1);
//! rec.record(&Outcome::completed(0, Duration::from_millis(3), Duration::from_millis(2), 200, Verdict::Ok));
//! assert_eq!(rec.total().completed, 1);
//! ```

mod alike;
mod by_name;
mod compact;
mod error_kind;
mod grpc;
mod outcome;
mod recorder;
mod second_latency;
mod second_streams;
mod socket;
mod stats;
mod stream;
mod timeline;

pub use by_name::{ByName, NameSecond, NAMED_PER_SECOND, OTHER_NAME};
pub use compact::CompactHistogram;
pub use compact::{new_histogram, HISTOGRAM_MAX_US};
pub use error_kind::{ErrorKind, ErrorTable};
pub use grpc::{grpc_code, grpc_code_name, grpc_status, GrpcCounts, GrpcStats, GRPC_CODES};
pub use outcome::{Outcome, Phases, Verdict, NO_STATUS};
pub use recorder::Recorder;
pub use second_latency::{empty_second_histogram, LiveHistogram, SecondLatency, SEALED_QUANTILES};
pub use second_streams::SecondStreams;
pub use socket::{close_code_name, Backlog, CodeCounts, SocketEvent, SocketSecond, SocketStats};
pub use stats::{Stats, StatusCounts};
pub use stream::{StreamOutcome, StreamStats};
pub use timeline::{Second, Timeline, SEAL_AFTER_S};
