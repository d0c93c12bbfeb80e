//! HTTP/2 sessions for herd's readiness loop, on nghttp2 (h2load's own engine).
//!
//! A session is sans-IO: bytes read from the socket go in with `recv`, which returns what
//! happened (statuses, body bytes, ends of streams, GOAWAY) as [`Event`]s; bytes to write are
//! appended to the connection's buffer by `send`. Nothing here reads a clock, owns a socket or
//! wakes anyone, so the engine's one loop drives it like an HTTP/1.1 connection with a wider
//! window. [`ClientSession`] is herd's side; [`ServerSession`] is the mock server's (and the
//! tests').
//!
//! Per-stream bookkeeping lives in herd's own table indexed by stream id (`streams.rs`); the
//! exchange id a stream carries comes back in every event, so the caller needs no map.
//!
//! ```
//! use herd_h2::{ClientSession, Event, Request, ServerSession, Settings, StreamEnd};
//!
//! let mut client = ClientSession::new(&Settings::default())?;
//! let mut server = ServerSession::new(&Settings::default())?;
//! let request = Request { authority: b"example.test", path: b"/hello", ..Request::default() };
//! client.submit(&request, 7, false)?;
//!
//! let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
//! client.send(&mut to_server)?;
//! server.recv(&to_server)?;
//! let asked: Vec<i32> = server
//!     .events()
//!     .events
//!     .filter_map(|e| match e { Event::Request { stream_id, .. } => Some(stream_id), _ => None })
//!     .collect();
//! for stream_id in asked {
//!     server.respond(stream_id, 200, &[], b"hi")?;
//! }
//! server.send(&mut to_client)?;
//! client.recv(&to_client)?;
//! let events: Vec<Event> = client.events().events.collect();
//! assert!(events.contains(&Event::Status { exchange: 7, status: 200 }));
//! let done = events.iter().find_map(|e| match e {
//!     Event::Closed { exchange: 7, end, sent, .. } => Some((*end, *sent)),
//!     _ => None,
//! });
//! let (end, sent) = done.expect("stream 7 closed");
//! assert_eq!(end, StreamEnd::Complete);
//! assert_eq!(sent, to_server.len() as u64, "every byte written is some stream's");
//! # Ok::<(), herd_h2::H2Error>(())
//! ```

mod client;
mod decoder;
mod error;
mod ffi;
pub mod frame;
mod hpack;
pub mod huffman;
mod pool;
mod server;
mod state;
mod streams;
mod trim;

pub use client::{ClientSession, Request};
pub use error::{code_name, H2Error};
pub use hpack::Inflater;
pub use server::ServerSession;
pub use state::Part;

/// What a session offers its peer. The defaults are h2load's (`-w 30 -W 30`): windows so large
/// that flow control never holds a response back on loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// SETTINGS_INITIAL_WINDOW_SIZE: bytes the peer may send on one stream before we update.
    pub stream_window: u32,
    /// The connection's window, shared by all streams.
    pub connection_window: u32,
    /// SETTINGS_MAX_CONCURRENT_STREAMS we announce: streams the peer may open toward us (a
    /// server's limit on requests; a client's on pushes, which herd refuses anyway).
    pub max_concurrent_streams: u32,
    /// A server's SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441): it takes extended CONNECT,
    /// WebSockets on streams (`:protocol websocket`, handed over among a request's fields).
    pub connect_protocol: bool,
}

/// How much of a request body a server session keeps for the caller (an echo answers with it);
/// the rest is counted and dropped.
pub const KEPT_BODY: usize = 1 << 20;

/// Largest window HTTP/2 allows (2^31 - 1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            stream_window: (1 << 30) - 1,
            connection_window: (1 << 30) - 1,
            max_concurrent_streams: 100,
            connect_protocol: false,
        }
    }
}

/// What a session saw, in order (see [`Events`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The final (non-1xx) status of a response.
    Status { exchange: usize, status: u16 },
    /// A response header field, only for streams submitted with `keep` (and an event
    /// stream's `content-type`).
    Header {
        exchange: usize,
        name: std::ops::Range<usize>,
        value: std::ops::Range<usize>,
    },
    /// Body bytes of a response; `kept` holds them only for streams submitted with `keep`,
    /// and for event streams.
    Data {
        exchange: usize,
        len: usize,
        kept: Option<std::ops::Range<usize>>,
    },
    /// A stream is over, one way or another; its exchange id is free again.
    Closed {
        exchange: usize,
        stream_id: i32,
        end: StreamEnd,
        /// Bytes written for it: its frames as they went on the wire (HPACK-compressed
        /// headers, body in DATA frames), and the connection's own frames since the last
        /// stream closed (the preface and SETTINGS go to the first).
        sent: u64,
    },
    /// The peer will take no new streams; those above `last_stream_id` were never processed.
    GoAway { last_stream_id: i32, code: u32 },
    /// Server side: a whole request arrived (headers and body).
    Request {
        stream_id: i32,
        method: Box<[u8]>,
        path: Box<[u8]>,
        /// The other header fields as `name: value\r\n` lines, names in lower case (an
        /// extended CONNECT's `:protocol: websocket` among them).
        fields: Box<[u8]>,
        /// The body's first [`KEPT_BODY`] bytes.
        body: Box<[u8]>,
        /// The body's whole length.
        body_len: usize,
    },
}

/// Events taken from a session: iterate them; their byte ranges index `kept`.
pub struct Events<'a> {
    pub events: std::vec::Drain<'a, Event>,
    pub kept: &'a [u8],
}

/// How a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The whole response arrived.
    Complete,
    /// Reset with an HTTP/2 error code (RFC 9113 section 7), by the peer's RST_STREAM or by
    /// nghttp2 on finding the peer broke the protocol on this stream.
    Reset(u32),
    /// The peer never processed it (above a GOAWAY's last stream id): safe to send again on a
    /// new connection, and no error of the server's.
    Unprocessed,
    /// The response ended with fewer or more body bytes than its `content-length` said
    /// (RFC 9113 section 8.1.1: malformed). herd checks the length itself: nghttp2's own
    /// checks of every header field (HTTP messaging) cost a tenth of a response's
    /// instructions, and this is the one of them a count relies on.
    BadLength { said: u64, got: u64 },
}
