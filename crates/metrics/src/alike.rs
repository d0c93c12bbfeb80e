//! A response's usual times recorded once for the histograms that would each hold them.
//!
//! Most responses have one value for several histograms: sent at its intended instant (the
//! closed model), a response's latency is its service time; read whole in one pass, its waiting
//! phase is its service time too and it spent 0 us receiving. Six histogram inserts a response
//! (the totals' latency, service, waiting and receiving, the second's latency and service)
//! were a fifth of herd's own instructions per request on plain HTTP/1.1 (bench/RESULTS.md,
//! session 12). A [`crate::Recorder`] records such a value once here, counts the zeros, and
//! adds these histograms into the real ones (bucket by bucket, exactly) before anything reads
//! its totals or a second leaves it: each histogram then holds what recording every value
//! into it would have given.

use crate::stats::micros;
use crate::{empty_second_histogram, CompactHistogram, LiveHistogram, Outcome, Second, Stats};
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Alike {
    /// Latency, service time and waiting of responses that had one value for all three.
    all: CompactHistogram,
    /// Service time and waiting of responses that had one value for both, their latency
    /// another (recorded into the latency histogram itself).
    sent_late: CompactHistogram,
    /// Responses that spent 0 us receiving (recorded as 1 us, the histograms' floor).
    instant: u64,
    /// The current second's responses whose latency and service time were one value.
    second: Option<Box<LiveHistogram>>,
}

impl Alike {
    pub fn new() -> Self {
        Alike {
            // On every request, as the totals' own: dense, no search on the hot path.
            all: CompactHistogram::dense(),
            sent_late: CompactHistogram::dense(),
            instant: 0,
            second: None,
        }
    }

    /// Records `o` into `total` and `second` when it is a usual response (waiting was all of
    /// its service time, receiving nothing); `false`, recording nothing, otherwise.
    #[inline]
    pub fn record(&mut self, o: &Outcome, total: &mut Stats, second: &mut Second) -> bool {
        let (Ok(_), Some(service)) = (o.result, o.service) else {
            return false;
        };
        if o.phases.waiting != Some(service) || o.phases.receiving != Some(Duration::ZERO) {
            return false;
        }
        total.count(o);
        second.count(o);
        self.instant += 1;
        let (latency, service) = (micros(o.latency), micros(service));
        if latency == service {
            self.all.saturating_record(latency);
            self.second
                .get_or_insert_with(|| Box::new(empty_second_histogram()))
                .saturating_record(latency);
        } else {
            total.latency.saturating_record(latency);
            self.sent_late.saturating_record(service);
            second.latency.saturating_record(latency);
            second.service.saturating_record(service);
        }
        true
    }

    /// Adds what was recorded here for the totals into `total`, and forgets it.
    pub fn settle(&mut self, total: &mut Stats) {
        if !self.all.is_empty() {
            for h in [&mut total.latency, &mut total.service, &mut total.waiting] {
                h.add(&self.all);
            }
            self.all.reset();
        }
        if !self.sent_late.is_empty() {
            total.service.add(&self.sent_late);
            total.waiting.add(&self.sent_late);
            self.sent_late.reset();
        }
        if self.instant > 0 {
            total
                .receiving
                .record_n(micros(Duration::ZERO), self.instant);
            self.instant = 0;
        }
    }

    /// Adds what was recorded here for the current second into `second`, and forgets it.
    pub fn settle_second(&mut self, second: &mut Second) {
        if let Some(h) = self.second.as_mut().filter(|h| !h.is_empty()) {
            second.latency.add_live(h);
            second.service.add_live(h);
            h.reset();
        }
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.all.heap_bytes()
            + self.sent_late.heap_bytes()
            + self.second.as_ref().map_or(0, |h| {
                size_of::<LiveHistogram>() + h.distinct_values() * size_of::<u32>()
            })
    }
}
