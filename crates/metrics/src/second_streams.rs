//! One second's event streams (Server-Sent Events; an LLM's tokens): the time to first event
//! from the intended and the actual send, and the gaps between events, of the streams that
//! ended in the second, as [`SecondLatency`]s: a full histogram while the second is live, a few
//! percentiles once sealed. Part of the second's record, so every per-second output has them.

use crate::second_latency::SecondLatency;
use crate::StreamOutcome;
use herd_spill::{get_varint, put_varint, Spilled};

/// Whole microseconds, at least 1 (as the run's histograms record them).
fn micros(d: std::time::Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

/// The event streams that ended in one second (boxed in [`crate::Second`]: most runs have none).
#[derive(Clone, Debug, Default)]
pub struct SecondStreams {
    pub streams: u64,
    /// Time to first event (token) from the intended send, microseconds.
    pub first: SecondLatency,
    /// The same from the actual send.
    pub first_sent: SecondLatency,
    /// Gaps between consecutive events (inter-token latency), microseconds.
    pub gap: SecondLatency,
}

impl SecondStreams {
    pub fn record(&mut self, s: &StreamOutcome) {
        self.streams += 1;
        if let (Some(first), Some(sent)) = (s.first, s.first_sent) {
            self.first.saturating_record(micros(first));
            self.first_sent.saturating_record(micros(sent));
        }
        for &gap in &s.gaps {
            self.gap.saturating_record(u64::from(gap).max(1));
        }
    }

    /// Adds another worker's part of the same second.
    pub fn add(&mut self, other: &SecondStreams) {
        self.streams += other.streams;
        self.first.add(&other.first);
        self.first_sent.add(&other.first_sent);
        self.gap.add(&other.gap);
    }

    /// Keeps the summaries and frees the histograms.
    pub fn seal(&mut self) {
        self.first.seal();
        self.first_sent.seal();
        self.gap.seal();
    }

    pub fn held_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.first.heap_bytes()
            + self.first_sent.heap_bytes()
            + self.gap.heap_bytes()
    }
}

/// On disk (the timeline's spill): the count, then the three summaries.
impl Spilled for SecondStreams {
    fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.streams);
        self.first.encode(out);
        self.first_sent.encode(out);
        self.gap.encode(out);
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some(SecondStreams {
            streams: get_varint(input)?,
            first: SecondLatency::decode(input)?,
            first_sent: SecondLatency::decode(input)?,
            gap: SecondLatency::decode(input)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stream(first_ms: u64, sent_ms: u64, gap_us: u32) -> StreamOutcome {
        StreamOutcome {
            first: Some(Duration::from_millis(first_ms)),
            first_sent: Some(Duration::from_millis(sent_ms)),
            gaps: vec![gap_us; 4],
            events: 5,
            duration: Duration::from_millis(80),
            tokens: 5,
        }
    }

    #[test]
    fn parts_of_a_second_add_up_and_survive_the_spill_as_summaries() {
        let (mut a, mut b) = (SecondStreams::default(), SecondStreams::default());
        a.record(&stream(300, 200, 20_000));
        b.record(&stream(900, 200, 20_000));
        b.record(&stream(600, 210, 30_000));
        a.add(&b);
        assert_eq!(a.streams, 3);
        assert_eq!(a.gap.len(), 12);
        let p50 = a.first.value_at_quantile(0.5);
        assert!((599_000..=605_000).contains(&p50), "{p50}");
        assert!(a.first_sent.max() < 212_000);
        let mut bytes = Vec::new();
        a.encode(&mut bytes);
        let back = SecondStreams::decode(&mut bytes.as_slice()).unwrap();
        assert_eq!(back.streams, 3);
        assert!(back.first.is_sealed());
        assert_eq!(back.first.max(), a.first.max());
        assert_eq!(back.gap.len(), 12);
    }
}
