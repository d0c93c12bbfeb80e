//! A WebSocket run's sockets apart from their messages: ping -> pong round trips (from each
//! ping's intended instant), the closes the server began by close code, the Upgrades it
//! refused by HTTP status. In the run's result and in each second of its timeline; absent from
//! a run that had none. The round trips' histogram is kept encoded, so shards merge exactly.

use crate::histogram::{decode_histogram, encode_histogram, summarize_us};
use crate::Summary;
use hdrhistogram::Histogram;
use herd_metrics::{close_code_name, CodeCounts, SocketSecond, SocketStats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run's sockets, apart from their messages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sockets {
    /// Ping -> pong round trips (`--ping-interval`), from each ping's intended instant; its
    /// `count` is the pongs that answered a ping.
    pub ping_rtt_ms: Summary,
    /// Closes the server began (a close frame, or 1006: the connection ended without one), by
    /// code, ascending.
    pub closes: Vec<Close>,
    /// Upgrades the server refused, by the status it answered (101: switched with the wrong
    /// `Sec-WebSocket-Accept`).
    pub handshakes_failed: BTreeMap<String, u64>,
    /// The round trips' histogram (microseconds), encoded as [`crate::Histograms`]'.
    pub ping_rtt_histogram: String,
    /// The send backlog of a run on a schedule of messages (`--message-rate`), from its
    /// seconds: the most and the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<SendBacklog>,
}

/// Messages the schedule made due whose bytes no socket had taken (waiting for a free socket,
/// or framed in herd's send buffer), as seconds closed: a server that reads slower than the
/// schedule makes it grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendBacklog {
    /// The most messages (and, apart, bytes) any second closed with.
    pub max_messages: u64,
    pub max_bytes: u64,
    /// What the last second closed with: the backlog the schedule ended with.
    pub end_messages: u64,
    pub end_bytes: u64,
}

/// Closes of one code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Close {
    pub code: u16,
    /// The code's name in RFC 6455's registry (`going_away`, `abnormal_closure`, ...).
    pub name: String,
    pub count: u64,
}

/// One second's sockets (a timeline entry's `ws`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketsSecond {
    /// Pongs that came in this second, and their round trips' 99th percentile.
    #[serde(default)]
    pub pongs: u64,
    #[serde(default)]
    pub ping_p99_ms: f64,
    /// Closes the server began in this second, by code.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub closes: BTreeMap<String, u64>,
    /// Upgrades refused in this second, by status.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub handshakes_failed: BTreeMap<String, u64>,
    /// The send backlog as the second closed (a run on a schedule of messages): messages due
    /// whose bytes no socket had taken, and the bytes of those framed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_messages: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_bytes: Option<u64>,
    /// The second's round trips (microseconds, encoded), while the second was live: shards'
    /// seconds add up exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_histogram: Option<String>,
}

fn keyed(c: &CodeCounts) -> BTreeMap<String, u64> {
    c.iter().map(|(code, n)| (code.to_string(), n)).collect()
}

fn from(ping: &Histogram<u64>, closes: &CodeCounts, refused: &CodeCounts) -> Sockets {
    Sockets {
        ping_rtt_ms: summarize_us(ping),
        closes: closes
            .iter()
            .map(|(code, count)| Close {
                code,
                name: close_code_name(code).to_owned(),
                count,
            })
            .collect(),
        handshakes_failed: keyed(refused),
        ping_rtt_histogram: encode_histogram(ping),
        backlog: None,
    }
}

/// `s` with the send backlog its timeline's `seconds` closed with (none without a schedule of
/// messages): a built, merged or partial result's, from the same seconds.
pub(crate) fn with_backlog<'a>(
    s: Option<Sockets>,
    seconds: impl Iterator<Item = &'a SocketsSecond>,
) -> Option<Sockets> {
    let mut s = s?;
    let mut b: Option<SendBacklog> = None;
    for w in seconds {
        let (Some(m), Some(bytes)) = (w.backlog_messages, w.backlog_bytes) else {
            continue;
        };
        let b = b.get_or_insert_default();
        b.max_messages = b.max_messages.max(m);
        b.max_bytes = b.max_bytes.max(bytes);
        (b.end_messages, b.end_bytes) = (m, bytes);
    }
    s.backlog = b;
    Some(s)
}

