//! Each request's time by phase (k6's `http_req_tls_handshaking`, `_waiting`, `_receiving`;
//! h2load's wait for a stream): summaries in the result, histograms beside the others so shards
//! merge exactly. The DNS lookup is not a phase of each request in herd: the target's name is
//! resolved once, before the first request, and `dns_ms` is that lookup.

use crate::histogram::{decode_histogram, encode_histogram, summarize_us, PhaseHistograms};
use crate::Summary;
use hdrhistogram::Histogram;
use herd_metrics::Stats;
use serde::{Deserialize, Serialize};

/// Summaries of each phase, in milliseconds, over the requests that had it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// The lookup of the target's name, once before the first request (count 0 for an IP
    /// address, `--resolve` or `--connect-to`); absent in results written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns_ms: Option<Summary>,
    /// The TLS handshake of each connection opened over https (`connect_ms` includes it).
    pub tls_ms: Summary,
    /// Waiting for a free connection or stream before the send: users sharing connections, a
    /// full pipeline, HTTP/2's stream limit.
    pub blocked_ms: Summary,
    /// From the send to the first byte of the response (time to first byte).
    pub waiting_ms: Summary,
    /// From the first byte of the response to its last.
    pub receiving_ms: Summary,
}

/// The histograms in the order [`PhaseSum`] keeps them: dns, tls, blocked, waiting, receiving.
type Five = [Histogram<u64>; 5];

/// The phases of `s`, summarized and encoded; `with_dns` for the whole run (a request name
/// has no lookup of its own).
pub(crate) fn of(s: &Stats, with_dns: bool) -> (Phases, PhaseHistograms) {
    let h = [&s.dns, &s.tls, &s.blocked, &s.waiting, &s.receiving].map(|h| h.to_histogram());
    from(&h, with_dns)
}

fn from(h: &Five, with_dns: bool) -> (Phases, PhaseHistograms) {
    let [dns, tls, blocked, waiting, receiving] = h;
    (
        Phases {
            dns_ms: with_dns.then(|| summarize_us(dns)),
            tls_ms: summarize_us(tls),
            blocked_ms: summarize_us(blocked),
            waiting_ms: summarize_us(waiting),
            receiving_ms: summarize_us(receiving),
        },
        PhaseHistograms {
            dns: with_dns.then(|| encode_histogram(dns)),
            tls: encode_histogram(tls),
            blocked: encode_histogram(blocked),
            waiting: encode_histogram(waiting),
            receiving: encode_histogram(receiving),
        },
    )
}

/// The phases of shards added up exactly; results written before phases add nothing.
#[derive(Default)]
pub(crate) struct PhaseSum {
    seen: bool,
    dns: bool,
    hists: [Option<Histogram<u64>>; 5],
}

impl PhaseSum {
    pub fn add(&mut self, p: Option<&PhaseHistograms>) -> Result<(), String> {
        let Some(p) = p else { return Ok(()) };
        self.seen = true;
        self.dns |= p.dns.is_some();
        for (acc, (what, s)) in self.hists.iter_mut().zip([
            ("dns", p.dns.as_deref()),
            ("tls", Some(p.tls.as_str())),
            ("blocked", Some(p.blocked.as_str())),
            ("waiting", Some(p.waiting.as_str())),
            ("receiving", Some(p.receiving.as_str())),
        ]) {
            let Some(s) = s else { continue };
            let h = decode_histogram(s)
                .map_err(|e| format!("its {what} phase histogram cannot be read: {e}"))?;
            match acc {
                None => *acc = Some(h),
                Some(a) => a
                    .add(&h)
                    .map_err(|e| format!("histograms do not add up: {e:?}"))?,
            }
        }
        Ok(())
    }

    pub fn finish(self) -> Option<(Phases, PhaseHistograms)> {
        if !self.seen {
            return None;
        }
        let h = self
            .hists
            .map(|h| h.unwrap_or_else(herd_metrics::new_histogram));
        Some(from(&h, self.dns))
    }
}
