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
    /// HTTP/2: the server reset the stream with REFUSED_STREAM (it would not take it now, often
    /// past its stream limit).
    H2RefusedStream,
    /// HTTP/2: the stream was reset with another code (INTERNAL_ERROR, CANCEL, ENHANCE_YOUR_CALM,
    /// ...; the sample names it).
    H2Reset,
    /// HTTP/2: a stream the server had accepted (at or below its GOAWAY's last stream id) never
    /// completed because the connection went away. Streams above that id are not errors:
    /// they go again on a new connection.
    H2Goaway,
    /// HTTP/2: a frame broke the protocol (PROTOCOL_ERROR, FLOW_CONTROL_ERROR,
    /// FRAME_SIZE_ERROR, COMPRESSION_ERROR, STREAM_CLOSED), the server's verdict or herd's.
    H2Protocol,
    /// HTTP/3: the QUIC handshake failed: no common version or ALPN (`h3`), or the TLS inside
    /// it (certificate verification included).
    QuicHandshake,
    /// HTTP/3: no packet from the server for the QUIC idle timeout: it went away without a
    /// word, or the path drops its packets.
    QuicTimeout,
    /// HTTP/3: the server closed the QUIC connection (CONNECTION_CLOSE, or a stateless reset
    /// after it lost the connection's state) while the request was in flight.
    QuicClosed,
    /// HTTP/3: a QUIC transport error, a protocol violation seen by either side.
    QuicProtocol,
    /// HTTP/3: the server reset the request's stream, or refused it (GOAWAY).
    H3StreamReset,
    /// HTTP/3: the frames or QPACK header block the server sent are not valid.
    H3Protocol,
    /// A script's hook raised while judging the response (wrk's `response()`, a workload's
    /// `lua:` check): the response is not a valid one for the script, so it is an error.
    Lua,
    /// `--sse llm`: the event stream ended without its `data: [DONE]`.
    SseNoDone,
    /// gRPC: the reply was not a call's (no `grpc-status` in its trailers), a message's frame
    /// was cut or bad, or a message did not decode as the method's reply type.
    GrpcMalformed,
    /// WebSocket: the server did not switch protocols (its status under 400, or a wrong
    /// `Sec-WebSocket-Accept`; a status of 400 and above is counted as that status).
    WsHandshake,
    /// WebSocket: the server closed the socket (a close frame, its code in the message, or
    /// the connection) while a message waited for its reply.
    WsClosed,
    /// An event stream (Server-Sent Events) stalled: no event within `--event-timeout` of the
    /// last one (or, before the first, of the send). Not a missing `[DONE]`: the server went
    /// quiet mid-stream.
    SseStalled,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 27] = [
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
        ErrorKind::H2RefusedStream,
        ErrorKind::H2Reset,
        ErrorKind::H2Goaway,
        ErrorKind::H2Protocol,
        ErrorKind::QuicHandshake,
        ErrorKind::QuicTimeout,
        ErrorKind::QuicClosed,
        ErrorKind::QuicProtocol,
        ErrorKind::H3StreamReset,
        ErrorKind::H3Protocol,
        ErrorKind::Lua,
        ErrorKind::SseNoDone,
        ErrorKind::GrpcMalformed,
        ErrorKind::WsHandshake,
        ErrorKind::WsClosed,
        ErrorKind::SseStalled,
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
            ErrorKind::H2RefusedStream => "h2_refused_stream",
            ErrorKind::H2Reset => "h2_reset",
            ErrorKind::H2Goaway => "h2_goaway",
            ErrorKind::H2Protocol => "h2_protocol",
            ErrorKind::QuicHandshake => "quic_handshake",
            ErrorKind::QuicTimeout => "quic_timeout",
            ErrorKind::QuicClosed => "quic_closed",
            ErrorKind::QuicProtocol => "quic_protocol",
            ErrorKind::H3StreamReset => "h3_stream_reset",
            ErrorKind::H3Protocol => "h3_protocol",
            ErrorKind::Lua => "lua",
            ErrorKind::SseNoDone => "sse_no_done",
            ErrorKind::GrpcMalformed => "grpc_malformed",
            ErrorKind::WsHandshake => "ws_handshake",
            ErrorKind::WsClosed => "ws_closed",
            ErrorKind::SseStalled => "sse_stalled",
        }
    }

    /// Classifies the HTTP/2 error code (RFC 9113 section 7) a stream was reset with.
    pub fn from_h2_code(code: u32) -> ErrorKind {
        match code {
            0x7 => ErrorKind::H2RefusedStream,
            0x1 | 0x3 | 0x5 | 0x6 | 0x9 => ErrorKind::H2Protocol,
            _ => ErrorKind::H2Reset,
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

/// Error counters in a fixed table, with the first message seen for each kind as a sample.
#[derive(Clone, Debug, Default)]
pub struct ErrorTable {
    pub counts: [u64; ErrorKind::COUNT],
    /// Allocated with the first sample: a per-request-name table that never fails (most of
    /// them) costs one pointer, not a slot per kind.
    samples: Option<Box<[Option<String>; ErrorKind::COUNT]>>,
}

impl ErrorTable {
    pub fn add(&mut self, kind: ErrorKind, message: Option<&str>) {
        let i = kind.index();
        self.counts[i] += 1;
        if let Some(m) = message {
            let samples = self.samples.get_or_insert_with(Default::default);
            if samples[i].is_none() {
                samples[i] = Some(m.to_owned());
            }
        }
    }

    fn sample(&self, kind: ErrorKind) -> Option<&str> {
        self.samples.as_ref()?[kind.index()].as_deref()
    }

    /// Bytes the sample messages hold on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.samples.as_ref().map_or(0, |samples| {
            std::mem::size_of_val(&**samples)
                + samples
                    .iter()
                    .flatten()
                    .map(String::capacity)
                    .sum::<usize>()
        })
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn merge(&mut self, other: &ErrorTable) {
        for kind in ErrorKind::ALL {
            let i = kind.index();
            self.counts[i] += other.counts[i];
            if let Some(m) = other.sample(kind) {
                let samples = self.samples.get_or_insert_with(Default::default);
                if samples[i].is_none() {
                    samples[i] = Some(m.to_owned());
                }
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
    fn h2_reset_codes_map_to_their_documented_classes() {
        let table = [
            (0x7, ErrorKind::H2RefusedStream),
            (0x1, ErrorKind::H2Protocol),
            (0x3, ErrorKind::H2Protocol),
            (0x9, ErrorKind::H2Protocol),
            (0x2, ErrorKind::H2Reset),
            (0x8, ErrorKind::H2Reset),
            (0xb, ErrorKind::H2Reset),
            (0xff, ErrorKind::H2Reset),
        ];
        for (code, want) in table {
            assert_eq!(ErrorKind::from_h2_code(code), want, "{code:#x}");
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
                "h2_refused_stream",
                "h2_reset",
                "h2_goaway",
                "h2_protocol",
                "quic_handshake",
                "quic_timeout",
                "quic_closed",
                "quic_protocol",
                "h3_stream_reset",
                "h3_protocol",
                "lua",
                "sse_no_done",
                "grpc_malformed",
                "ws_handshake",
                "ws_closed",
                "sse_stalled"
            ]
        );
    }
}
