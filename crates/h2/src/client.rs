//! herd's side of an HTTP/2 connection.

use crate::ffi::Raw;
use crate::trim::{Sink, Trimmer};
use crate::{Events, H2Error, Settings};

/// One request as HTTP/2 sends it: the pseudo-header fields, then the header fields.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: &'a [u8],
    pub scheme: &'a [u8],
    /// The target's `host[:port]`, what HTTP/1.1 sends as `Host`.
    pub authority: &'a [u8],
    pub path: &'a [u8],
    /// Names in any case (nghttp2 lowers them); fields HTTP/2 forbids (`connection`, `host`,
    /// `keep-alive`, `transfer-encoding`, `upgrade`, ...) are left out.
    pub headers: &'a [(&'a [u8], &'a [u8])],
    pub body: &'a [u8],
    /// The body goes on after `body`: more comes with [`ClientSession::write`], which also
    /// ends it (a gRPC client stream's messages sent on a schedule, a WebSocket's frames).
    pub open: bool,
    /// RFC 8441's `:protocol` (`websocket`), with `method` CONNECT: an extended CONNECT,
    /// sent only when the server's SETTINGS offer it ([`ClientSession::connect_protocol`]).
    pub protocol: Option<&'a [u8]>,
}

impl Default for Request<'_> {
    fn default() -> Self {
        Request {
            method: b"GET",
            scheme: b"http",
            authority: b"",
            path: b"/",
            headers: &[],
            body: b"",
            open: false,
            protocol: None,
        }
    }
}

/// Header fields that mean something only to one HTTP/1.1 hop (RFC 9113 section 8.2.2); a
/// server must treat a request carrying them as malformed. `host` becomes `:authority`.
fn forbidden(name: &[u8]) -> bool {
    const HOP: [&[u8]; 6] = [
        b"connection",
        b"host",
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"upgrade",
    ];
    HOP.iter().any(|h| h.eq_ignore_ascii_case(name))
}

/// A client session: submit requests, feed it the server's bytes, take the bytes to write.
pub struct ClientSession {
    raw: Raw,
    /// The server's header blocks, decoded by herd and cut to the fields it reads before
    /// nghttp2 sees them (`trim.rs`).
    trim: Trimmer,
}

impl ClientSession {
    /// A session whose first bytes to send are the connection preface and our SETTINGS.
    pub fn new(settings: &Settings) -> Result<ClientSession, H2Error> {
        Ok(ClientSession {
            raw: Raw::new(false, settings)?,
            trim: Trimmer::default(),
        })
    }

    /// Queues a request on a new stream carrying `exchange`, returned in every event of the
    /// stream. With `keep`, its response headers and body are kept for the caller (a script
    /// reads them); without, body bytes are only counted. Returns the stream id.
    pub fn submit(
        &mut self,
        request: &Request<'_>,
        exchange: usize,
        keep: bool,
    ) -> Result<i32, H2Error> {
        if !self.raw.request_allowed() {
            return Err(H2Error::Closed);
        }
        let protocol = request.protocol.map(|p| (&b":protocol"[..], p));
        let pseudo: [(&'static [u8], &[u8]); 5] = [
            (b":method", request.method),
            (b":scheme", request.scheme),
            (b":authority", request.authority),
            (b":path", request.path),
            protocol.unwrap_or((b"", b"")),
        ];
        let pseudo = &pseudo[..4 + usize::from(protocol.is_some())];
        let te_trailers = |name: &[u8], value: &[u8]| {
            !name.eq_ignore_ascii_case(b"te") || value.eq_ignore_ascii_case(b"trailers")
        };
        let fields = request
            .headers
            .iter()
            .copied()
            .filter(|(name, value)| !forbidden(name) && te_trailers(name, value));
        let with_body = !request.body.is_empty() || request.open;
        let stream_id = self.raw.submit_request(pseudo, fields, with_body)?;
        let stream = self
            .raw
            .state()
            .streams
            .open(stream_id)
            .ok_or_else(|| H2Error::lib("submit_request2", -505))?;
        stream.exchange = exchange;
        stream.keep = keep;
        stream.head = request.method == b"HEAD";
        if with_body {
            stream.body.extend_from_slice(request.body);
        }
        stream.streaming = request.open;
        Ok(stream_id)
    }

    /// More of an open request's body (`Request::open`); `last` ends it. `Ok(false)` when the
    /// stream is gone (answered, reset).
    pub fn write(&mut self, stream_id: i32, bytes: &[u8], last: bool) -> Result<bool, H2Error> {
        let Some(stream) = self.raw.state().streams.get(stream_id) else {
            return Ok(false);
        };
        if stream.sent == stream.body.len() {
            // All sent: a long stream (a WebSocket's) keeps only what is still to go.
            stream.body.clear();
            stream.sent = 0;
        }
        stream.body.extend_from_slice(bytes);
        stream.finished |= last;
        if std::mem::take(&mut stream.deferred) {
            self.raw.resume(stream_id)?;
        }
        Ok(true)
    }

    /// Feeds bytes read from the server. What they meant is in [`ClientSession::events`].
    pub fn recv(&mut self, input: &[u8]) -> Result<(), H2Error> {
        self.raw.state().start();
        self.trim.recv(input, &mut self.raw)
    }

    /// Appends the bytes to write to `out` (frames queued by submits, acknowledgements of the
    /// server's SETTINGS and PINGs, window updates); returns how many. Writing may end
    /// streams too (requests a GOAWAY left unsent): read the events after.
    pub fn send(&mut self, out: &mut Vec<u8>) -> Result<usize, H2Error> {
        self.raw.state().start();
        self.raw.send(out)
    }

    /// What happened since the last call, in order.
    pub fn events(&mut self) -> Events<'_> {
        self.raw.state().events()
    }