/// The sockets of `s`; `None` when they told nothing.
pub(crate) fn of(s: Option<&SocketStats>) -> Option<Sockets> {
    let s = s?;
    Some(from(&s.ping.to_histogram(), &s.closes, &s.refused))
}

/// One second's sockets; `None` when they told nothing in it.
pub(crate) fn second(s: Option<&SocketSecond>) -> Option<SocketsSecond> {
    let s = s?;
    let h = s.ping.histogram();
    Some(SocketsSecond {
        pongs: s.ping.len(),
        ping_p99_ms: if s.ping.is_empty() {
            0.0
        } else {
            s.ping.value_at_quantile(0.99) as f64 / 1e3
        },
        closes: keyed(&s.closes),
        handshakes_failed: keyed(&s.refused),
        backlog_messages: s.backlog.map(|b| b.messages),
        backlog_bytes: s.backlog.map(|b| b.bytes),
        ping_histogram: h.map(encode_histogram),
    })
}

fn add_keyed(to: &mut CodeCounts, from: &BTreeMap<String, u64>) -> Result<(), String> {
    for (code, n) in from {
        let code: u16 = code
            .parse()
            .map_err(|_| format!("a WebSocket count keyed {code:?}, not a code"))?;
        to.add(code, *n);
    }
    Ok(())
}

/// Sockets added up exactly: shards' results, or a partial result's seconds.
#[derive(Default)]
pub(crate) struct SocketSum {
    sum: Option<(Histogram<u64>, CodeCounts, CodeCounts)>,
    pongs: u64,
}

impl SocketSum {
    fn part(&mut self) -> &mut (Histogram<u64>, CodeCounts, CodeCounts) {
        self.sum.get_or_insert_with(|| {
            (
                herd_metrics::new_histogram(),
                CodeCounts::default(),
                CodeCounts::default(),
            )
        })
    }

    fn add_histogram(&mut self, text: &str) -> Result<(), String> {
        let h = decode_histogram(text)
            .map_err(|e| format!("the WebSocket ping histogram cannot be read: {e}"))?;
        self.part()
            .0
            .add(&h)
            .map_err(|e| format!("histograms do not add up: {e:?}"))
    }

    /// A result's sockets.
    pub fn add(&mut self, s: Option<&Sockets>) -> Result<(), String> {
        let Some(s) = s else {
            return Ok(());
        };
        self.add_histogram(&s.ping_rtt_histogram)?;
        let part = self.part();
        for c in &s.closes {
            part.1.add(c.code, c.count);
        }
        add_keyed(&mut part.2, &s.handshakes_failed)
    }

    /// A second's sockets (a result killed before its end: its seconds are what it has).
    pub fn add_second(&mut self, s: Option<&SocketsSecond>) -> Result<(), String> {
        let Some(s) = s else {
            return Ok(());
        };
        match &s.ping_histogram {
            Some(text) => self.add_histogram(text)?,
            None => {
                self.part();
            }
        }
        self.pongs += s.pongs;
        let part = self.part();
        add_keyed(&mut part.1, &s.closes)?;
        add_keyed(&mut part.2, &s.handshakes_failed)
    }

    pub fn finish(self) -> Option<Sockets> {
        let (ping, closes, refused) = self.sum?;
        let mut s = from(&ping, &closes, &refused);
        // Seconds sealed before the end kept their count, not their histogram.
        s.ping_rtt_ms.count = s.ping_rtt_ms.count.max(self.pongs);
        Some(s)
    }
}

