//! How much a metric varies within a run, and whether a change is beyond that: per-second
//! samples for the metrics the timeline carries, histogram intervals for the others.

use crate::significance::{quantile_interval, welch};
use herd_result::{decode_histogram, RunResult};
use serde::Serialize;

/// Chance of a false alarm per key metric when nothing changed.
pub const ALPHA: f64 = 0.05;
/// Fewer per-second samples than this and noise cannot be judged.
pub const MIN_SECONDS: usize = 3;

/// Whether a difference is more than the runs' own variation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Noise {
    /// Welch's t-test on per-second values: beyond noise when `p < ALPHA`.
    PerSecond { p: f64 },
    /// The 95% intervals of the whole-run quantile (or mean) overlap or not.
    Histogram { overlap: bool },
    /// Too few seconds, or no histogram.
    Unknown,
}

impl Noise {
    /// `Some(true)` beyond noise, `Some(false)` within it, `None` not known.
    pub fn beyond(self) -> Option<bool> {
        match self {
            Noise::PerSecond { p } => Some(p < ALPHA),
            Noise::Histogram { overlap } => Some(!overlap),
            Noise::Unknown => None,
        }
    }
}

/// Per-second samples of a metric: only whole seconds of load (`RunResult::samples`), and for
/// latencies and shares only seconds in which something ended.
pub fn per_second(key: &str, r: &RunResult) -> Option<Vec<f64>> {
    let inside = r.samples();
    let busy = |f: fn(&herd_result::TimelineEntry) -> f64| {
        inside
            .clone()
            .filter(|e| e.requests > 0)
            .map(f)
            .collect::<Vec<_>>()
    };
    Some(match key {
        "throughput" => inside.map(|e| e.rps).collect(),
        "error_rate" => busy(|e| (e.failed + e.errors) as f64 / e.requests as f64),
        "p50" => busy(|e| e.p50_ms),
        "p90" => busy(|e| e.p90_ms),
        "p99" => busy(|e| e.p99_ms),
        "max" => busy(|e| e.max_ms),
        // Seconds in which event streams ended: the timeline's streams.
        "ttft_p50" => streams(r, |s| s.ttft_p50_ms),
        "ttft_p99" => streams(r, |s| s.ttft_p99_ms),
        "itl_p50" => streams(r, |s| s.itl_p50_ms),
        "itl_p99" => streams(r, |s| s.itl_p99_ms),
        _ => return None,
    })
}

/// A stream figure of each whole second in which streams ended.
fn streams(r: &RunResult, f: fn(&herd_result::TimelineStreams) -> f64) -> Vec<f64> {
    r.samples()
        .filter_map(|e| e.streams.as_ref().map(f))
        .collect()
}

/// How a metric's change between two runs compares with their noise.
pub fn judge(key: &str, base: &RunResult, new: &RunResult) -> Noise {
    if let (Some(a), Some(b)) = (per_second(key, base), per_second(key, new)) {
        if a.len() < MIN_SECONDS || b.len() < MIN_SECONDS {
            return Noise::Unknown;
        }
        return welch(&a, &b).map_or(Noise::Unknown, |w| Noise::PerSecond { p: w.p });
    }
    let quantile = match key {
        "p75" => 0.75,
        "p95" => 0.95,
        "p999" => 0.999,
        "mean" => return mean_noise(base, new),
        _ => return Noise::Unknown,
    };
    histogram_noise(&base.histograms.latency, &new.histograms.latency, quantile)
}

pub fn histogram_noise(base: &str, new: &str, quantile: f64) -> Noise {
    let (Ok(a), Ok(b)) = (decode_histogram(base), decode_histogram(new)) else {
        return Noise::Unknown;
    };
    match (
        quantile_interval(&a, quantile),
        quantile_interval(&b, quantile),
    ) {
        (Some((alo, ahi)), Some((blo, bhi))) => Noise::Histogram {
            overlap: alo <= bhi && blo <= ahi,
        },
        _ => Noise::Unknown,
    }
}

/// 95% intervals of the mean, mean ± 1.96·stddev/√n, from the summaries.
fn mean_noise(a: &RunResult, b: &RunResult) -> Noise {
    let interval = |r: &RunResult| {
        let s = &r.latency_ms;
        (s.count > 0).then(|| {
            let half = 1.96 * s.stddev / (s.count as f64).sqrt();
            (s.mean - half, s.mean + half)
        })
    };
    match (interval(a), interval(b)) {
        (Some((alo, ahi)), Some((blo, bhi))) => Noise::Histogram {
            overlap: alo <= bhi && blo <= ahi,
        },
        _ => Noise::Unknown,
    }
}
