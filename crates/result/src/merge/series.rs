//! The merged timeline: seconds keyed by their absolute second, counts added, the per-second
//! latency histograms added and their percentiles computed again.

use crate::histogram::{decode_histogram, encode_histogram};
use crate::{RunResult, TimelineEntry};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

#[derive(Default)]
pub(super) struct Seconds {
    by_abs: BTreeMap<u64, Sum>,
    /// The absolute seconds every shard added so far ran in whole: only those are samples of
    /// the merged load (a shard that started later or stopped earlier leaves the rest partial).
    together: Option<(u64, u64)>,
}

#[derive(Default)]
struct Sum {
    ok: u64,
    failed: u64,
    errors: u64,
    bytes_received: u64,
    events: u64,
    tokens: u64,
    streams: crate::second_streams::Sum,
    status_class: BTreeMap<String, u64>,
    error_kinds: BTreeMap<String, u64>,
    grpc: BTreeMap<String, u64>,
    ws: Option<crate::SocketsSecond>,
    latency: Option<Histogram<u64>>,
    partial: bool,
}

impl Seconds {
    pub(super) fn add(&mut self, r: &RunResult, start: u64) -> Result<(), String> {
        let whole: Vec<u64> = r.samples().map(|e| start + e.t).collect();
        let window = match (whole.first(), whole.last()) {
            (Some(&a), Some(&b)) => (a, b + 1),
            _ => (0, 0),
        };
        self.together = Some(match self.together {
            None => window,
            Some((a, b)) => (a.max(window.0), b.min(window.1)),
        });
        for e in &r.timeline {
            let s = self.by_abs.entry(start + e.t).or_default();
            s.partial |= e.partial;
            s.ok += e.ok;
            s.failed += e.failed;
            s.errors += e.errors;
            s.bytes_received += e.bytes_received;
            s.events += e.events;
            s.tokens += e.tokens;
            if let Some(st) = &e.streams {
                s.streams.add(st, e.t)?;
            }
            super::parts::add_counts(&mut s.status_class, &e.status_class);
            super::parts::add_counts(&mut s.error_kinds, &e.error_kinds);
            super::parts::add_counts(&mut s.grpc, &e.grpc);
            crate::websocket::add_seconds(&mut s.ws, e.ws.as_deref())
                .map_err(|err| format!("its second t = {}: {err}", e.t))?;
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

    /// Entries from `start` on, each second's rate as a single run computes it.
    pub(super) fn finish(self, start: u64, run_s: f64) -> Vec<TimelineEntry> {
        let (from, until) = self.together.unwrap_or((0, 0));
        self.by_abs
            .into_iter()
            .filter(|(abs, _)| *abs >= start)
            .map(|(abs, s)| {
                let t = abs - start;
                let requests = s.ok + s.failed + s.errors;
                let whole =
                    !s.partial && (from..until).contains(&abs) && crate::build::is_within(t, run_s);
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
                    rps: crate::build::entry_rate(requests, whole, t, run_s),
                    partial: !whole,
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
                    events: s.events,
                    tokens: s.tokens,
                    streams: s.streams.finish(),
                    grpc: s.grpc,
                    ws: s.ws.map(Box::new),
                    latency_histogram: h.as_ref().map(encode_histogram),
                    faults: Vec::new(),
                }
            })
            .collect()
    }
}
