//! The page's section on how requests met the wire, as the text summary has it
//! (`connection_text.rs`): the protocols the connections spoke with their streams or pipeline,
//! the handshakes (full, resumed, 0-RTT), what TLS settled on, and the phases of a request's
//! time.

use super::page::{esc, facts, table};
use crate::format::{count, duration_ms};
use crate::{RunResult, Summary};

/// The section's body.
pub fn section(r: &RunResult) -> String {
    let mut out = String::new();
    out.push_str(&facts(&shape(r)));
    let g = &r.generator;
    if !g.protocols.is_empty() {
        let rows: Vec<Vec<String>> = g
            .protocols
            .iter()
            .map(|p| {
                let h = p.handshakes.as_ref();
                let kind = |t: Option<&herd_result::HandshakeTimes>| match t {
                    Some(t) if t.count > 0 => {
                        format!("{} ({} mean)", count(t.count), duration_ms(t.mean_ms))
                    }
                    _ => "-".to_owned(),
                };
                vec![
                    esc(&p.protocol),
                    count(p.connections),
                    count(p.requests),
                    kind(h.map(|h| &h.full)),
                    kind(h.map(|h| &h.resumed)),
                    h.map_or("-".to_owned(), |h| {
                        format!(
                            "{} taken, {} refused",
                            count(h.early_data_accepted),
                            count(h.early_data_rejected)
                        )
                    }),
                ]
            })
            .collect();
        out.push_str(&table(
            "protocols",
            &[
                "protocol",
                "connections",
                "requests (streams)",
                "full handshakes",
                "resumed",
                "0-RTT",
            ],
            &rows,
        ));
    }
    if !g.tls.is_empty() {
        let rows: Vec<Vec<String>> = g
            .tls
            .iter()
            .map(|t| {
                vec![
                    esc(&t.version),
                    esc(&t.cipher),
                    esc(t.alpn.as_deref().unwrap_or("none")),
                    count(t.connections),
                ]
            })
            .collect();
        out.push_str(&table(
            "tls",
            &["TLS version", "cipher suite", "ALPN", "connections"],
            &rows,
        ));
    }
    if let Some(p) = &r.phases {
        let mut rows = Vec::new();
        let mut row = |name: &str, s: &Summary, of: &str| {
            if s.count > 0 {
                rows.push(vec![
                    esc(name),
                    format!("{} {of}", count(s.count)),
                    duration_ms(s.p50),
                    duration_ms(s.p99),
                    duration_ms(s.max),
                ]);
            }
        };
        if let Some(dns) = &p.dns_ms {
            row("dns (the name looked up before the run)", dns, "lookups");
        }
        row(
            "connect (TCP, per connection)",
            &r.connect_ms,
            "connections",
        );
        row("tls (handshake, per connection)", &p.tls_ms, "connections");
        row(
            "blocked (waiting for a connection or stream)",
            &p.blocked_ms,
            "requests",
        );
        row("waiting (send to first byte)", &p.waiting_ms, "requests");
        row(
            "receiving (first byte to last)",
            &p.receiving_ms,
            "requests",
        );
        if !rows.is_empty() {
            out.push_str("<h3>Phases of a request's time</h3>");
            out.push_str(&table(
                "phases",
                &["phase", "count", "p50", "p99", "max"],
                &rows,
            ));
        }
    }
    out
}

/// The protocol and how requests shared a connection, in the summary's words.
fn shape(r: &RunResult) -> Vec<(&'static str, String)> {
    let c = &r.config;
    let protocols: Vec<&str> = r
        .generator
        .protocols
        .iter()
        .map(|p| p.protocol.as_str())
        .collect();
    let protocol = match protocols.as_slice() {
        [] if c.streams.is_some() => "HTTP/2 or HTTP/3".to_owned(),
        [] => "HTTP/1.1".to_owned(),
        names => names
            .iter()
            .map(|p| match *p {
                "h2" => "HTTP/2 over TLS (h2)".to_owned(),
                "h2c" => "HTTP/2 over plain TCP (h2c)".to_owned(),
                "h3" => "HTTP/3 over QUIC (h3)".to_owned(),
                "http/1.1" => "HTTP/1.1".to_owned(),
                other => esc(other),
            })
            .collect::<Vec<_>>()
            .join(", "),
    };
    let mut pairs = vec![("protocol", protocol)];
    if let Some(m) = c.streams {
        let mut s = format!(
            "{} per connection, {} in flight at most",
            count(m),
            count(m.saturating_mul(c.connections))
        );
        if let Some(a) = r.generator.streams_allowed {
            s = format!(
                "{} asked; the server allows {} per connection, so {} in flight at most (as h2load)",
                count(m),
                count(a),
                count(a.saturating_mul(c.connections))
            );
        }
        pairs.push(("streams", s));
    }
    if let Some(k) = c.pipeline {
        pairs.push((
            "pipeline depth",
            format!("{} requests per connection", count(k)),
        ));
    }
    if let Some(p) = &c.proxy {
        pairs.push(("proxy", format!("<code>{}</code>", esc(p))));
    }
    pairs
}
