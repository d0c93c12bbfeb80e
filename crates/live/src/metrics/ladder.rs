//! A histogram in Prometheus' shape, cumulative over the closed seconds: a count per bucket
//! bound, the count and the sum, fed from each second's histograms. The request latency
//! (`herd_request_duration_seconds`), the event streams' time to first token and inter-token
//! latency (`herd_stream_ttft_seconds`, `herd_stream_itl_seconds`) and WebSocket ping round
//! trips (`herd_ws_ping_rtt_seconds`) are each one.

use super::family::{family, point, Family};
use herd_engine::metrics::LiveHistogram;

#[derive(Debug, Default)]
pub(super) struct Ladder {
    buckets: Vec<u64>,
    count: u64,
    sum_s: f64,
}

impl Ladder {
    /// Adds one second's histogram (microseconds) under `bounds` (seconds).
    pub fn add(&mut self, h: &LiveHistogram, bounds: &[f64]) {
        self.buckets.resize(bounds.len(), 0);
        for (n, bound) in self.buckets.iter_mut().zip(bounds) {
            *n += h.count_between(0, (bound * 1e6) as u64);
        }
        self.count += h.len();
        self.sum_s += h.mean() * h.len() as f64 / 1e6;
    }

    /// The family `name`: its buckets, `+Inf`, the sum and the count.
    pub fn family(
        &self,
        out: &mut Vec<Family>,
        names: [&'static str; 4],
        help: &'static str,
        bounds: &[f64],
    ) {
        let [name, bucket, sum, count] = names;
        let f = family(out, name, "histogram", help);
        for (i, bound) in bounds.iter().enumerate() {
            let n = self.buckets.get(i).copied().unwrap_or(0);
            f.points
                .push(point(bucket, Some(("le", bound.to_string())), n as f64));
        }
        let inf = point(bucket, Some(("le", "+Inf".into())), self.count as f64);
        f.points.push(inf);
        f.points.push(point(sum, None, self.sum_s));
        f.points.push(point(count, None, self.count as f64));
    }
}

/// The event streams' families: time to first token and inter-token latency.
pub(super) fn streams(ttft: &Ladder, itl: &Ladder, bounds: &[f64], out: &mut Vec<Family>) {
    ttft.family(
        out,
        [
            "herd_stream_ttft_seconds",
            "herd_stream_ttft_seconds_bucket",
            "herd_stream_ttft_seconds_sum",
            "herd_stream_ttft_seconds_count",
        ],
        "Time to the first event (token) of each event stream, from its intended send.",
        bounds,
    );
    itl.family(
        out,
        [
            "herd_stream_itl_seconds",
            "herd_stream_itl_seconds_bucket",
            "herd_stream_itl_seconds_sum",
            "herd_stream_itl_seconds_count",
        ],
        "Gaps between consecutive events (inter-token latency) of the event streams.",
        bounds,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_add_up_into_cumulative_buckets() {
        let bounds = [0.1, 0.25, 1.0];
        let mut l = Ladder::default();
        for ms in [[50, 200], [300, 2_000]] {
            let mut h = herd_engine::metrics::empty_second_histogram();
            for v in ms {
                h.record(v * 1_000).unwrap();
            }
            l.add(&h, &bounds);
        }
        let mut out = Vec::new();
        let names = ["t", "t_bucket", "t_sum", "t_count"];
        l.family(&mut out, names, "help", &bounds);
        let values: Vec<f64> = out[0].points.iter().map(|p| p.value).collect();
        assert_eq!(values[..4], [1.0, 2.0, 3.0, 4.0]);
        assert!((values[4] - 2.55).abs() < 0.03, "{values:?}");
        assert_eq!(values[5], 4.0);
    }
}
