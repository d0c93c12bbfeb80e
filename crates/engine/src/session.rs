//! What the loop and a [`crate::Session`] say to each other (the trait, and the order of its
//! calls, are in `transport.rs` beside the [`crate::Transport`] it is generic over): the
//! ticket naming an exchange, the readiness a pump is given, and the notes a pump returns.

use crate::message::{Failure, Response};
use crate::protocols::{count_protocol, Negotiated, ProtocolUse, Resumption};
use std::time::Duration;

/// An exchange's name in the loop's exchange table: its slot and the slot's generation, so a
/// note about an exchange the loop already ended is told from its slot's next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    pub slot: u32,
    pub generation: u32,
}

/// What a connection's event (or its timer) says it is ready for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    pub readable: bool,
    pub writable: bool,
    /// The peer closed its side or the socket failed: read on to the end, since no further
    /// event will come.
    pub closed: bool,
    /// The instant from [`crate::Session::wake_at`] has come (QUIC's timers, the end of an HTTP/2
    /// batch's hold).
    pub timer: bool,
}

impl Ready {
    /// Only a write is wanted: a request was just submitted.
    pub const WRITE: Ready = Ready {
        readable: false,
        writable: true,
        closed: false,
        timer: false,
    };
}

/// How long opening a connection took, phase by phase (k6's `http_req_connecting` and
/// `_tls_handshaking`): reported once, with [`Note::Open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Opened {
    /// The TCP (or QUIC) connection, from `connect` to established.
    pub connect: Duration,
    /// The TLS handshake after it; `None` for plain connections.
    pub tls: Option<Duration>,
    /// The protocol it speaks, as ALPN names it (`http/1.1`, `h2`, `h3`).
    pub protocol: &'static str,
    /// Whether the TLS handshake resumed a session and sent early data, where the protocol
    /// tells (HTTP/3); `None` elsewhere.
    pub resumption: Option<Resumption>,
    /// What its TLS handshake settled on; `None` for plain connections.
    pub negotiated: Option<Negotiated>,
    /// A protocol's own opening handshake after TLS (a WebSocket's Upgrade: the request out to
    /// the `101` in): counted as the protocol's handshake (`ProtocolUse::handshakes`) apart
    /// from connect and TLS.
    pub upgrade: Option<Duration>,
}

/// Adds one more handshake of `protocol` (a socket on an open connection: [`Note::Handshake`])
/// to its row of `rows`.
pub(crate) fn count_socket_handshake(
    rows: &mut Vec<ProtocolUse>,
    protocol: &'static str,
    took: Duration,
) {
    count_protocol(rows, protocol, 0, 0);
    if let Some(row) = rows.iter_mut().find(|row| row.protocol == protocol) {
        row.handshakes.count(Resumption::default(), took);
    }
}

/// Adds how connection `o` opened to its protocol's row of `rows`, when its protocol tells.
pub(crate) fn count_handshake(rows: &mut Vec<ProtocolUse>, o: &Opened) {
    let Some(r) = o.resumption else { return };
    count_protocol(rows, o.protocol, 0, 0);
    if let Some(row) = rows.iter_mut().find(|row| row.protocol == o.protocol) {
        row.handshakes.count(
            r,
            o.upgrade.unwrap_or(o.connect + o.tls.unwrap_or_default()),
        );
    }
}

/// What a [`crate::Session::pump`] came to, in the order it happened.
#[derive(Debug)]
pub enum Note {
    /// The connection finished opening and carries exchanges from now on.
    Open(Opened),
    /// The first byte of this exchange's response arrived (at the `now` of the pump).
    FirstByte(Ticket),
    /// This exchange has its full response. `keep_alive` false in it means the server closes
    /// the connection: the session takes no more exchanges ([`crate::Session::room`] is 0).
    Response(Ticket, Response),
    /// An event stream's head (its last event `None`), or events of it, arrived for this
    /// exchange: the instant of its last counted event. Said only when the head is new or
    /// events counted in the read, so the loop's wait for the next event (`--event-timeout`)
    /// starts over.
    Stream(Ticket, Option<std::time::Instant>),
    /// This exchange got no valid response.
    Failed(Failed),
    /// What a WebSocket's connection told apart from its messages (a pong, the server's
    /// close, a refused Upgrade): counted once, from the end of the warm-up on.
    Socket(herd_metrics::SocketEvent),
    /// One more of its protocol's handshakes on the open connection, this long: a WebSocket
    /// opened on an HTTP/2 stream (RFC 8441's extended CONNECT, its HEADERS out to the `200`
    /// in), each socket's own. Counted in the connection's protocol row
    /// (`ProtocolUse::handshakes`), as a WebSocket's Upgrade is with its [`Opened`].
    Handshake(Duration),
    /// The connection is finished (closed by the server, failed, or closed after the server
    /// said it would): every ticket was reported before this note. Comes once, last.
    Closed,
}

/// An exchange that got no valid response, its class and how far it got.
#[derive(Debug)]
pub struct Failed {
    pub ticket: Ticket,
    pub failure: Failure,
    /// Bytes of its response received before it failed.
    pub received: u64,
    /// The server cannot have acted on it (never written, refused by HTTP/2's GOAWAY above its
    /// last stream, or after a response that announced the close): safe to send again on
    /// another connection, where it is counted once.
    pub unseen: bool,
    /// Bytes written for it where the protocol frames it its own way (HTTP/2's frames);
    /// `None`: its own bytes, as HTTP/1.1 writes them.
    pub sent: Option<u64>,
}
