//! A WebSocket run's sockets on the endpoint: ping round trips as a histogram (the latency's
//! buckets), the server's closes by code and name, refused Upgrades by status; cumulative over
//! the closed seconds, absent until a socket told one of them.

use super::family::{family, point, Family, Point};
use herd_engine::metrics::{close_code_name, CodeCounts, SocketSecond};

#[derive(Debug, Default)]
pub(super) struct Sockets {
    buckets: Vec<u64>,
    count: u64,
    sum_s: f64,
    closes: CodeCounts,
    refused: CodeCounts,
}

impl Sockets {
    pub fn add(&mut self, s: &SocketSecond, bounds: &[f64]) {
        if let Some(h) = s.ping.histogram() {
            self.buckets.resize(bounds.len(), 0);
            for (n, bound) in self.buckets.iter_mut().zip(bounds) {
                *n += h.count_between(0, (bound * 1e6) as u64);
            }
            self.count += h.len();
            self.sum_s += h.mean() * h.len() as f64 / 1e6;
        }
        self.closes.merge(&s.closes);
        self.refused.merge(&s.refused);
    }

    pub fn families(&self, bounds: &[f64], out: &mut Vec<Family>) {
        let f = family(
            out,
            "herd_ws_ping_rtt_seconds",
            "histogram",
            "WebSocket ping -> pong round trips, from each ping's intended send time.",
        );
        let bucket = "herd_ws_ping_rtt_seconds_bucket";
        let counts = self.buckets.iter().chain(std::iter::repeat(&0));
        for (bound, n) in bounds.iter().zip(counts) {
            f.points
                .push(point(bucket, Some(("le", bound.to_string())), *n as f64));
        }
        f.points.push(point(
            bucket,
            Some(("le", "+Inf".into())),
            self.count as f64,
        ));
        f.points
            .push(point("herd_ws_ping_rtt_seconds_sum", None, self.sum_s));
        f.points.push(point(
            "herd_ws_ping_rtt_seconds_count",
            None,
            self.count as f64,
        ));
        let f = family(
            out,
            "herd_ws_closes_total",
            "counter",
            "WebSocket closes the server began, by close code (1006: no close frame).",
        );
        for (code, n) in self.closes.iter() {
            f.points.push(Point {
                name: f.name.to_owned(),
                labels: vec![
                    ("code".to_owned(), code.to_string()),
                    ("name".to_owned(), close_code_name(code).to_owned()),
                ],
                value: n as f64,
            });
        }
        let f = family(
            out,
            "herd_ws_handshakes_failed_total",
            "counter",
            "WebSocket Upgrades the server refused, by the HTTP status it answered.",
        );
        for (status, n) in self.refused.iter() {
            f.points.push(point(
                f.name,
                Some(("status", status.to_string())),
                n as f64,
            ));
        }
    }
}
