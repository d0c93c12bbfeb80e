//! The parts of a result that only workload runs have: stats per request name, iterations per
//! scenario, checks, and thresholds with their verdicts. All optional in the JSON: a plain
//! `herd run URL` writes none of them.

use crate::summary::{SizeSummary, Summary, Totals};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One request name, in the same shape as the top level of the result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NameResult {
    /// The step's `name`, or its method and path template (`GET /items/{{item}}`).
    pub name: String,
    pub totals: Totals,
    pub throughput_rps: f64,
    pub status: BTreeMap<String, u64>,
    pub errors: BTreeMap<String, u64>,
    pub latency_ms: Summary,
    pub service_time_ms: Summary,
    /// Requests of this name that got no response, from the intended send to the failure.
    #[serde(default)]
    pub time_to_error_ms: Summary,
    pub response_bytes: SizeSummary,
    /// The set-up of the connections this name's requests opened (TLS included); absent in
    /// results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<Summary>,
    /// Where this name's requests spent their time, phase by phase (no `dns_ms`: the name is
    /// looked up once for the run); absent in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::Phases>,
    /// The full histograms, as at the top level: for `herd merge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<crate::Histograms>,
    /// This name's event streams, as the top level's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<crate::Streams>,
}

/// Iterations of one scenario (measured ones only) and how long they took, think times included.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    pub name: String,
    pub weight: u64,
    pub iterations: u64,
    pub duration_ms: Summary,
    /// The iterations' durations (microseconds), encoded as the top-level histograms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_histogram: Option<String>,
}

/// Passes and fails of one check (`cart: status 200`, `login: extract token`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub passes: u64,
    pub fails: u64,
    /// Why the first failure failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
}

/// A threshold, what was measured, and whether it held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThresholdResult {
    /// As written in the workload: `cart: p99 < 500ms`.
    pub expression: String,
    /// The measured value, in `unit`.
    pub value: f64,
    /// `ms`, `%` or `req/s`.
    pub unit: String,
    pub pass: bool,
    /// Why it failed when nothing could be measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
