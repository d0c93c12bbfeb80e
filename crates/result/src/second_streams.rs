//! A timeline second's event streams ([`TimelineStreams`]): from a run's own second (live
//! histograms, or a sealed second's percentiles), and added up across shards (`herd merge`),
//! so the per-second time to first token and inter-token latency are exact in both.

use crate::histogram::{decode_histogram, encode_histogram};
use crate::result::TimelineStreams;
use hdrhistogram::Histogram;
use herd_metrics::{SecondLatency, SecondStreams};

/// The entry of a run's own second.
pub(crate) fn of_second(s: &SecondStreams) -> TimelineStreams {
    let ms = |h: &SecondLatency, q: f64| {
        if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(q) as f64 / 1e3
        }
    };
    let encoded = |h: &SecondLatency| {
        h.histogram()
            .filter(|h| !h.is_empty())
            .map(encode_histogram)
    };
    TimelineStreams {
        streams: s.streams,
        ttft_p50_ms: ms(&s.first, 0.5),
        ttft_p99_ms: ms(&s.first, 0.99),
        ttft_sent_p50_ms: ms(&s.first_sent, 0.5),
        ttft_sent_p99_ms: ms(&s.first_sent, 0.99),
        itl_p50_ms: ms(&s.gap, 0.5),
        itl_p99_ms: ms(&s.gap, 0.99),
        ttft_histogram: encoded(&s.first),
        ttft_sent_histogram: encoded(&s.first_sent),
        itl_histogram: encoded(&s.gap),
    }
}

/// Several shards' parts of one second, added.
#[derive(Default)]
pub(crate) struct Sum {
    streams: u64,
    first: Option<Histogram<u64>>,
    first_sent: Option<Histogram<u64>>,
    gap: Option<Histogram<u64>>,
}

impl Sum {
    /// Adds second `t`'s part; a histogram that does not read says where.
    pub fn add(&mut self, e: &TimelineStreams, t: u64) -> Result<(), String> {
        self.streams += e.streams;
        let parts = [
            (&mut self.first, &e.ttft_histogram, "ttft"),
            (&mut self.first_sent, &e.ttft_sent_histogram, "ttft_sent"),
            (&mut self.gap, &e.itl_histogram, "itl"),
        ];
        for (sum, text, what) in parts {
            let Some(text) = text else { continue };
            let h = decode_histogram(text).map_err(|err| {
                format!("the {what} histogram of its second t = {t} cannot be read: {err}")
            })?;
            match sum {
                None => *sum = Some(h),
                Some(a) => a
                    .add(&h)
                    .map_err(|err| format!("per-second histograms do not add: {err:?}"))?,
            }
        }
        Ok(())
    }

    /// The merged entry; `None` when no part had a stream.
    pub fn finish(self) -> Option<TimelineStreams> {
        if self.streams == 0 {
            return None;
        }
        let ms = |h: &Option<Histogram<u64>>, q: f64| match h {
            Some(h) if !h.is_empty() => h.value_at_quantile(q) as f64 / 1e3,
            _ => 0.0,
        };
        Some(TimelineStreams {
            streams: self.streams,
            ttft_p50_ms: ms(&self.first, 0.5),
            ttft_p99_ms: ms(&self.first, 0.99),
            ttft_sent_p50_ms: ms(&self.first_sent, 0.5),
            ttft_sent_p99_ms: ms(&self.first_sent, 0.99),
            itl_p50_ms: ms(&self.gap, 0.5),
            itl_p99_ms: ms(&self.gap, 0.99),
            ttft_histogram: self.first.as_ref().map(encode_histogram),
            ttft_sent_histogram: self.first_sent.as_ref().map(encode_histogram),
            itl_histogram: self.gap.as_ref().map(encode_histogram),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::StreamOutcome;
    use std::time::Duration;

    fn part(firsts_ms: &[u64]) -> TimelineStreams {
        let mut s = SecondStreams::default();
        for &f in firsts_ms {
            s.record(&StreamOutcome {
                first: Some(Duration::from_millis(f)),
                first_sent: Some(Duration::from_millis(200)),
                gaps: vec![20_000; 3],
                events: 4,
                duration: Duration::from_millis(60),
                tokens: 4,
            });
        }
        of_second(&s)
    }

    #[test]
    fn shards_parts_of_a_second_merge_as_one_run_would_have_them() {
        let (a, b) = (part(&[200, 210]), part(&[900, 950, 1000]));
        let mut sum = Sum::default();
        sum.add(&a, 3).unwrap();
        sum.add(&b, 3).unwrap();
        let merged = sum.finish().unwrap();
        let whole = part(&[200, 210, 900, 950, 1000]);
        assert_eq!(merged, whole);
        assert_eq!(merged.streams, 5);
        assert!((merged.itl_p50_ms - 20.0).abs() < 0.2, "{merged:?}");
        assert!(Sum::default().finish().is_none());
        let bad = TimelineStreams {
            ttft_histogram: Some("not base64".into()),
            ..a
        };
        let e = Sum::default().add(&bad, 7).unwrap_err();
        assert!(e.contains("ttft histogram of its second t = 7"), "{e}");
    }
}