/// Seconds of shards added up: counts, histograms, the percentile again.
pub(crate) fn add_seconds(
    to: &mut Option<SocketsSecond>,
    s: Option<&SocketsSecond>,
) -> Result<(), String> {
    let Some(s) = s else {
        return Ok(());
    };
    let Some(have) = to else {
        *to = Some(s.clone());
        return Ok(());
    };
    have.pongs += s.pongs;
    // Shards' backlogs at the same second add up, as their sockets do.
    for (to, from) in [
        (&mut have.backlog_messages, s.backlog_messages),
        (&mut have.backlog_bytes, s.backlog_bytes),
    ] {
        if let Some(n) = from {
            *to = Some(to.unwrap_or(0) + n);
        }
    }
    for (to, from) in [
        (&mut have.closes, &s.closes),
        (&mut have.handshakes_failed, &s.handshakes_failed),
    ] {
        for (k, n) in from {
            *to.entry(k.clone()).or_default() += n;
        }
    }
    match (&have.ping_histogram, &s.ping_histogram) {
        (Some(a), Some(b)) => {
            let mut h = decode_histogram(a).map_err(|e| e.to_string())?;
            h.add(decode_histogram(b).map_err(|e| e.to_string())?)
                .map_err(|e| format!("histograms do not add up: {e:?}"))?;
            have.ping_p99_ms = h.value_at_quantile(0.99) as f64 / 1e3;
            have.ping_histogram = Some(encode_histogram(&h));
        }
        (None, Some(_)) => {
            have.ping_histogram = s.ping_histogram.clone();
            have.ping_p99_ms = have.ping_p99_ms.max(s.ping_p99_ms);
        }
        _ => have.ping_p99_ms = have.ping_p99_ms.max(s.ping_p99_ms),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use herd_metrics::SocketEvent;
    use std::time::Duration;

    fn stats(rtt_ms: u64, n: u64, close: u16) -> SocketStats {
        let mut s = SocketStats::default();
        for i in 0..n {
            s.record(SocketEvent::Pong(Duration::from_millis(rtt_ms + i)));
        }
        s.record(SocketEvent::Closed(close));
        s.record(SocketEvent::Refused(403));
        s
    }

    #[test]
    fn shards_merge_to_what_one_run_would_have_measured() {
        let (a, b) = (stats(2, 30, 1011), stats(900, 10, 1006));
        let mut whole = a.clone();
        whole.merge(&b);
        let mut sum = SocketSum::default();
        sum.add(of(Some(&a)).as_ref()).unwrap();
        sum.add(None).unwrap();
        sum.add(of(Some(&b)).as_ref()).unwrap();
        let merged = sum.finish().unwrap();
        assert_eq!(merged, of(Some(&whole)).unwrap());
        assert_eq!(merged.ping_rtt_ms.count, 40);
        assert_eq!(
            merged.closes,
            [
                Close {
                    code: 1006,
                    name: "abnormal_closure".into(),
                    count: 1
                },
                Close {
                    code: 1011,
                    name: "internal_error".into(),
                    count: 1
                }
            ]
        );
        assert_eq!(merged.handshakes_failed["403"], 2);
        assert!(of(None).is_none());
    }

    #[test]
    fn a_seconds_sockets_add_up() {
        let mut one = SocketSecond::default();
        one.record(SocketEvent::Pong(Duration::from_millis(5)));
        one.record(SocketEvent::Closed(1001));
        let s = second(Some(&one)).unwrap();
        assert_eq!((s.pongs, s.closes["1001"]), (1, 1));
        let mut to = None;
        add_seconds(&mut to, Some(&s)).unwrap();
        add_seconds(&mut to, Some(&s)).unwrap();
        let to = to.unwrap();
        assert_eq!((to.pongs, to.closes["1001"]), (2, 2));
        assert!((4.9..5.1).contains(&to.ping_p99_ms), "{}", to.ping_p99_ms);
        let mut sum = SocketSum::default();
        sum.add_second(Some(&to)).unwrap();
        let whole = sum.finish().unwrap();
        assert_eq!((whole.ping_rtt_ms.count, whole.closes[0].count), (2, 2));
    }

    #[test]
    fn the_runs_backlog_is_its_seconds_most_and_last() {
        let second = |m: Option<u64>| SocketsSecond {
            backlog_messages: m,
            backlog_bytes: m.map(|m| m * 30),
            ..SocketsSecond::default()
        };
        let s = of(Some(&stats(2, 1, 1000)));
        let timeline = [second(Some(0)), second(Some(50)), second(Some(20))];
        let b = with_backlog(s.clone(), timeline.iter())
            .unwrap()
            .backlog
            .unwrap();
        assert_eq!(
            (b.max_messages, b.max_bytes, b.end_messages, b.end_bytes),
            (50, 1500, 20, 600)
        );
        // No schedule of messages, no backlog; no sockets, nothing.
        assert!(with_backlog(s, [second(None)].iter())
            .unwrap()
            .backlog
            .is_none());
        assert!(with_backlog(None, timeline.iter()).is_none());
        // Shards' seconds add up.
        let mut to = None;
        add_seconds(&mut to, Some(&timeline[1])).unwrap();
        add_seconds(&mut to, Some(&timeline[2])).unwrap();
        assert_eq!(to.unwrap().backlog_messages, Some(70));
    }
}
