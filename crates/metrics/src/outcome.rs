use crate::ErrorKind;
use std::time::Duration;

/// The status of an answer that is not an HTTP response: a WebSocket message's reply (the
/// connection's `101` was its Upgrade's, once, not each message's). Counted as completed,
/// in no status table or class.
pub const NO_STATUS: u16 = 0;

/// How a request that got a full response is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Status below 400 and every check passed.
    Ok,
    /// Status 400 or above, or a check failed.
    Failed,
}

/// One request's time by phase (k6's `http_req_tls_handshaking`, `_waiting`, `_receiving`,
/// h2load's time for a stream), each `None` where the request had no such phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// The TLS handshake of the connection it opened (its TCP part is the rest of `connect`).
    pub tls: Option<Duration>,
    /// Waiting for a free connection or stream before it could be sent (users sharing
    /// connections, a full pipeline, HTTP/2's stream limit).
    pub blocked: Option<Duration>,
    /// From the send to the first byte of the response (time to first byte).
    pub waiting: Option<Duration>,
    /// From the first byte of the response to its last.
    pub receiving: Option<Duration>,
}

/// What happened to one request. Times are durations already: the engine turns its instants
/// (intended, sent, first byte, done) into these once, so recording is arithmetic on integers.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Index of the request name (0 for a plain `herd run URL`).
    pub name: u32,
    /// When the outcome was known, since the measurement started (places it in the timeline).
    pub at: Duration,
    /// From the intended send time to the end: what a user waited. Never shortened by queueing.
    pub latency: Duration,
    /// From the actual send to the end; `None` when the request was never written.
    pub service: Option<Duration>,
    /// Time to open the connection, when this request had to open one.
    pub connect: Option<Duration>,
    /// Where its time went, phase by phase.
    pub phases: Phases,
    /// HTTP status, 0 when no response arrived, or when what answered has none (a WebSocket
    /// message's reply: [`NO_STATUS`], counted in no status table).
    pub status: u16,
    /// A gRPC call's `grpc-status` (its trailers'), when the response was a call's and said one.
    pub grpc: Option<u8>,
    /// `Ok(verdict)` for a full response, `Err(kind)` for no valid response.
    pub result: Result<Verdict, ErrorKind>,
    /// A sample message for errors; only allocated when something failed.
    pub message: Option<String>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Response body length: the page weight.
    pub body_bytes: u64,
    /// A response read as an event stream (`text/event-stream`): when its events came.
    pub stream: Option<Box<crate::StreamOutcome>>,
}

impl Outcome {
    /// A completed exchange; convenience for tests.
    pub fn completed(
        name: u32,
        latency: Duration,
        service: Duration,
        status: u16,
        v: Verdict,
    ) -> Self {
        Outcome {
            name,
            at: latency,
            latency,
            service: Some(service),
            connect: None,
            phases: Phases::default(),
            status,
            result: Ok(v),
            message: None,
            bytes_sent: 0,
            bytes_received: 0,
            body_bytes: 0,
            stream: None,
            grpc: None,
        }
    }

    /// A request that got no valid response; convenience for tests.
    pub fn error(name: u32, latency: Duration, kind: ErrorKind) -> Self {
        Outcome {
            name,
            at: latency,
            latency,
            service: None,
            connect: None,
            phases: Phases::default(),
            status: 0,
            result: Err(kind),
            message: None,
            bytes_sent: 0,
            bytes_received: 0,
            body_bytes: 0,
            stream: None,
            grpc: None,
        }
    }
}
