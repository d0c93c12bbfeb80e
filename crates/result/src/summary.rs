//! The counts and distributions every result is made of: a run's and each request name's.

use serde::{Deserialize, Serialize};

/// Request counts. `scheduled = completed + errors + dropped` and `completed = ok + failed`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Requests the schedule called for.
    pub scheduled: u64,
    /// Requests written to a connection.
    pub sent: u64,
    /// A full response arrived.
    pub completed: u64,
    /// Completed with status below 400 and every check passed.
    pub ok: u64,
    /// Completed, but status 400 or above or a check failed.
    pub failed: u64,
    /// No valid response (refused, reset, timeout, ...).
    pub errors: u64,
    /// Scheduled but never sent.
    pub dropped: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// A distribution of times in milliseconds. With no samples every field is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Response body sizes in bytes. With no responses every field is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeSummary {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
}
