//! What crosses the seams: a request, the response that came back, or the failure in its
//! place. Plain data that the loop, the sessions and the transports share (no I/O here).

use herd_metrics::ErrorKind;
use std::sync::Arc;
use std::time::Instant;
pub use thin_vec::ThinVec;

/// One request: what it asks ([`Parts`], for protocols that encode it their own way: HTTP/2,
/// HTTP/3) and its HTTP/1.1 bytes, serialized once and sent as is.
#[derive(Clone, Debug)]
pub struct Request {
    /// The HTTP/1.1 bytes on the wire.
    pub bytes: Arc<[u8]>,
    /// Method, target, headers and body, as HTTP/2 and HTTP/3 encode them; `None` for a
    /// request made from bytes alone (tests, the fake transport).
    pub parts: Option<Arc<Parts>>,
    /// The same request asking the server to close the connection after its response
    /// (`Connection: close`): sent as a connection's last request (`--calls-per-conn`), so the
    /// server closes first and the TIME_WAIT lands on its side, as with ab and httperf. `None`
    /// when the request cannot carry it; the engine then closes the connection itself.
    pub closing: Option<Arc<[u8]>>,
    /// Index of the request's name in the plan's name table (0 for a plain run).
    pub name: u32,
    /// A HEAD request: the response has no body whatever its headers say.
    pub head: bool,
    /// Keep the response headers and body in [`Response`] (for checks and extraction); otherwise
    /// the body is counted and thrown away as it arrives.
    pub keep_response: bool,
    /// With `keep_response`: of the response only its `Set-Cookie` headers are read (a cookie
    /// jar, no check or extraction): a protocol may keep just those, and no body.
    pub keep_only_cookies: bool,
    /// An event-stream response is read as an LLM's tokens (`--sse llm`, a step's
    /// `stream: llm`).
    pub llm: bool,
    /// The connection's last exchange (a workload's `ws: close`): closed once it is answered.
    pub last: bool,
    /// Whether it rides its user's own WebSocket rather than any connection of the run (a
    /// workload's `ws:` steps beside its HTTP requests).
    pub socket: SocketRole,
}

/// What an exchange is to its user's own WebSocket, in a run whose other exchanges are HTTP
/// requests (a workload's `ws:` steps beside its requests). A socket is a connection of its
/// own: never shared, never carrying an HTTP request, and not counted against the cap on the
/// run's connections (a user holds its HTTP connection and its socket at once).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SocketRole {
    /// An exchange any connection of the run may carry (every one of a run without sockets,
    /// a `ws://` run's messages included).
    #[default]
    None,
    /// Opens the user's socket on a new connection ([`crate::Transport::socket`]): its bytes
    /// are the HTTP/1.1 Upgrade request, its response the server's answer (`101`, or the
    /// status that refused it). A socket the user still holds is closed first.
    Open,
    /// A message on the socket its user opened last; fails when that socket is gone.
    Message,
}

impl Request {
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Self {
        Request {
            bytes: bytes.into(),
            parts: None,
            closing: None,
            name: 0,
            head: false,
            keep_response: false,
            keep_only_cookies: false,
            llm: false,
            last: false,
            socket: SocketRole::None,
        }
    }

    /// The method, as the request line says it (`GET`).
    pub fn method(&self) -> &[u8] {
        let end = self.bytes.iter().position(|&b| b == b' ').unwrap_or(0);
        &self.bytes[..end]
    }

    /// Sending it twice does what sending it once does (RFC 9110 9.2.2): only these may be
    /// pipelined, or sent again after a connection failed under them.
    pub fn idempotent(&self) -> bool {
        matches!(
            self.method(),
            b"GET" | b"HEAD" | b"OPTIONS" | b"TRACE" | b"PUT" | b"DELETE"
        )
    }
}

