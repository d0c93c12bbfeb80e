//! What an HTTP/3 connection tells its caller: how the handshake went, what became of 0-RTT
//! requests, each request's end, and the connection's; and the bytes it lays out to send.

use herd_engine::{Failure, Response};
use std::time::Duration;

/// How the connection was set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handshake {
    /// From the first packet sent to the handshake's end.
    pub time: Duration,
    /// The TLS session of an earlier connection was resumed: the server sent no certificate.
    pub resumed: bool,
    pub early_data: EarlyData,
}

/// What became of the requests sent in 0-RTT, before the handshake's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EarlyData {
    /// None were sent: no session to resume, one whose server takes no early data, or no
    /// replayable request waiting.
    #[default]
    NotSent,
    /// The server took them: their responses may come before the handshake would have ended.
    Accepted,
    /// The server refused them: they were sent again on 1-RTT streams, counted once.
    Rejected,
}

/// What happened on the connection, in order.
#[derive(Debug)]
pub enum H3Event {
    /// The handshake finished.
    Connected(Handshake),
    /// The response to the request sent with `token` is complete.
    Done { token: usize, response: Response },
    /// The request sent with `token` got no valid response, after `received` bytes of it;
    /// `unseen` when the server cannot have acted on it (refused by GOAWAY).
    Failed {
        token: usize,
        failure: Failure,
        received: u64,
        unseen: bool,
    },
    /// An event stream's head (its last event `None`), or events of it, arrived for the
    /// request sent with `token` (the loop's wait for the next event starts over).
    Stream {
        token: usize,
        last: Option<std::time::Instant>,
    },
    /// The server granted more request streams (a MAX_STREAMS frame): requests that found the
    /// limit reached can be sent now. Nothing else may come to say so: the responses that
    /// freed the streams may have been told long before.
    StreamsAvailable,
    /// The connection is over. Every request in flight got its `Failed` first, so a caller that
    /// counts failures per request counts each one once; the failure is `None` when herd
    /// closed it itself, and is a request's failure only if no request was in flight (as when
    /// the handshake fails).
    Closed(Option<Failure>),
}

/// Bytes going out: one datagram, or `len / segment` datagrams of `segment` bytes (the last
/// may be shorter) for one GSO send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    pub len: usize,
    pub segment: Option<usize>,
}
