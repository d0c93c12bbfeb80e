//! The seam between the engine and the wire, as small as wrk's `struct sock`: open a connection,
//! do one exchange on it. The engine is tested against a fake transport under a paused clock; the
//! real HTTP/1.1 + TLS transport lives in the `herd-http` crate.

use herd_metrics::ErrorKind;
use std::future::Future;
use std::sync::Arc;
use tokio::time::Instant;

/// One request, serialized once (method line, headers, body) and sent as is.
#[derive(Clone, Debug)]
pub struct Request {
    /// The bytes on the wire.
    pub bytes: Arc<[u8]>,
    /// Index of the request's name in the plan's name table (0 for a plain run).
    pub name: u32,
    /// A HEAD request: the response has no body whatever its headers say.
    pub head: bool,
    /// Keep the response headers and body in [`Response`] (for checks and extraction); otherwise
    /// the body is counted and thrown away as it arrives.
    pub keep_response: bool,
}

impl Request {
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Self {
        Request {
            bytes: bytes.into(),
            name: 0,
            head: false,
            keep_response: false,
        }
    }
}

/// What came back. Reused across exchanges on a connection to avoid allocating per request.
#[derive(Clone, Debug, Default)]
pub struct Response {
    pub status: u16,
    /// When the first byte of the response arrived.
    pub first_byte: Option<Instant>,
    /// Bytes read from the connection for this response: head and body.
    pub bytes_received: u64,
    /// Length of the decoded body (page weight).
    pub body_len: u64,
    /// Whether the connection may carry another request.
    pub keep_alive: bool,
    /// Response headers, only when the request asked to keep the response.
    pub headers: Vec<(String, String)>,
    /// Response body, only when the request asked to keep the response.
    pub body: Vec<u8>,
}

impl Response {
    /// Clears the previous exchange's values, keeping allocations.
    pub fn reset(&mut self) {
        self.status = 0;
        self.first_byte = None;
        self.bytes_received = 0;
        self.body_len = 0;
        self.keep_alive = false;
        self.headers.clear();
        self.body.clear();
    }
}

/// A request that got no valid response: its class and a message for the sample table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }

    pub fn io(err: &std::io::Error) -> Self {
        Failure {
            kind: ErrorKind::from_io(err),
            message: err.to_string(),
        }
    }
}

/// How the engine reaches the target. One instance per worker thread; futures need not be `Send`
/// because each worker runs its own single-threaded event loop.
pub trait Transport: 'static {
    type Conn: 'static;

    /// Opens a connection (TCP, then TLS for https). The engine bounds it with the request timeout
    /// and classes an overrun as `connect_timeout`.
    fn connect(&self) -> impl Future<Output = Result<Self::Conn, Failure>>;

    /// Writes `req` and reads one full response into `resp` (already reset). On `Err` the engine
    /// drops the connection; on `Ok` with `resp.keep_alive == false` too. `resp.bytes_received`
    /// must count what arrived even when the exchange fails, so a reused connection that the
    /// server had already closed (nothing received) can be told from a failed response.
    fn exchange(
        &self,
        conn: &mut Self::Conn,
        req: &Request,
        resp: &mut Response,
    ) -> impl Future<Output = Result<(), Failure>>;
}

/// Reads one response from bytes as they arrive, doing no I/O itself (sans-IO). The async
/// [`Transport`] drives it from its reads; the direct worker (`run_direct`) from its event loop.
/// One parser reads one response; make a new one per exchange with [`Codec::parser`].
pub trait Parse {
    /// Takes what it can of `bytes` (the unconsumed bytes received so far, oldest first) and
    /// returns how many it consumed and whether the response is complete. A partial head is left
    /// unconsumed: the driver appends what arrives next and feeds everything again. Bytes after
    /// a complete response belong to the next one and are left unconsumed. Fills `resp` (status,
    /// `body_len`, `keep_alive`, and headers and body when the request keeps them);
    /// `resp.bytes_received` is the driver's to count.
    fn feed(&mut self, bytes: &[u8], resp: &mut Response) -> Result<(usize, bool), Failure>;

    /// The server closed the connection with `unconsumed` bytes not taken by `feed`: `Ok` when
    /// that ends the response (a body delimited by the close), else the `eof` failure saying how
    /// far the response got.
    fn closed(&mut self, unconsumed: &[u8], resp: &mut Response) -> Result<(), Failure>;
}

/// A wire protocol as the direct worker needs it: a parser per exchange.
pub trait Codec: Send + Sync + 'static {
    type Parser: Parse;

    /// A parser for the response to `req` (a HEAD request's response has no body).
    fn parser(&self, req: &Request) -> Self::Parser;
}
