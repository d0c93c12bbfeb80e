//! What a proxy counts, as relaxed atomics the loop adds to and `/metrics` reads.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::toxic::Stream;

/// Counters of one proxy since it was created. Index 0 is upstream, 1 downstream.
#[derive(Debug, Default)]
pub struct Stats {
    /// Bytes read from the side the stream starts at (toxiproxy's `received_bytes_total`).
    pub received: [AtomicU64; 2],
    /// Bytes written to the side the stream ends at (toxiproxy's `sent_bytes_total`).
    pub sent: [AtomicU64; 2],
    pub accepted: AtomicU64,
    pub closed: AtomicU64,
    /// Connections reset by `reset_peer`.
    pub resets: AtomicU64,
    /// Connections closed by `limit_data`.
    pub limited: AtomicU64,
    /// Connections closed by `timeout`.
    pub timed_out: AtomicU64,
    /// Chunks dropped by `packet_loss`.
    pub dropped_chunks: AtomicU64,
    /// Responses an `http` toxic hit.
    pub http_faults: AtomicU64,
    /// HTTP/2 streams an `http2` toxic reset.
    pub h2_resets: AtomicU64,
    /// GOAWAYs an `http2` toxic sent.
    pub h2_goaways: AtomicU64,
    /// Connections whose upstream could not be reached.
    pub upstream_failures: AtomicU64,
}

impl Stats {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub fn received(&self, s: Stream) -> u64 {
        Self::get(&self.received[s.index()])
    }

    pub fn sent(&self, s: Stream) -> u64 {
        Self::get(&self.sent[s.index()])
    }

    /// Connections open now.
    pub fn open(&self) -> u64 {
        Self::get(&self.accepted).saturating_sub(Self::get(&self.closed))
    }
}
