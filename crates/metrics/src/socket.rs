//! What a WebSocket's connection measured apart from its messages: ping -> pong round trips
//! (from each ping's intended instant), the closes the server began, by close code, and the
//! handshakes it refused, by HTTP status. A socket is not an exchange: these come from the
//! connection, once each, and are counted per run and per second like any figure.

use crate::compact::HISTOGRAM_MAX_US;
use crate::{CompactHistogram, SecondLatency};
use herd_spill::{get_varint, put_varint};
use std::time::Duration;

/// One thing a socket told, apart from its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketEvent {
    /// A pong answered a ping intended this long before it came.
    Pong(Duration),
    /// The server closed the socket with this code (1006: without a close frame).
    Closed(u16),
    /// The server answered the Upgrade with this status, not `101` (or with `101` and the
    /// wrong `Sec-WebSocket-Accept`).
    Refused(u16),
}

/// RFC 6455 section 7.4.1's close codes and IANA's registered ones, by name.
const CLOSE_NAMES: [(u16, &str); 15] = [
    (1000, "normal_closure"),
    (1001, "going_away"),
    (1002, "protocol_error"),
    (1003, "unsupported_data"),
    (1005, "no_status_received"),
    (1006, "abnormal_closure"),
    (1007, "invalid_payload"),
    (1008, "policy_violation"),
    (1009, "message_too_big"),
    (1010, "mandatory_extension"),
    (1011, "internal_error"),
    (1012, "service_restart"),
    (1013, "try_again_later"),
    (1014, "bad_gateway"),
    (1015, "tls_handshake"),
];

/// The name of close code `code` (`going_away`, `internal_error`, ...): the registry's, else
/// `application` (4000-4999), `library` (3000-3999) or `unknown`.
pub fn close_code_name(code: u16) -> &'static str {
    match CLOSE_NAMES.iter().find(|(c, _)| *c == code) {
        Some((_, name)) => name,
        None if (4000..5000).contains(&code) => "application",
        None if (3000..4000).contains(&code) => "library",
        None => "unknown",
    }
}

/// Counts by code (a close code, a status), as a short sorted list: a run sees a handful.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeCounts(Vec<(u16, u64)>);

impl CodeCounts {
    pub fn add(&mut self, code: u16, n: u64) {
        match self.0.binary_search_by_key(&code, |p| p.0) {
            Ok(i) => self.0[i].1 += n,
            Err(i) => self.0.insert(i, (code, n)),
        }
    }

    pub fn merge(&mut self, other: &CodeCounts) {
        for &(code, n) in &other.0 {
            self.add(code, n);
        }
    }

    /// Codes that occurred, ascending, with their counts.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.0.iter().copied()
    }

    pub fn total(&self) -> u64 {
        self.0.iter().map(|p| p.1).sum()
    }

    fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.0.len() as u64);
        for &(code, n) in &self.0 {
            put_varint(out, u64::from(code));
            put_varint(out, n);
        }
    }

    fn decode(input: &mut &[u8]) -> Option<Self> {
        let mut c = CodeCounts::default();
        for _ in 0..get_varint(input)? {
            let code = u16::try_from(get_varint(input)?).ok()?;
            c.add(code, get_varint(input)?);
        }
        Some(c)
    }
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).clamp(1, HISTOGRAM_MAX_US)
}

/// A run's (or a worker's) sockets: every ping's round trip, closes and refusals.
#[derive(Clone, Debug, Default)]
pub struct SocketStats {
    /// Ping -> pong round trips from each ping's intended instant, microseconds.
    pub ping: CompactHistogram,
    pub closes: CodeCounts,
    pub refused: CodeCounts,
}

impl SocketStats {
    pub fn record(&mut self, e: SocketEvent) {
        match e {
            SocketEvent::Pong(rtt) => self.ping.saturating_record(micros(rtt)),
            SocketEvent::Closed(code) => self.closes.add(code, 1),
            SocketEvent::Refused(status) => self.refused.add(status, 1),
        }
    }

    pub fn merge(&mut self, other: &SocketStats) {
        self.ping.add(&other.ping);
        self.closes.merge(&other.closes);
        self.refused.merge(&other.refused);
    }

    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.ping.heap_bytes()
            + (self.closes.0.capacity() + self.refused.0.capacity()) * 16
    }
}

