//! Each request's time by phase (k6's `http_req_tls_handshaking`, `_waiting`, `_receiving`;
//! h2load's wait for a stream): summaries in the result, histograms beside the others so shards
//! merge exactly. The DNS lookup is not a phase of a request in herd: the target's name is
//! resolved once, before the first request.

use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::Summary;
use hdrhistogram::Histogram;
use herd_metrics::Stats;
use serde::{Deserialize, Serialize};

/// Summaries of each phase, in milliseconds, over the requests that had it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
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

/// The phases' histograms, encoded as [`crate::Histograms`]' others are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseHistograms {
    pub tls: String,
    pub blocked: String,
    pub waiting: String,
    pub receiving: String,
}

/// The phases of `s`, summarized and encoded.
pub(crate) fn of(s: &Stats) -> (Phases, PhaseHistograms) {
    let [tls, blocked, waiting, receiving] =
        [&s.tls, &s.blocked, &s.waiting, &s.receiving].map(|h| h.to_histogram());
    from(&tls, &blocked, &waiting, &receiving)
}

fn from(
    tls: &Histogram<u64>,
    blocked: &Histogram<u64>,
    waiting: &Histogram<u64>,
    receiving: &Histogram<u64>,
) -> (Phases, PhaseHistograms) {
    (
        Phases {
            tls_ms: summarize_us(tls),
            blocked_ms: summarize_us(blocked),
            waiting_ms: summarize_us(waiting),
            receiving_ms: summarize_us(receiving),
        },
        PhaseHistograms {
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
    hists: [Option<Histogram<u64>>; 4],
}

impl PhaseSum {
    pub fn add(&mut self, p: Option<&PhaseHistograms>) -> Result<(), String> {
        let Some(p) = p else { return Ok(()) };
        self.seen = true;
        for (acc, (what, s)) in self.hists.iter_mut().zip([
            ("tls", &p.tls),
            ("blocked", &p.blocked),
            ("waiting", &p.waiting),
            ("receiving", &p.receiving),
        ]) {
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
        let [a, b, c, d] = self
            .hists
            .map(|h| h.unwrap_or_else(herd_metrics::new_histogram));
        Some(from(&a, &b, &c, &d))
    }
}
