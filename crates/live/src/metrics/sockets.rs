//! A WebSocket run's sockets on the endpoint: ping round trips as a histogram (the latency's
//! buckets), the server's closes by code and name, refused Upgrades by status; cumulative over
//! the closed seconds, absent until a socket told one of them. A schedule of messages' send
//! backlog is two gauges: as the last second closed.

use super::family::{family, point, Family, Point};
use super::ladder::Ladder;
use herd_engine::metrics::{close_code_name, Backlog, CodeCounts, SocketSecond};

#[derive(Debug, Default)]
pub(super) struct Sockets {
    ping: Ladder,
    closes: CodeCounts,
    refused: CodeCounts,
    backlog: Option<Backlog>,
}

impl Sockets {
    pub fn add(&mut self, s: &SocketSecond, bounds: &[f64]) {
        if let Some(h) = s.ping.histogram() {
            self.ping.add(h, bounds);
        }
        self.closes.merge(&s.closes);
        self.refused.merge(&s.refused);
        if s.backlog.is_some() {
            self.backlog = s.backlog;
        }
    }

    pub fn families(&self, bounds: &[f64], out: &mut Vec<Family>) {
        self.ping.family(
            out,
            [
                "herd_ws_ping_rtt_seconds",
                "herd_ws_ping_rtt_seconds_bucket",
                "herd_ws_ping_rtt_seconds_sum",
                "herd_ws_ping_rtt_seconds_count",
            ],
            "WebSocket ping -> pong round trips, from each ping's intended send time.",
            bounds,
        );
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
        let Some(b) = self.backlog else { return };
        for (name, help, n) in [
            (
                "herd_ws_backlog_messages",
                "WebSocket messages due by the schedule whose bytes no socket took yet, as the \
                 last second closed.",
                b.messages,
            ),
            (
                "herd_ws_backlog_bytes",
                "Bytes of the WebSocket messages framed in herd's send buffer that no socket \
                 took yet, as the last second closed.",
                b.bytes,
            ),
        ] {
            let f = family(out, name, "gauge", help);
            f.points.push(point(f.name, None, n as f64));
        }
    }
}
