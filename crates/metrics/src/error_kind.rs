use serde::{Deserialize, Serialize};

/// Why a request got no valid response. The names are the keys of `errors` in the JSON result, a
/// public contract: add kinds at the end, never rename.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The server refused the connection (nothing listening, or the backlog overflowed).
    ConnectRefused,
    /// The connection was not established within the request timeout.
    ConnectTimeout,
    /// The peer reset the connection (ECONNRESET, EPIPE).
    Reset,
    /// No complete response within the request timeout.
    Timeout,
    /// The connection closed before a full response arrived.
    Eof,
    /// The bytes received are not valid HTTP.
    Protocol,
    /// The TLS handshake or record layer failed (including certificate verification).
    Tls,
    /// This process ran out of file descriptors (EMFILE, ENFILE).
    FdUnavailable,
    /// No local address or ephemeral port was free (EADDRNOTAVAIL).
    AddrUnavailable,
    /// Anything else; the sample message says what.
    Other,
    /// Still in flight when the run ended (the drain after `-d` was over) or was interrupted
    /// (Ctrl-C's grace was over): neither waited for nor lost.
    Unfinished,
    /// The QUIC handshake failed: no common version or ALPN (`h3`), or the TLS inside it
    /// (certificate verification included).
    QuicHandshake,
    /// No packet from the server for the QUIC idle timeout: the server went away without a word,
    /// or the path drops its packets.
    QuicTimeout,
    /// The server closed the QUIC connection (CONNECTION_CLOSE, or a stateless reset after it
    /// lost the connection's state) while requests were in flight.
    QuicClosed,
    /// A QUIC transport error: a protocol violation seen by either side.
    QuicProtocol,
    /// The server reset the request's HTTP/3 stream, or refused it (GOAWAY, H3_REQUEST_REJECTED).
    H3StreamReset,
    /// The HTTP/3 frames or QPACK header block the server sent are not valid.
    H3Protocol,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 17] = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::Reset,
        ErrorKind::Timeout,
        ErrorKind::Eof,
        ErrorKind::Protocol,
        ErrorKind::Tls,
        ErrorKind::FdUnavailable,
        ErrorKind::AddrUnavailable,
        ErrorKind::Other,
        ErrorKind::Unfinished,
        ErrorKind::QuicHandshake,
        ErrorKind::QuicTimeout,
        ErrorKind::QuicClosed,
        ErrorKind::QuicProtocol,
        ErrorKind::H3StreamReset,
        ErrorKind::H3Protocol,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// The JSON key, e.g. `connect_refused`.
    pub fn key(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Eof => "eof",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Tls => "tls",
            ErrorKind::FdUnavailable => "fd_unavailable",
            ErrorKind::AddrUnavailable => "addr_unavailable",
            ErrorKind::Other => "other",
            ErrorKind::Unfinished => "unfinished",
            ErrorKind::QuicHandshake => "quic_handshake",
            ErrorKind::QuicTimeout => "quic_timeout",
            ErrorKind::QuicClosed => "quic_closed",
            ErrorKind::QuicProtocol => "quic_protocol",
            ErrorKind::H3StreamReset => "h3_stream_reset",
            ErrorKind::H3Protocol => "h3_protocol",
        }
    }

    /// Classifies an I/O error from connect, read or write.
    pub fn from_io(err: &std::io::Error) -> ErrorKind {
        use std::io::ErrorKind as K;
        match err.raw_os_error() {
            Some(libc_emfile) if libc_emfile == 24 || libc_emfile == 23 => {
                return ErrorKind::FdUnavailable
            }
            Some(99) => return ErrorKind::AddrUnavailable, // EADDRNOTAVAIL
            _ => {}
        }
        match err.kind() {
            K::ConnectionRefused => ErrorKind::ConnectRefused,
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => ErrorKind::Reset,
            K::UnexpectedEof => ErrorKind::Eof,
            K::TimedOut => ErrorKind::Timeout,
            K::AddrNotAvailable => ErrorKind::AddrUnavailable,
            K::InvalidData => ErrorKind::Protocol,
            _ => ErrorKind::Other,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// Error counters in a fixed table, with the first message seen for each kind as a sample. The
/// samples are a short list rather than a slot per kind: a run keeps one table per request name,
/// and most names never see most kinds.
#[derive(Clone, Debug, Default)]
pub struct ErrorTable {
    pub counts: [u64; ErrorKind::COUNT],
    samples: Vec<(ErrorKind, String)>,
}

impl ErrorTable {
    pub fn add(&mut self, kind: ErrorKind, message: Option<&str>) {
        self.counts[kind.index()] += 1;
        if let Some(m) = message {
            if self.sample(kind).is_none() {
                self.samples.push((kind, m.to_owned()));
            }
        }
    }

    /// The first message seen for `kind`.
    pub fn sample(&self, kind: ErrorKind) -> Option<&str> {
        self.samples
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, m)| m.as_str())
    }

    /// Bytes the sample messages hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.samples.capacity() * std::mem::size_of::<(ErrorKind, String)>()
            + self
                .samples
                .iter()
                .map(|(_, m)| m.capacity())
                .sum::<usize>()
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn merge(&mut self, other: &ErrorTable) {
        for i in 0..ErrorKind::COUNT {
            self.counts[i] += other.counts[i];
        }
        for (kind, m) in &other.samples {
            if self.sample(*kind).is_none() {
                self.samples.push((*kind, m.clone()));
            }
        }
    }

    /// The kinds that occurred, with their counts and sample messages.
    pub fn iter(&self) -> impl Iterator<Item = (ErrorKind, u64, Option<&str>)> + '_ {
        ErrorKind::ALL
            .iter()
            .map(|k| (*k, self.counts[k.index()], self.sample(*k)))
            .filter(|(_, n, _)| *n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_their_documented_classes() {
        use std::io::{Error, ErrorKind as K};
        let table = [
            (Error::from(K::ConnectionRefused), ErrorKind::ConnectRefused),
            (Error::from(K::ConnectionReset), ErrorKind::Reset),
            (Error::from(K::BrokenPipe), ErrorKind::Reset),
            (Error::from(K::UnexpectedEof), ErrorKind::Eof),
            (Error::from_raw_os_error(24), ErrorKind::FdUnavailable),
            (Error::from_raw_os_error(99), ErrorKind::AddrUnavailable),
            (Error::other("x"), ErrorKind::Other),
        ];
        for (err, want) in table {
            assert_eq!(ErrorKind::from_io(&err), want, "{err}");
        }
    }

    #[test]
    fn table_keeps_first_sample_and_merges_counts() {
        let mut a = ErrorTable::default();
        a.add(ErrorKind::Reset, Some("first"));
        a.add(ErrorKind::Reset, Some("second"));
        let mut b = ErrorTable::default();
        b.add(ErrorKind::Timeout, None);
        a.merge(&b);
        assert_eq!(a.total(), 3);
        let kinds: Vec<_> = a
            .iter()
            .map(|(k, n, s)| (k, n, s.map(str::to_owned)))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ErrorKind::Reset, 2, Some("first".to_owned())),
                (ErrorKind::Timeout, 1, None)
            ]
        );
    }

    #[test]
    fn keys_are_the_json_contract() {
        let keys: Vec<_> = ErrorKind::ALL.iter().map(|k| k.key()).collect();
        assert_eq!(
            keys,
            [
                "connect_refused",
                "connect_timeout",
                "reset",
                "timeout",
                "eof",
                "protocol",
                "tls",
                "fd_unavailable",
                "addr_unavailable",
                "other",
                "unfinished",
                "quic_handshake",
                "quic_timeout",
                "quic_closed",
                "quic_protocol",
                "h3_stream_reset",
                "h3_protocol"
            ]
        );
    }
}
