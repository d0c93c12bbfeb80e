//! A fault window of a run as its result keeps it (the readings of it are in `fault`).

use crate::workload::ThresholdResult;
use serde::{Deserialize, Serialize};

/// One toxic in force on one proxy during part of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// The proxy's name on its API.
    pub proxy: String,
    /// toxiproxy's toxic type: `latency`, `reset_peer`, `http`, ...
    pub toxic: String,
    /// The toxic's name on the proxy (`herd_fault_1`).
    pub name: String,
    /// `downstream` or `upstream`.
    pub stream: String,
    /// The toxic's attributes as sent to the API (toxiproxy's units).
    pub attributes: serde_json::Value,
    /// In words: `latency 200 ms on db`.
    pub description: String,
    /// When the toxic was added and removed, in seconds from the start of the measurement
    /// (timeline second 0), as the proxy's API confirmed them.
    pub start_s: f64,
    pub end_s: f64,
    /// The window's own thresholds, judged on the seconds wholly inside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<ThresholdResult>,
    pub recovery: Recovery,
}

/// How long after a fault the run was back to normal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// Seconds from the end of the fault to the start of the first whole second back within
    /// `rule` (at the timeline's one-second resolution); absent when no second after the fault
    /// was (see `note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// That second of the timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second: Option<u64>,
    /// What "back" meant: `the run's thresholds (p99 < 50ms)` or `p50 within 10% (at least
    /// 1 ms) of 0.41 ms, errors at most 1 point above 0.0%`.
    pub rule: String,
    /// Why there is no recovery time: the run ended first, or nothing to compare with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
