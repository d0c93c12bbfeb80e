//! The report's section on a WebSocket run's sockets apart from their messages: the ping ->
//! pong round trips beside the replies' latency (both from the intended send), the closes the
//! server began by code, the Upgrades it refused by status, and the send backlog of a schedule
//! of messages. Absent when the sockets told none of these.

use super::page::{esc, facts, table};
use crate::format::{bytes, count, duration_ms};
use crate::{RunResult, Summary};

pub fn section(r: &RunResult) -> Option<String> {
    let w = r.websocket.as_ref()?;
    let mut pairs = vec![("pongs", count(w.ping_rtt_ms.count))];
    if let Some(b) = &w.backlog {
        pairs.push((
            "send backlog, most",
            format!(
                "{} messages ({})",
                count(b.max_messages),
                bytes(b.max_bytes as f64)
            ),
        ));
        pairs.push((
            "send backlog, at the end",
            format!(
                "{} messages ({})",
                count(b.end_messages),
                bytes(b.end_bytes as f64)
            ),
        ));
    }
    let mut out = facts(&pairs);
    let row = |name: &str, s: &Summary| {
        let mut v = vec![esc(name), count(s.count)];
        if s.count == 0 {
            v.extend(std::iter::repeat_n("-".to_owned(), 5));
        } else {
            v.extend([s.p50, s.p90, s.p99, s.p999, s.max].map(duration_ms));
        }
        v
    };
    out.push_str(&table(
        "summary ws-latency",
        &["", "count", "p50", "p90", "p99", "p99.9", "max"],
        &[
            row("replies (from the intended send)", &r.latency_ms),
            row("ping round trips (from the intended send)", &w.ping_rtt_ms),
        ],
    ));
    if !w.closes.is_empty() {
        let rows: Vec<Vec<String>> = w
            .closes
            .iter()
            .map(|c| vec![c.code.to_string(), esc(&c.name), count(c.count)])
            .collect();
        out.push_str(&table(
            "ws-closes",
            &["close code", "name", "closes"],
            &rows,
        ));
    }
    if !w.handshakes_failed.is_empty() {
        let rows: Vec<Vec<String>> = w
            .handshakes_failed
            .iter()
            .map(|(status, n)| vec![esc(status), count(*n)])
            .collect();
        out.push_str(&table("ws-refused", &["status", "Upgrades refused"], &rows));
    }
    Some(out)
}