/// A WebSocket's send backlog at one instant: messages the schedule made due whose bytes no
/// socket took yet (waiting for a free socket, or framed in herd's send buffer), and the bytes
/// of those framed (a message waiting for a socket is not framed yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub messages: u64,
    pub bytes: u64,
}

impl Backlog {
    pub fn add(&mut self, other: Backlog) {
        self.messages += other.messages;
        self.bytes += other.bytes;
    }
}

/// The same, for one second of the timeline: its round trips as a second's latency is kept
/// (sealed with the second).
#[derive(Clone, Debug, Default)]
pub struct SocketSecond {
    pub ping: SecondLatency,
    pub closes: CodeCounts,
    pub refused: CodeCounts,
    /// The send backlog as the second closed (a run with `--message-rate`: its schedule),
    /// every worker's added up.
    pub backlog: Option<Backlog>,
}

impl SocketSecond {
    pub fn record(&mut self, e: SocketEvent) {
        match e {
            SocketEvent::Pong(rtt) => self.ping.saturating_record(micros(rtt)),
            SocketEvent::Closed(code) => self.closes.add(code, 1),
            SocketEvent::Refused(status) => self.refused.add(status, 1),
        }
    }

    pub fn merge(&mut self, other: &SocketSecond) {
        self.ping.add(&other.ping);
        self.closes.merge(&other.closes);
        self.refused.merge(&other.refused);
        if let Some(b) = other.backlog {
            self.backlog.get_or_insert_default().add(b);
        }
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        use herd_spill::Spilled;
        self.ping.encode(out);
        self.closes.encode(out);
        self.refused.encode(out);
        // The backlog: a tag, then its messages and bytes.
        match self.backlog {
            None => out.push(0),
            Some(b) => {
                out.push(1);
                put_varint(out, b.messages);
                put_varint(out, b.bytes);
            }
        }
    }

    pub(crate) fn decode(input: &mut &[u8]) -> Option<Self> {
        use herd_spill::Spilled;
        let mut s = SocketSecond {
            ping: SecondLatency::decode(input)?,
            closes: CodeCounts::decode(input)?,
            refused: CodeCounts::decode(input)?,
            backlog: None,
        };
        let (&tag, rest) = input.split_first()?;
        *input = rest;
        if tag == 1 {
            s.backlog = Some(Backlog {
                messages: get_varint(input)?,
                bytes: get_varint(input)?,
            });
        }
        Some(s)
    }

    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.ping.heap_bytes()
            + (self.closes.0.capacity() + self.refused.0.capacity()) * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_codes_are_named() {
        assert_eq!(close_code_name(1000), "normal_closure");
        assert_eq!(close_code_name(1006), "abnormal_closure");
        assert_eq!(close_code_name(1011), "internal_error");
        assert_eq!(close_code_name(4001), "application");
        assert_eq!(close_code_name(999), "unknown");
    }

    #[test]
    fn sockets_add_up_merge_exactly_and_spill() {
        let ms = Duration::from_millis;
        let mut a = SocketStats::default();
        let mut s = SocketSecond::default();
        for e in [
            SocketEvent::Pong(ms(2)),
            SocketEvent::Pong(ms(4)),
            SocketEvent::Closed(1011),
            SocketEvent::Closed(1006),
            SocketEvent::Closed(1011),
            SocketEvent::Refused(403),
        ] {
            a.record(e);
            s.record(e);
        }
        s.backlog = Some(Backlog {
            messages: 7,
            bytes: 210,
        });
        let mut b = SocketStats::default();
        b.merge(&a);
        b.merge(&a);
        assert_eq!(b.ping.len(), 4);
        assert_eq!(b.closes.iter().collect::<Vec<_>>(), [(1006, 2), (1011, 4)]);
        assert_eq!((b.refused.total(), b.closes.total()), (2, 6));
        let mut bytes = Vec::new();
        s.encode(&mut bytes);
        let back = SocketSecond::decode(&mut &bytes[..]).unwrap();
        assert_eq!(back.ping.len(), 2);
        assert_eq!(back.closes, s.closes);
        assert_eq!(back.refused, s.refused);
        assert_eq!(back.backlog, s.backlog);
        let mut two = back.clone();
        two.merge(&s);
        assert_eq!(two.backlog.map(|b| (b.messages, b.bytes)), Some((14, 420)));
    }
}
