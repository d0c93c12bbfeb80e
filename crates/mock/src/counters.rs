//! What each worker thread counts (connections, requests, injected errors), summed by
//! `Server::stats` across threads.

use std::sync::atomic::{AtomicU64, Ordering};

/// One worker thread's counters, on a cache line of their own so that threads counting side
/// by side do not keep stealing it from each other.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Counters {
    pub(crate) connections: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) injected: AtomicU64,
}

/// Adds one to a counter that only its own worker thread writes: a plain load and store
/// instead of a locked read-modify-write, since no other writer can race with it.
pub(crate) fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}
