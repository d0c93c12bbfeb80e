//! The merged timeline: seconds keyed by their absolute second, counts added, the per-second
//! latency histograms added and their percentiles computed again.

use crate::histogram::{decode_histogram, encode_histogram};
use crate::{RunResult, TimelineEntry};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

#[derive(Default)]
pub(super) struct Seconds {
    by_abs: BTreeMap<u64, Sum>,
}

#[derive(Default)]
struct Sum {
    ok: u64,
    failed: u64,
    errors: u64,
    bytes_received: u64,
    status_class: BTreeMap<String, u64>,
    error_kinds: BTreeMap<String, u64>,
    latency: Option<Histogram<u64>>,
}

impl Seconds {
    pub(super) fn add(&mut self, r: &RunResult, start: u64) -> Result<(), String> {
        for e in &r.timeline {
            let s = self.by_abs.entry(start + e.t).or_default();
            s.ok += e.ok;
            s.failed += e.failed;
            s.errors += e.errors;
            s.bytes_received += e.bytes_received;
            super::parts::add_counts(&mut s.status_class, &e.status_class);
            super::parts::add_counts(&mut s.error_kinds, &e.error_kinds);
            match &e.latency_histogram {
                Some(text) => {
                    let h = decode_histogram(text).map_err(|err| {
                        format!("the latency histogram of its second t = {} cannot be read: {err}", e.t)
                    })?;
                    match &mut s.latency {
                        None => s.latency = Some(h),
                        Some(a) => a
                            .add(&h)
                            .map_err(|err| format!("per-second histograms do not add: {err:?}"))?,
                    }
                }
                None if e.requests > 0 => {
                    return Err(format!(
                        "its timeline has no per-second histograms (t = {}): it was written by an older herd",
                        e.t
                    ))
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Entries from `start` on, each second's rate over the part of it inside the run, as a
    /// single run computes it.
    pub(super) fn finish(self, start: u64, run_s: f64) -> Vec<TimelineEntry> {
        self.by_abs
            .into_iter()
            .filter(|(abs, _)| *abs >= start)
            .map(|(abs, s)| {
                let t = abs - start;
                let requests = s.ok + s.failed + s.errors;
                let inside = (run_s - t as f64).min(1.0);
                let span = if inside > 0.0 { inside } else { 1.0 };
                let h = s.latency;
                let q = |quantile: f64| match &h {
                    Some(h) if !h.is_empty() => h.value_at_quantile(quantile) as f64 / 1e3,
                    _ => 0.0,
                };
                TimelineEntry {
                    t,
                    requests,
                    ok: s.ok,
                    failed: s.failed,
                    errors: s.errors,
                    rps: requests as f64 / span,
                    p50_ms: q(0.50),
                    p90_ms: q(0.90),
                    p99_ms: q(0.99),
                    max_ms: match &h {
                        Some(h) if !h.is_empty() => h.max() as f64 / 1e3,
                        _ => 0.0,
                    },
                    bytes_received: s.bytes_received,
                    status_class: s.status_class,
                    error_kinds: s.error_kinds,
                    latency_histogram: h.as_ref().map(encode_histogram),
                }
            })
            .collect()
    }
}
