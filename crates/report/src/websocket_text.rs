//! The summary's lines for a WebSocket run's sockets apart from their messages: ping round
//! trips, the server's closes by code and name, refused Upgrades by status, the send backlog of
//! a schedule of messages. Nothing when the sockets told none of these.

use crate::format::{bytes, count, duration_ms};
use crate::lines::line;
use crate::RunResult;
use std::fmt::{self, Write};

pub(crate) fn render(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let Some(w) = &r.websocket else {
        return Ok(());
    };
    let s = &w.ping_rtt_ms;
    if s.count > 0 {
        let body = format!(
            "p50 {}  p90 {}  p99 {}  max {}   ({} pongs, from each ping's intended time)",
            duration_ms(s.p50),
            duration_ms(s.p90),
            duration_ms(s.p99),
            duration_ms(s.max),
            count(s.count)
        );
        line(out, "ping rtt", &body)?;
    }
    if !w.closes.is_empty() {
        let codes: Vec<String> = w
            .closes
            .iter()
            .map(|c| format!("{} {} {}", c.code, c.name, count(c.count)))
            .collect();
        line(
            out,
            "ws closes",
            &format!("{}   (closed by the server, by code)", codes.join("   ")),
        )?;
    }
    if !w.handshakes_failed.is_empty() {
        let codes: Vec<String> = w
            .handshakes_failed
            .iter()
            .map(|(status, n)| format!("{status} {}", count(*n)))
            .collect();
        line(
            out,
            "handshake",
            &format!("{}   (Upgrades refused, by status)", codes.join("   ")),
        )?;
    }
    if let Some(b) = &w.backlog {
        line(
            out,
            "backlog",
            &format!(
                "max {} messages ({})  at the end {} ({})   (due, not yet taken by a socket)",
                count(b.max_messages),
                bytes(b.max_bytes as f64),
                count(b.end_messages),
                bytes(b.end_bytes as f64)
            ),
        )?;
    }
    Ok(())
}
