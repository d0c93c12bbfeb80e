//! Responses read as event streams (Server-Sent Events; an LLM's tokens): when their events
//! arrived. A stream is one outcome; its events are what these histograms add up, by request
//! name like latency, merged exactly.

use crate::compact::HISTOGRAM_MAX_US;
use crate::CompactHistogram;
use std::time::Duration;

/// As `stats.rs` records durations: whole microseconds, at least 1, at most the histograms' top.
fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HISTOGRAM_MAX_US)
}

/// What one event stream measured. In `--sse llm` mode its events are the ones carrying
/// content (tokens), so `first` is the time to first token and `gaps` the inter-token latency.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOutcome {
    /// From the intended send to the first event: what the user waited in the open model.
    /// `None` when no event came.
    pub first: Option<Duration>,
    /// From the actual send to the first event.
    pub first_sent: Option<Duration>,
    /// Microseconds between consecutive events.
    pub gaps: Vec<u32>,
    /// Events read.
    pub events: u64,
    /// From the first event to the end of the stream.
    pub duration: Duration,
    /// Tokens generated: the server's `usage.completion_tokens` when it said, else the content
    /// events counted (`--sse llm`); the events otherwise.
    pub tokens: u64,
}

/// The event streams of a set of outcomes (the run, or one request name).
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    pub streams: u64,
    pub events: u64,
    pub tokens: u64,
    /// Time to first event (token) from the intended send, microseconds.
    pub first: CompactHistogram,
    /// Time to first event (token) from the actual send, microseconds.
    pub first_sent: CompactHistogram,
    /// Gaps between consecutive events (inter-token latency), microseconds.
    pub gap: CompactHistogram,
    /// Events per stream (a count, not a time).
    pub per_stream: CompactHistogram,
    /// From the first event to the end of each stream, microseconds.
    pub duration: CompactHistogram,
}

impl StreamStats {
    pub fn record(&mut self, s: &StreamOutcome) {
        self.streams += 1;
        self.events += s.events;
        self.tokens += s.tokens;
        if let (Some(first), Some(sent)) = (s.first, s.first_sent) {
            self.first.saturating_record(micros(first));
            self.first_sent.saturating_record(micros(sent));
            self.duration.saturating_record(micros(s.duration));
        }
        for &gap in &s.gaps {
            self.gap.saturating_record(u64::from(gap).max(1));
        }
        self.per_stream.saturating_record(s.events.max(1));
    }

    /// Adds another set exactly.
    pub fn merge(&mut self, other: &StreamStats) {
        self.streams += other.streams;
        self.events += other.events;
        self.tokens += other.tokens;
        self.first.add(&other.first);
        self.first_sent.add(&other.first_sent);
        self.gap.add(&other.gap);
        self.per_stream.add(&other.per_stream);
        self.duration.add(&other.duration);
    }

    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.first.heap_bytes()
            + self.first_sent.heap_bytes()
            + self.gap.heap_bytes()
            + self.per_stream.heap_bytes()
            + self.duration.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_add_up_and_merge_exactly() {
        let ms = Duration::from_millis;
        let one = StreamOutcome {
            first: Some(ms(210)),
            first_sent: Some(ms(200)),
            gaps: vec![20_000; 9],
            events: 10,
            duration: ms(180),
            tokens: 10,
        };
        let mut a = StreamStats::default();
        a.record(&one);
        a.record(&StreamOutcome::default());
        let mut b = StreamStats::default();
        b.merge(&a);
        b.merge(&a);
        assert_eq!((b.streams, b.events, b.tokens), (4, 20, 20));
        assert_eq!((b.first.len(), b.gap.len(), b.per_stream.len()), (2, 18, 4));
        let p50 = b.gap.value_at_quantile(0.5);
        assert!((19_900..=20_100).contains(&p50), "{p50}");
    }
}
