//! `/metrics` in Prometheus' text format: toxiproxy's byte counters under its names and
//! labels, and herd's own counts of connections, toxics in force and what the toxics did.

use std::fmt::Write;

use crate::registry::Shared;
use crate::stats::Stats;
use crate::toxic::Stream;

/// A counter's name, help and how it is read.
type Counter = (&'static str, &'static str, fn(&Stats) -> u64);

pub(crate) fn render(shared: &Shared) -> String {
    let reg = shared.lock();
    let mut out = String::new();
    let streams = [Stream::Upstream, Stream::Downstream];
    for (metric, help, pick) in [
        (
            "toxiproxy_proxy_received_bytes_total",
            "Bytes read from the side a stream starts at",
            0,
        ),
        (
            "toxiproxy_proxy_sent_bytes_total",
            "Bytes written to the side a stream ends at",
            1,
        ),
    ] {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} counter");
        for e in reg.proxies.values() {
            for s in streams {
                let n = if pick == 0 {
                    e.stats.received(s)
                } else {
                    e.stats.sent(s)
                };
                let _ = writeln!(
                    out,
                    "{metric}{{direction=\"{}\",listener=\"{}\",proxy=\"{}\",upstream=\"{}\"}} {n}",
                    s.as_str(),
                    esc(&e.listen),
                    esc(&e.name),
                    esc(&e.upstream)
                );
            }
        }
    }
    let counters = counters();
    let _ = writeln!(
        out,
        "# HELP herd_proxy_connections_open Connections open now\n# TYPE herd_proxy_connections_open gauge"
    );
    for e in reg.proxies.values() {
        let _ = writeln!(
            out,
            "herd_proxy_connections_open{{proxy=\"{}\"}} {}",
            esc(&e.name),
            e.stats.open()
        );
    }
    for (metric, help, get) in counters {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} counter");
        for e in reg.proxies.values() {
            let _ = writeln!(
                out,
                "{metric}{{proxy=\"{}\"}} {}",
                esc(&e.name),
                get(&e.stats)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP herd_proxy_toxic Toxics in force (1 each)\n# TYPE herd_proxy_toxic gauge"
    );
    for e in reg.proxies.values() {
        for t in &e.toxics {
            let _ = writeln!(
                out,
                "herd_proxy_toxic{{proxy=\"{}\",toxic=\"{}\",type=\"{}\",stream=\"{}\"}} 1",
                esc(&e.name),
                esc(&t.name),
                t.kind.type_name(),
                t.stream.as_str()
            );
        }
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// herd's own counters of each proxy.
fn counters() -> [Counter; 9] {
    [
        (
            "herd_proxy_http_faults_total",
            "Responses an http toxic hit",
            |s| Stats::get(&s.http_faults),
        ),
        (
            "herd_proxy_h2_stream_resets_total",
            "HTTP/2 streams an http2 toxic reset",
            |s| Stats::get(&s.h2_resets),
        ),
        (
            "herd_proxy_h2_goaways_total",
            "GOAWAYs an http2 toxic sent",
            |s| Stats::get(&s.h2_goaways),
        ),
        (
            "herd_proxy_connections_total",
            "Connections accepted",
            |s| Stats::get(&s.accepted),
        ),
        (
            "herd_proxy_resets_total",
            "Connections reset by reset_peer",
            |s| Stats::get(&s.resets),
        ),
        (
            "herd_proxy_limit_closes_total",
            "Connections closed by limit_data",
            |s| Stats::get(&s.limited),
        ),
        (
            "herd_proxy_timeout_closes_total",
            "Connections closed by timeout",
            |s| Stats::get(&s.timed_out),
        ),
        (
            "herd_proxy_dropped_chunks_total",
            "Chunks dropped by packet_loss",
            |s| Stats::get(&s.dropped_chunks),
        ),
        (
            "herd_proxy_upstream_failures_total",
            "Connections whose upstream could not be reached",
            |s| Stats::get(&s.upstream_failures),
        ),
    ]
}
