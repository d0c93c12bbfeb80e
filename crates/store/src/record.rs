//! What a run becomes in the store: its metadata, its figures (whole run and per name, each
//! with the run's own per-second noise where the timeline has it) and the result itself,
//! compact JSON compressed, histograms and timeline included, so any percentile of any set of
//! runs is computed again exactly.

use crate::error::StoreError;
use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use herd_result::{RunResult, Summary};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// One figure of a run: `name` is empty for the whole run, else a request name.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub name: String,
    pub metric: String,
    pub value: f64,
    /// The standard error of the run's level from its per-second samples (their standard
    /// deviation over the square root of their count); `None` when the run has too few.
    pub noise: Option<f64>,
}

/// The metrics kept for every run (herd compare's keys) and `requests`.
pub const METRICS: [&str; 12] = [
    "throughput",
    "error_rate",
    "p50",
    "p75",
    "p90",
    "p95",
    "p99",
    "p999",
    "max",
    "mean",
    "bytes",
    "requests",
];

fn latency(key: &str, l: &Summary) -> Option<f64> {
    Some(match key {
        "p50" => l.p50,
        "p75" => l.p75,
        "p90" => l.p90,
        "p95" => l.p95,
        "p99" => l.p99,
        "p999" => l.p999,
        "max" => l.max,
        "mean" => l.mean,
        _ => return None,
    })
}

/// Every figure the store keeps of `r`.
pub fn figures(r: &RunResult) -> Vec<Figure> {
    let mut out = Vec::new();
    for key in METRICS {
        let value = latency(key, &r.latency_ms).unwrap_or_else(|| match key {
            "throughput" => r.throughput_rps,
            "error_rate" => herd_compare::error_rate(r),
            "bytes" => r.response_bytes.mean,
            _ => r.totals.completed as f64,
        });
        out.push(Figure {
            name: String::new(),
            metric: key.to_owned(),
            value,
            noise: noise(key, r),
        });
    }
    for n in &r.by_name {
        for key in METRICS {
            let value = latency(key, &n.latency_ms).unwrap_or_else(|| match key {
                "throughput" => n.throughput_rps,
                "error_rate" if n.totals.scheduled > 0 => {
                    n.totals.scheduled.saturating_sub(n.totals.ok) as f64
                        / n.totals.scheduled as f64
                }
                "bytes" => n.response_bytes.mean,
                "requests" => n.totals.completed as f64,
                _ => 0.0,
            });
            out.push(Figure {
                name: n.name.clone(),
                metric: key.to_owned(),
                value,
                noise: None,
            });
        }
    }
    out
}

/// The standard error of a run's level of `key`, from its per-second samples.
pub fn noise(key: &str, r: &RunResult) -> Option<f64> {
    let s = herd_compare::per_second(key, r)?;
    if s.len() < herd_compare::MIN_SECONDS {
        return None;
    }
    let n = s.len() as f64;
    let mean = s.iter().sum::<f64>() / n;
    let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((var / n).sqrt())
}

/// What identifies the load a run applied, whatever its labels or when it ran: the same
/// request, model, level and length, and the same workload file and request names.
pub fn workload_hash(r: &RunResult) -> String {
    let c = &r.config;
    let names: Vec<&str> = r.by_name.iter().map(|n| n.name.as_str()).collect();
    let what = serde_json::json!({
        "url": c.url, "method": c.method, "model": c.model, "connections": c.connections,
        "rate": c.rate, "duration_s": c.duration_s, "requests": c.requests,
        "headers": c.headers, "body_bytes": c.body_bytes, "workload": r.workload,
        "names": names,
    });
    hex(&Sha256::digest(what.to_string().as_bytes()))[..16].to_owned()
}

/// What `herd history ls --workload` matches: the workload file, else the URL.
pub fn workload_name(r: &RunResult) -> String {
    r.workload.clone().unwrap_or_else(|| r.config.url.clone())
}

/// The result as stored: compact JSON, gzip. Returns (bytes, the JSON's length, its digest).
pub(crate) fn pack(r: &RunResult) -> Result<(Vec<u8>, usize, String), StoreError> {
    let json = serde_json::to_vec(r).map_err(|e| StoreError::Bad(e.to_string()))?;
    let digest = hex(&Sha256::digest(&json));
    let mut z = GzEncoder::new(Vec::with_capacity(json.len() / 4), Compression::default());
    z.write_all(&json)
        .map_err(|e| StoreError::Bad(e.to_string()))?;
    let bytes = z.finish().map_err(|e| StoreError::Bad(e.to_string()))?;
    Ok((bytes, json.len(), digest))
}

pub(crate) fn unpack(id: i64, bytes: &[u8]) -> Result<RunResult, StoreError> {
    let mut json = String::new();
    GzDecoder::new(bytes)
        .read_to_string(&mut json)
        .map_err(|e| StoreError::Bad(format!("run #{id} cannot be read back: {e}")))?;
    herd_result::parse_json(&json, &format!("run #{id}"))
        .map_err(|e| StoreError::Bad(format!("run #{id} cannot be read back: {e}")))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The labels a result carries in its config (`herd run --label`).
pub fn labels(r: &RunResult) -> BTreeMap<String, String> {
    r.config.labels.clone()
}
