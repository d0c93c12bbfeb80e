//! The summary's lines about how requests met the wire: the connect times and what each TLS
//! handshake settled on, the protocols the connections spoke (with their handshakes), and the
//! phases a request's time went to.

use crate::format::{count, duration_ms};
use crate::lines::{line, plural};
use crate::{RunResult, Summary};
use std::fmt::{self, Write};

/// What the connections spoke, shown once a run used HTTP/2 (HTTP/1.1 alone goes unsaid).
pub(crate) fn protocols(uses: &[herd_result::ProtocolUse], out: &mut impl Write) -> fmt::Result {
    if uses.iter().all(|u| u.protocol == "http/1.1") {
        return Ok(());
    }
    let parts: Vec<String> = uses
        .iter()
        .map(|u| {
            let unit = if u.protocol.starts_with("h2") {
                "stream"
            } else if u.protocol.starts_with("websocket") {
                "message"
            } else {
                "request"
            };
            let mut part = format!(
                "{} {}, {}",
                u.protocol,
                plural(u.connections, "connection"),
                plural(u.requests, unit)
            );
            if let Some(h) = &u.handshakes {
                part += &handshakes(h);
            }
            part
        })
        .collect();
    line(out, "protocol", &parts.join("; "))
}

/// ` (handshakes: 1 full 2.10 ms, 3 resumed 1.05 ms, 3 in 0-RTT)`: the mean of each kind.
fn handshakes(h: &herd_result::Handshakes) -> String {
    let mut kinds = Vec::new();
    for (t, kind) in [(&h.full, "full"), (&h.resumed, "resumed")] {
        if t.count > 0 {
            kinds.push(format!(
                "{} {kind} {}",
                count(t.count),
                duration_ms(t.mean_ms)
            ));
        }
    }
    if h.early_data_accepted > 0 {
        kinds.push(format!("{} in 0-RTT", count(h.early_data_accepted)));
    }
    if h.early_data_rejected > 0 {
        kinds.push(format!("{} 0-RTT refused", count(h.early_data_rejected)));
    }
    format!(" (handshakes: {})", kinds.join(", "))
}

/// The connect times, and what the TLS handshakes settled on (one group per version, cipher
/// suite and ALPN protocol, with its connections when they differ).
pub(crate) fn connect(
    s: &Summary,
    tls: &[herd_result::TlsUse],
    out: &mut impl Write,
) -> fmt::Result {
    if s.count == 0 {
        return Ok(());
    }
    let mut body = format!(
        "p50 {}  p99 {}  max {}   ({})",
        duration_ms(s.p50),
        duration_ms(s.p99),
        duration_ms(s.max),
        plural(s.count, "connection")
    );
    let groups: Vec<String> = tls
        .iter()
        .map(|t| {
            let alpn = t.alpn.as_deref().unwrap_or("no ALPN");
            let mut g = format!("{} {} {alpn}", t.version, t.cipher);
            if tls.len() > 1 {
                write!(g, " x{}", t.connections)?;
            }
            Ok(g)
        })
        .collect::<Result<_, fmt::Error>>()?;
    if !groups.is_empty() {
        write!(body, "  {}", groups.join("; "))?;
    }
    line(out, "connect", &body)
}

/// Where a request's time went, one line per phase that happened, in the order a request meets
/// them (k6's `http_req_tls_handshaking`, `_blocked`, `_waiting`, `_receiving`). The name's
/// lookup comes first, said to be once: no request waited for it.
pub(crate) fn phases(r: &RunResult, out: &mut impl Write) -> fmt::Result {
    let Some(p) = &r.phases else { return Ok(()) };
    let mut label = "phases";
    if let Some(dns) = p.dns_ms.as_ref().filter(|s| s.count > 0) {
        let body = if dns.count == 1 {
            format!(
                "{:<10} {:<28}  (the name looked up once, before the first request)",
                "dns",
                duration_ms(dns.max)
            )
        } else {
            format!(
                "{:<10} p50 {:<9}  p99 {:<9}  ({}, one per shard before its first request)",
                "dns",
                duration_ms(dns.p50),
                duration_ms(dns.p99),
                plural(dns.count, "lookup")
            )
        };
        line(out, label, &body)?;
        label = "";
    }
    let each = r.config.exchange().noun();
    for (name, s, of) in [
        ("tls", &p.tls_ms, "connection"),
        ("blocked", &p.blocked_ms, each),
        ("waiting", &p.waiting_ms, each),
        ("receiving", &p.receiving_ms, each),
    ] {
        if s.count == 0 {
            continue;
        }
        let body = format!(
            "{name:<10} p50 {:<9}  p99 {:<9}  ({})",
            duration_ms(s.p50),
            duration_ms(s.p99),
            plural(s.count, of)
        );
        line(out, label, &body)?;
        label = "";
    }
    Ok(())
}