    /// Gives up a stream (its deadline passed): RST_STREAM(CANCEL) is queued and the stream
    /// yields no more events, so its exchange id may be reused at once.
    pub fn cancel(&mut self, stream_id: i32) -> Result<(), H2Error> {
        if self.raw.state().streams.close(stream_id).is_some() {
            self.raw.submit_rst(stream_id, 0x8)?;
        }
        Ok(())
    }

    /// How many more streams the server takes now: its SETTINGS_MAX_CONCURRENT_STREAMS (100
    /// until its SETTINGS arrive, as nghttp2 assumes) less those open; 0 after a GOAWAY.
    pub fn capacity(&self) -> usize {
        if !self.raw.request_allowed() {
            return 0;
        }
        self.max_streams().saturating_sub(self.open_streams())
    }

    /// Whether the server's SETTINGS offer WebSockets on streams (RFC 8441's
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL); false until they arrive ([`ClientSession::settled`]).
    pub fn connect_protocol(&self) -> bool {
        self.raw.remote_connect_protocol()
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (100 until its SETTINGS arrive).
    pub fn max_streams(&self) -> usize {
        usize::try_from(self.raw.remote_max_streams()).unwrap_or(usize::MAX)
    }

    /// Whether the server's SETTINGS came: until then its stream limit is nghttp2's guess (100),
    /// and streams beyond its real limit would be refused.
    pub fn settled(&self) -> bool {
        self.raw.state_ref().settled
    }

    /// Streams submitted and not yet closed.
    pub fn open_streams(&self) -> usize {
        self.raw.state_ref().streams.live()
    }

    /// Bytes of frames written for an open stream so far (headers and data, frame headers
    /// included); 0 for a stream it does not know.
    pub fn sent(&self, stream_id: i32) -> u64 {
        self.raw
            .state_ref()
            .streams
            .peek(stream_id)
            .map_or(0, |s| s.wire_out)
    }

    /// The server's GOAWAY, if one came: (last stream id, error code).
    pub fn goaway(&self) -> Option<(i32, u32)> {
        self.raw.state_ref().goaway
    }

    /// False once the session has nothing left to read or write (after a GOAWAY both ways, or
    /// a connection error): the connection can close.
    pub fn alive(&self) -> bool {
        self.raw.alive()
    }
}

impl Sink for Raw {
    fn keep(&self, stream_id: i32) -> bool {
        self.state_ref()
            .streams
            .peek(stream_id)
            .is_some_and(|s| s.keep)
    }

    fn feed(&mut self, bytes: &[u8]) -> Result<(), H2Error> {
        self.recv(bytes)
    }

    fn header(&mut self, stream_id: i32, name: &[u8], value: &[u8]) {
        self.state().header(stream_id, name, value);
    }

    fn terminate(&mut self, code: u32) {
        self.terminate_session(code);
    }
}
