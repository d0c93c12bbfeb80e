//! Event streams in a result: Server-Sent Events read as they arrived (an LLM's tokens with
//! `--sse llm`). Absent from a run that read none. Each histogram is kept encoded, so shards
//! merge exactly as latency does.

use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::Summary;
use hdrhistogram::Histogram;
use herd_metrics::StreamStats;
use serde::{Deserialize, Serialize};

/// A run's (or a request name's) event streams.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Streams {
    /// Responses read as event streams (`Content-Type: text/event-stream`).
    pub streams: u64,
    /// Events read (events carrying content, tokens' chunks, with `--sse llm`).
    pub events: u64,
    /// Tokens: each stream's `usage.completion_tokens` when the server said, else its content
    /// events (`--sse llm`); its events otherwise.
    pub tokens: u64,
    pub events_per_second: f64,
    pub tokens_per_second: f64,
    /// Time to the first event (first token), from the intended send: what a user waited.
    pub ttft_ms: Summary,
    /// Time to the first event (first token), from the actual send: what the server took.
    pub ttft_sent_ms: Summary,
    /// Gaps between consecutive events (inter-token latency).
    pub itl_ms: Summary,
    /// From the first event to the end of each stream.
    pub duration_ms: Summary,
    /// Events per stream.
    pub events_per_stream: Counts,
    pub histograms: StreamHistograms,
}

/// A count's distribution (events per stream), in the counted unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// The histograms behind [`Streams`], encoded as [`crate::Histograms`]' (microseconds; events
/// per stream in events).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamHistograms {
    pub ttft: String,
    pub ttft_sent: String,
    pub itl: String,
    pub duration: String,
    pub events_per_stream: String,
}

/// The histograms in the order [`StreamHistograms`] lists them.
type Five = [Histogram<u64>; 5];

/// The event streams of `s` over `seconds` of measurement; `None` when there were none.
pub(crate) fn of(s: Option<&StreamStats>, seconds: f64) -> Option<Streams> {
    let s = s.filter(|s| s.streams > 0)?;
    let h = [&s.first, &s.first_sent, &s.gap, &s.duration, &s.per_stream].map(|h| h.to_histogram());
    Some(from(s.streams, s.events, s.tokens, &h, seconds))
}

fn from(streams: u64, events: u64, tokens: u64, h: &Five, seconds: f64) -> Streams {
    let per = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    let n = &h[4];
    Streams {
        streams,
        events,
        tokens,
        events_per_second: per(events),
        tokens_per_second: per(tokens),
        ttft_ms: summarize_us(&h[0]),
        ttft_sent_ms: summarize_us(&h[1]),
        itl_ms: summarize_us(&h[2]),
        duration_ms: summarize_us(&h[3]),
        events_per_stream: if n.is_empty() {
            Counts::default()
        } else {
            Counts {
                min: n.min(),
                mean: (n.mean() * 1e3).round() / 1e3,
                p50: n.value_at_quantile(0.5),
                p99: n.value_at_quantile(0.99),
                max: n.max(),
            }
        },
        histograms: StreamHistograms {
            ttft: encode_histogram(&h[0]),
            ttft_sent: encode_histogram(&h[1]),
            itl: encode_histogram(&h[2]),
            duration: encode_histogram(&h[3]),
            events_per_stream: encode_histogram(&h[4]),
        },
    }
}

/// Shards' event streams added up exactly.
#[derive(Default)]
pub(crate) struct StreamSum {
    sum: Option<(u64, u64, u64, Five)>,
}

impl StreamSum {
    pub fn add(&mut self, s: Option<&Streams>) -> Result<(), String> {
        let Some(s) = s else {
            return Ok(());
        };
        let h = &s.histograms;
        let mut got = Vec::with_capacity(5);
        for (what, enc) in [
            ("ttft", &h.ttft),
            ("ttft_sent", &h.ttft_sent),
            ("itl", &h.itl),
            ("duration", &h.duration),
            ("events_per_stream", &h.events_per_stream),
        ] {
            got.push(
                decode_histogram(enc).map_err(|e| format!("the streams' {what} histogram: {e}"))?,
            );
        }
        let got: Five = got.try_into().expect("five histograms");
        match &mut self.sum {
            None => self.sum = Some((s.streams, s.events, s.tokens, got)),
            Some((streams, events, tokens, have)) => {
                *streams += s.streams;
                *events += s.events;
                *tokens += s.tokens;
                for (a, b) in have.iter_mut().zip(&got) {
                    a.add(b)
                        .map_err(|e| format!("histograms do not add up: {e:?}"))?;
                }
            }
        }
        Ok(())
    }

    pub fn finish(self, seconds: f64) -> Option<Streams> {
        let (streams, events, tokens, h) = self.sum?;
        Some(from(streams, events, tokens, &h, seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::StreamOutcome;
    use std::time::Duration;

    fn stats(first_ms: u64, gap_us: u32, n: u64) -> StreamStats {
        let mut s = StreamStats::default();
        for i in 0..n {
            s.record(&StreamOutcome {
                first: Some(Duration::from_millis(first_ms + i)),
                first_sent: Some(Duration::from_millis(first_ms)),
                gaps: vec![gap_us; 9],
                events: 10,
                duration: Duration::from_millis(200),
                tokens: 12,
            });
        }
        s
    }

    #[test]
    fn shards_merge_to_what_one_run_would_have_measured() {
        let (a, b) = (stats(200, 20_000, 30), stats(400, 35_000, 10));
        let mut whole = a.clone();
        whole.merge(&b);
        let mut sum = StreamSum::default();
        sum.add(of(Some(&a), 10.0).as_ref()).unwrap();
        sum.add(None).unwrap();
        sum.add(of(Some(&b), 10.0).as_ref()).unwrap();
        let merged = sum.finish(10.0).unwrap();
        assert_eq!(merged, of(Some(&whole), 10.0).unwrap());
        assert_eq!(
            (merged.streams, merged.events, merged.tokens),
            (40, 400, 480)
        );
        assert_eq!(merged.tokens_per_second, 48.0);
        assert!(of(Some(&StreamStats::default()), 1.0).is_none());
    }
}