/// What a request asks, apart from how HTTP/1.1 spells it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parts {
    pub method: String,
    /// `http` or `https`.
    pub scheme: String,
    /// `host[:port]`, HTTP/2's `:authority`.
    pub authority: String,
    /// Path and query, HTTP/2's `:path`.
    pub path: String,
    /// Headers other than `Host`, in order, as sent.
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// A body sent in pieces on a schedule (a gRPC client stream's messages at
    /// `--message-rate`): `body` is then ignored.
    pub paced: Option<Arc<Paced>>,
}

/// A request body's pieces, the first sent with the request and each next `interval` later;
/// the last ends the body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Paced {
    pub pieces: Vec<Vec<u8>>,
    pub interval: std::time::Duration,
}

/// A request's body, held once: most often the tail of the request's own HTTP/1.1 bytes (head,
/// then body), so HTTP/2 and HTTP/3 send the same bytes without a second copy of a large body.
#[derive(Clone, Debug, Default)]
pub struct Body {
    bytes: Option<Arc<[u8]>>,
    start: usize,
}

impl Body {
    /// The bytes of `all` from `start` on.
    pub fn tail(all: Arc<[u8]>, start: usize) -> Body {
        assert!(start <= all.len(), "a body starts inside its request");
        Body {
            bytes: Some(all),
            start,
        }
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.bytes {
            Some(b) => &b[self.start..],
            None => &[],
        }
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        **self == **other
    }
}

impl Eq for Body {}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Body {
        Body::tail(v.into(), 0)
    }
}

impl From<&[u8]> for Body {
    fn from(v: &[u8]) -> Body {
        Body::tail(v.into(), 0)
    }
}

/// What came back. Reused across exchanges on a connection to avoid allocating per request.
///
/// One is held per request in flight, ten thousand of them with as many connections, and most
/// keep no headers or body: those two are 8 bytes each where a `Vec` is 24 (a [`ThinVec`], a
/// [`crate::Buf`]).
#[derive(Clone, Debug, Default)]
pub struct Response {
    pub status: u16,
    /// When the first byte of the response arrived.
    pub first_byte: Option<Instant>,
    /// When the request was written, where its session held it back after the loop handed
    /// it over ([`crate::Session::refill_in_batches`]); `None`: written when handed over.
    pub sent: Option<Instant>,
    /// Bytes read from the connection for this response: head and body.
    pub bytes_received: u64,
    /// Bytes written for this exchange when its session encodes requests its own way (HTTP/2's
    /// frames, HPACK-compressed); 0: the request's bytes as given were what went out (no
    /// `Option`: its 8 bytes more per request in flight made room for `events`).
    pub bytes_sent: u64,
    /// Length of the decoded body (page weight).
    pub body_len: u64,
    /// Whether the connection may carry another request.
    pub keep_alive: bool,
    /// Response headers, only when the request asked to keep the response.
    pub headers: ThinVec<(String, String)>,
    /// Response body, only when the request asked to keep the response.
    pub body: crate::Buf,
    /// The events of a `text/event-stream` body, as they arrived.
    pub events: Option<Box<crate::EventStream>>,
}

impl Response {
    /// Clears the previous exchange's values, keeping allocations.
    pub fn reset(&mut self) {
        self.status = 0;
        self.first_byte = None;
        self.sent = None;
        self.bytes_received = 0;
        self.bytes_sent = 0;
        self.body_len = 0;
        self.keep_alive = false;
        self.headers.clear();
        self.body.clear();
        self.events = None;
    }
}

/// A request that got no valid response: its class and a message for the sample table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
    /// The connection proved the run cannot work as asked (the server speaks another protocol
    /// than the one asked for: HTTP/1.1 to `--http2`, plain HTTP to `https://`): every other
    /// connection would fail the same way, so the run stops and sends nothing more.
    pub mismatch: bool,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            mismatch: false,
        }
    }

    /// A failure that proves the run cannot work as asked ([`Failure::mismatch`]); `message`
    /// says what to change.
    pub fn mismatched(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure {
            mismatch: true,
            ..Failure::new(kind, message)
        }
    }

    pub fn io(err: &std::io::Error) -> Self {
        Failure::new(ErrorKind::from_io(err), err.to_string())
    }
}
