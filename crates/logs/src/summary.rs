//! What `herd logs` found, as written to `--json` (described by `schema/logs.schema.json`).

use crate::source::ReadStats;
use crate::zipf::ZipfFit;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LogsReport {
    pub kind: String,
    pub herd_version: String,
    pub input: Input,
    pub span: Span,
    pub rate: RateSummary,
    pub methods: BTreeMap<String, u64>,
    /// `"2xx"` ... `"5xx"`, `"other"`.
    pub status_classes: BTreeMap<String, u64>,
    pub response_bytes: Sizes,
    /// Over all requests, when the log has a time taken.
    pub time_taken_ms: Option<Times>,
    /// Request types, most requested first.
    pub types: Vec<TypeSummary>,
    pub clients: Clients,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Input {
    pub files: Vec<String>,
    pub formats: Vec<String>,
    pub bytes: u64,
    pub lines: u64,
    pub records: u64,
    pub bad_lines: u64,
    pub bad_samples: Vec<BadSample>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BadSample {
    pub file: String,
    pub line: u64,
    pub reason: String,
    pub text: String,
}

impl Input {
    pub fn from(s: &ReadStats) -> Input {
        Input {
            files: s.files.clone(),
            formats: s.formats.clone(),
            bytes: s.bytes,
            lines: s.lines,
            records: s.records,
            bad_lines: s.bad,
            bad_samples: s
                .bad_samples
                .iter()
                .map(|b| BadSample {
                    file: b.file.clone(),
                    line: b.line,
                    reason: b.reason.clone(),
                    text: b.text.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Span {
    pub first: String,
    pub last: String,
    pub duration_s: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RateSummary {
    /// Requests over the span's seconds.
    pub mean_rps: f64,
    pub p50_second_rps: u64,
    pub p99_second_rps: u64,
    pub peak_second: Peak,
    pub peak_minute: Peak,
    /// Requests by hour of day in the log's own time zone (24 entries).
    pub by_hour: Vec<u64>,
    /// Requests per minute: `[minute start (RFC 3339), requests]`.
    pub per_minute: Vec<(String, u64)>,
    /// Requests per second from the first second (kept up to two days).
    pub per_second: Vec<u64>,
    /// Lines more than 2 minutes out of time order that could not be placed in their seconds
    /// (a series past two days): in the minutes, not in the per-second rate.
    pub late_lines: u64,
    /// Lines more than 2 minutes out of time order (two servers' logs in one file), placed in
    /// their own seconds.
    #[serde(default)]
    pub reordered_lines: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Peak {
    pub at: String,
    pub requests: u64,
    pub rps: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Sizes {
    pub total: u64,
    pub mean: f64,
    pub p50: u64,
    pub p95: u64,
    pub max: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Times {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TypeSummary {
    /// `GET /items/{id}`.
    pub name: String,
    pub requests: u64,
    /// Percent of all requests.
    pub share: f64,
    pub status_classes: BTreeMap<String, u64>,
    pub mean_bytes: f64,
    pub time_taken_ms: Option<Times>,
    /// The first request of this type, path and query.
    pub example: String,
    /// Whether it is a static file (left out of sessions).
    pub asset: bool,
    /// Popularity of the ids in its path, when it has one.
    pub ids: Option<Ids>,
    /// The values each query parameter took (`{q}` in the name), by parameter name.
    #[serde(default)]
    pub params: Vec<Param>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub distinct: u64,
    /// Requests whose value was not counted (beyond the memory cap on distinct values).
    pub untracked: u64,
    /// The most requested values, as written in the log: `[value, requests]`.
    pub top: Vec<(String, u64)>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ids {
    pub distinct: u64,
    /// Requests whose id was not counted (beyond the memory cap on distinct ids).
    pub untracked: u64,
    /// The most requested ids: `[id, requests]`.
    pub top: Vec<(String, u64)>,
    pub zipf: Option<ZipfFit>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Clients {
    /// Distinct address + user agent pairs (estimated within about 1%).
    pub distinct: u64,
    pub sessions: u64,
    pub session_idle_s: u64,
    pub requests_per_session: Times,
    pub session_duration_s: Times,
    /// Gaps between a session's page requests, in seconds.
    pub think_time_s: Times,
    /// Static-file requests left out of sessions.
    pub asset_requests: u64,
}
