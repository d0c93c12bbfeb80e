//! The server's side of an HTTP/2 connection: the mock server's, and the tests' peer.

use crate::ffi::Raw;
use crate::state::Part;
use crate::{Events, H2Error, Settings};

/// A server session. Requests arrive as [`Event::Request`](crate::Event::Request) once
/// whole; each is answered by [`ServerSession::respond`] or [`ServerSession::reset`].
pub struct ServerSession {
    raw: Raw,
}

impl ServerSession {
    pub fn new(settings: &Settings) -> Result<ServerSession, H2Error> {
        Ok(ServerSession {
            raw: Raw::new(true, settings)?,
        })
    }

    /// Feeds bytes read from the client, beginning with its connection preface.
    pub fn recv(&mut self, input: &[u8]) -> Result<(), H2Error> {
        self.raw.state().start();
        self.raw.recv(input)
    }

    pub fn send(&mut self, out: &mut Vec<u8>) -> Result<usize, H2Error> {
        self.raw.state().start();
        self.raw.send(out)
    }

    pub fn events(&mut self) -> Events<'_> {
        self.raw.state().events()
    }

    /// Answers a request: the status, header fields (lower-case names) and the body.
    pub fn respond(
        &mut self,
        stream_id: i32,
        status: u16,
        headers: &[(&[u8], &[u8])],
        body: &[u8],
    ) -> Result<(), H2Error> {
        let digits = [
            b'0' + (status / 100 % 10) as u8,
            b'0' + (status / 10 % 10) as u8,
            b'0' + (status % 10) as u8,
        ];
        let length = body.len().to_string();
        let fields = [
            (&b":status"[..], &digits[..]),
            (b"content-length", length.as_bytes()),
        ]
        .into_iter()
        .chain(headers.iter().copied());
        let with_body = !body.is_empty();
        self.raw.submit_response(stream_id, fields, with_body)?;
        if let Some(stream) = self.raw.state().streams.get(stream_id) {
            stream.body.clear();
            stream.body.extend_from_slice(body);
            stream.sent = 0;
        }
        Ok(())
    }

    /// Hands requests over in [`Part`]s as they arrive (see [`ServerSession::parts`]) instead
    /// of as one [`Event::Request`](crate::Event::Request) once whole: for answers that begin
    /// before the client is done (gRPC's client and bidirectional streams).
    pub fn stream_requests(&mut self) {
        self.raw.state().partial = true;
    }

    /// The request parts received since the last call (with [`ServerSession::stream_requests`]).
    pub fn parts(&mut self) -> std::vec::Drain<'_, Part> {
        self.raw.state().parts.drain(..)
    }

    /// Starts a response whose body is written piece by piece ([`ServerSession::write`]) and
    /// ended with trailers ([`ServerSession::finish`]): a gRPC answer, a stream of messages.
    pub fn open(
        &mut self,
        stream_id: i32,
        status: u16,
        headers: &[(&[u8], &[u8])],
    ) -> Result<(), H2Error> {
        let digits = status.to_string();
        let fields = [(&b":status"[..], digits.as_bytes())]
            .into_iter()
            .chain(headers.iter().copied());
        self.raw.submit_response(stream_id, fields, true)?;
        if let Some(stream) = self.raw.state().streams.get(stream_id) {
            stream.streaming = true;
        }
        Ok(())
    }

    /// Adds bytes to an open response's body; they go out with the next `send`. A stream the
    /// client has reset takes nothing: false.
    pub fn write(&mut self, stream_id: i32, bytes: &[u8]) -> Result<bool, H2Error> {
        let Some(stream) = self.raw.state().streams.get(stream_id) else {
            return Ok(false);
        };
        if stream.sent == stream.body.len() {
            stream.body.clear();
            stream.sent = 0;
        }
        stream.body.extend_from_slice(bytes);
        self.wake(stream_id)
    }

    /// Ends an open response: what was written, then `trailers` (names in lower case).
    pub fn finish(&mut self, stream_id: i32, trailers: &[(&[u8], &[u8])]) -> Result<bool, H2Error> {
        let Some(stream) = self.raw.state().streams.get(stream_id) else {
            return Ok(false);
        };
        stream.finished = true;
        stream.trailers = trailers
            .iter()
            .map(|(n, v)| (Box::from(*n), Box::from(*v)))
            .collect();
        self.wake(stream_id)
    }

    fn wake(&mut self, stream_id: i32) -> Result<bool, H2Error> {
        let deferred = self
            .raw
            .state()
            .streams
            .get(stream_id)
            .is_some_and(|s| std::mem::take(&mut s.deferred));
        if deferred {
            self.raw.resume(stream_id)?;
        }
        Ok(true)
    }

    /// Refuses or aborts a stream with RST_STREAM and an HTTP/2 error code.
    pub fn reset(&mut self, stream_id: i32, code: u32) -> Result<(), H2Error> {
        self.raw.submit_rst(stream_id, code)
    }

    /// Sends GOAWAY naming `last_stream_id` as the last stream this server will process:
    /// later ones are closed unanswered and the client may send them again elsewhere; earlier
    /// ones still get their answers.
    pub fn goaway(&mut self, last_stream_id: i32, code: u32) -> Result<(), H2Error> {
        self.raw.submit_goaway(last_stream_id, code)
    }

    /// Requests open (received, not yet answered and sent).
    pub fn open_streams(&self) -> usize {
        self.raw.state_ref().streams.live()
    }

    /// False once the session has nothing left to read or write: the connection can close.
    pub fn alive(&self) -> bool {
        self.raw.alive()
    }
}
